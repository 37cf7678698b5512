"""The waits store under load, under SIGKILL and with damaged files on disk.

Load: many real processes run a random mix of every op (add, done, watched, said, list and
adopt races over a few shared names) on one folder, each logging every answer. Afterwards
the store is read through the store module and checked against the logs (nothing lost,
nothing duplicated, ids unique, every reported change present), and every mirror file
is compared with the store. Kill: the same workers are SIGKILLed at random moments; the
store must still open, every mirror must still be JSON, and one more op must bring the
mirrors back in line. Damage: each file replaced by garbage, a truncation, a folder, a
FIFO or a link; ops refuse naming the file or mend it, hooks let the turn through and
say why, and nothing prints a traceback.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from lichhook.waits import folder as folder_module

NODE = "testnode"
HANG_GUARD = 30
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL, FIFOs and modes are POSIX-only")
SHARED = [f"shared{i}" for i in range(4)]

# One worker: the archive's own code (the .pyz first on sys.path), started together via a
# "go" file. Before each op it logs its intent and after it the answer, one JSON line each,
# flushed, so a killed worker's log still tells which op was in flight.
WORKER = r"""
import json, os, random, sys, time
pyz, folder, go, k, count, shared, tag = sys.argv[1:8]
sys.path.insert(0, pyz)
from lichhook.waits.api import run_op
k, count, shared = int(k), int(count), shared.split(",")
rng = random.Random(f"{k}-{count}-{tag}")
env = {"LICHHOOK_WAITS_DIR": folder, "LICHHOOK_NODE": "testnode"}
own, own_session, race_session = f"own{k}", f"own-{k}", f"race-{k}"
current = rng.choice(shared)
known = {}  # name -> ids seen open

def call(op, by, session, **kw):
    print(json.dumps({"intent": op, "by": by, "session": session, **kw}), flush=True)
    answer = run_op(op, by=by, session=session, environ=env, **kw)
    print(json.dumps({"op": op, "by": by, "session": session, "args": kw, "answer": answer}), flush=True)
    if answer.get("ok"):
        name = answer["name"]
        if "waits" in answer:
            known[name] = [w["id"] for w in answer["waits"]]
        elif op == "add":
            known.setdefault(name, []).append(answer["wait"]["id"])
        elif op == "done":
            known[name] = [i for i in known.get(name, []) if i != answer["wait"]["id"]]
    return answer

while not os.path.exists(go):
    time.sleep(0.002)
i = 0
while count == 0 or i < count:
    roll = rng.random()
    if rng.random() < 0.6:
        by, session = own, own_session
    else:
        by, session = current, race_session
    full = f"{by}@testnode"
    if roll < 0.12:
        current = rng.choice(shared)
        call("adopt", current, race_session)
    elif roll < 0.45:
        call("add", by, session, what=f"{tag}k{k}-i{i}", family=rng.choice([None, "ci.build", "mesh:reply"]))
    elif roll < 0.65:
        ids = known.get(full) or [f"w{rng.randint(1, 40)}"]
        call("done", by, session, id=rng.choice(ids))
    elif roll < 0.75:
        ids = known.get(full) or [f"w{rng.randint(1, 40)}"]
        call("watched", by, session, id=rng.choice(ids), note=f"watcher k{k}")
    elif roll < 0.85:
        ids = known.get(full) or [f"w{rng.randint(1, 40)}"]
        call("said", by, session, id=rng.choice(ids), note=None)
    else:
        call("list", by, session)
    i += 1
"""


def start_workers(pyz: Path, folder: Path, go: Path, workers: int, count: int, tag: str = "") -> list:
    return [subprocess.Popen([sys.executable, "-c", WORKER, str(pyz), str(folder), str(go), str(k), str(count),
                              ",".join(SHARED), tag], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for k in range(workers)]


def collect(procs: list, killed: bool = False) -> list:
    """Every worker's log records; a killed worker's last line may be cut, and is dropped."""
    records = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        if not killed:
            assert p.returncode == 0, err.decode()[-2000:]
        assert b"Traceback" not in err, err.decode()[-2000:]
        for line in out.decode().splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                assert killed, line
    return records


def load_store(folder: Path) -> dict:
    """The store of record, read under its lock by the folder module."""
    with folder_module.for_op(str(folder)) as waits, waits.lock():
        return waits.load_store()


def read_json(path: Path) -> object:
    return json.loads(path.read_bytes().decode("utf-8"))


def assert_mirrors_are_json(folder: Path) -> None:
    read_json(folder / "index.json")
    for path in (folder / "sessions").iterdir():
        if path.name.endswith(".json"):
            doc = read_json(path)
            assert isinstance(doc, dict) and set(doc) == {"session", "name", "waits", "updated"}, path


def assert_mirrors_match(folder: Path, state: dict) -> None:
    """Every mirror says exactly what the store says."""
    bound = {}
    for name, entry in state["names"].items():
        if entry["session"]:
            assert entry["session"] not in bound, f"session {entry['session']} holds two names"
            bound[entry["session"]] = name
    files = {p.name[:-5]: p for p in (folder / "sessions").iterdir() if p.name.endswith(".json")}
    assert set(bound) <= set(files), f"no mirror for {set(bound) - set(files)}"
    for sid, path in files.items():
        doc = read_json(path)
        assert set(doc) == {"session", "name", "waits", "updated"}
        name = bound.get(sid)
        assert doc["session"] == sid
        assert doc["name"] == name, (sid, doc["name"], name)
        assert doc["waits"] == (state["names"][name]["waits"] if name else []), sid
    index = read_json(folder / "index.json")
    assert set(index) == {"node", "updated", "names"} and index["node"] == NODE
    assert index["names"] == [{"name": n, "session": e["session"], "open": len(e["waits"])}
                              for n, e in sorted(state["names"].items()) if e["waits"]]


def check_logs_against_store(records: list, state: dict, finished: bool) -> Counter:
    """Nothing reported done is missing, nothing is lost or duplicated; returns op tallies."""
    answers = [r for r in records if "answer" in r]
    in_flight = [r for r in records if "intent" in r]
    tally = Counter()
    adds: dict = {}  # (name, id) -> what
    dones: dict = {}
    marked = []
    for r in answers:
        a = r["answer"]
        tally[(r["op"], a["ok"])] += 1
        if not a["ok"]:
            assert a["error"] and "unexpected" not in a["error"] and "busy" not in a["error"], a
            continue
        assert "warning" not in a, a
        name = a["name"]
        if r["op"] == "add":
            key = (name, a["wait"]["id"])
            assert key not in adds, f"wait id {key} handed out twice"
            adds[key] = a["wait"]["what"]
        elif r["op"] == "done":
            key = (name, a["wait"]["id"])
            assert key not in dones, f"wait {key} closed twice"
            dones[key] = a["wait"]["what"]
        elif r["op"] in ("watched", "said"):
            marked.append((name, a["wait"]["id"], r["op"]))
    # Ops whose answer never came (a killed worker): they may or may not have happened.
    started = Counter((r["intent"], r["by"], r["session"]) for r in in_flight)
    answered = Counter((r["op"], r["by"], r["session"]) for r in answers)
    unanswered = started - answered
    assert finished is False or not unanswered
    maybe_done_names = {f"{by}@{NODE}" for (op, by, _), n in unanswered.items() if op == "done"}
    # Texts of adds that were started but never answered: such a wait may be in the store.
    answered_whats = {r["args"]["what"] for r in answers if r["op"] == "add"}
    unanswered_whats = {r["what"] for r in in_flight if r["intent"] == "add"} - answered_whats

    for key, what in dones.items():
        assert adds.get(key) == what or (key not in adds and what in unanswered_whats), \
            f"closed wait {key} was never added as {what!r}"
    in_store = {}
    for name, entry in state["names"].items():
        ids = [w["id"] for w in entry["waits"]]
        assert len(ids) == len(set(ids)), f"{name}: duplicate open ids"
        whats = [w["what"] for w in entry["waits"]]
        assert len(whats) == len(set(whats)), f"{name}: a wait is in the store twice"
        for w in entry["waits"]:
            in_store[(name, w["id"])] = w
        numbers = [int(i[1:]) for i in ids]
        assert all(n < entry["next"] for n in numbers), f"{name}: an id at or past next"
    for key, what in adds.items():
        if key in dones:
            assert key not in in_store, f"closed wait {key} is back in the store"
        elif key[0] in maybe_done_names and key not in in_store:
            pass  # a killed done may have closed it
        else:
            assert key in in_store and in_store[key]["what"] == what, f"wait {key} ({what!r}) was lost"
    unreported = [k for k in in_store if k not in adds]
    assert all(in_store[k]["what"] in unanswered_whats for k in unreported), f"waits nobody added: {unreported}"
    assert len(unreported) <= len(unanswered_whats)
    for name, wid, op in marked:
        if (name, wid) in in_store:
            assert in_store[(name, wid)][op] is not None, f"{op} on {name} {wid} was lost"
    if finished:
        for name, entry in state["names"].items():
            issued = sorted(int(i[1:]) for (n, i) in adds if n == name)
            assert issued == list(range(1, entry["next"])), f"{name}: ids issued are not 1..{entry['next'] - 1}"
    return tally


def run_load(pyz: Path, tmp_path: Path, workers: int, count: int) -> Counter:
    folder, go = tmp_path / "waits", tmp_path / "go"
    procs = start_workers(pyz, folder, go, workers, count)
    go.write_bytes(b"")
    records = collect(procs)
    state = load_store(folder)
    tally = check_logs_against_store(records, state, finished=True)
    assert_mirrors_match(folder, state)
    assert not [p for p in folder.rglob("*.tmp")], "temporary files left behind"
    assert not (folder / "store.dirty").exists()
    # The mix really happened: every op succeeded somewhere, and the races refused some.
    for op in ("add", "done", "watched", "said", "list", "adopt"):
        assert tally[(op, True)] > 0, (op, tally)
    assert sum(n for (op, ok), n in tally.items() if not ok) > 0, tally
    return tally


def test_eight_processes_mixed_ops(pyz, tmp_path):
    run_load(pyz, tmp_path, workers=8, count=40)


@pytest.mark.heavy
def test_thirty_two_processes_fifty_mixed_ops(pyz, tmp_path):
    tally = run_load(pyz, tmp_path, workers=32, count=50)
    assert sum(tally.values()) == 32 * 50
    print("op tallies (op, ok): count", dict(sorted(tally.items())))


@pytest.mark.heavy
def test_thirty_two_archive_processes_at_once_through_the_cli(pyz, base_env, tmp_path):
    """The command line, not the API: 32 `wait` runs started together over shared names."""
    folder = tmp_path / "waits"
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    base = [sys.executable, str(pyz), "wait"]
    for round_ in range(3):
        cmds = []
        for k in range(32):
            if k % 4 == 0:
                cmds.append(base + ["adopt", "--by", SHARED[k % 2], "--session", f"race-{k}"])
            else:
                cmds.append(base + ["add", "--by", f"own{k}", "--session", f"own-{k}", "--what", f"r{round_}-k{k}"])
        procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in cmds]
        for p in procs:
            out, err = p.communicate(timeout=HANG_GUARD * 4)
            assert p.returncode == 0 and b"Traceback" not in err, (out, err)
    state = load_store(folder)
    for k in range(32):
        if k % 4:
            assert [w["what"] for w in state["names"][f"own{k}@{NODE}"]["waits"]] == [f"r{r}-k{k}" for r in range(3)]
    assert_mirrors_match(folder, state)


# ---------------------------------------------------------------------------------------
# SIGKILL at random points
# ---------------------------------------------------------------------------------------

def kill_rounds(pyz: Path, tmp_path: Path, rounds: int, workers: int, seed: int) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "waits"
    records: list = []
    from lichhook.waits.api import run_op

    env = {"LICHHOOK_WAITS_DIR": str(folder), "LICHHOOK_NODE": NODE}
    for r in range(rounds):
        go = tmp_path / f"go{r}"
        procs = start_workers(pyz, folder, go, workers, count=0, tag=f"r{r}")  # endless until killed
        go.write_bytes(b"")
        deadline = time.monotonic() + HANG_GUARD
        while not (folder / "index.json").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.1, 0.6))
        for p in rng.sample(procs, len(procs)):
            p.send_signal(signal.SIGKILL)
            time.sleep(rng.uniform(0, 0.02))
        for p in procs:
            p.wait(timeout=HANG_GUARD)
            assert p.returncode == -signal.SIGKILL
        records += collect(procs, killed=True)
        # Straight after the kills, before any other op: the store opens and every mirror is JSON.
        state = load_store(folder)
        assert_mirrors_are_json(folder)
        # The next op brings every mirror in line with the store.
        answer = run_op("list", by=f"bystander{r}", session=f"by-{r}", environ=env)
        assert answer["ok"], answer
        state = load_store(folder)
        assert_mirrors_match(folder, state)
        assert not (folder / "store.dirty").exists()
        check_logs_against_store(records, state, finished=False)
    assert sum(1 for rec in records if "answer" in rec) > workers  # ops really ran between kills


@POSIX_ONLY
def test_processes_killed_at_random_points(pyz, tmp_path):
    kill_rounds(pyz, tmp_path, rounds=2, workers=8, seed=5)


@POSIX_ONLY
@pytest.mark.heavy
def test_processes_killed_at_random_points_many_rounds(pyz, tmp_path):
    kill_rounds(pyz, tmp_path, rounds=25, workers=16, seed=17)


@POSIX_ONLY
@pytest.mark.heavy
def test_archive_processes_killed_mid_op(pyz, base_env, tmp_path):
    """The CLI itself SIGKILLed at staggered moments of its run."""
    folder = tmp_path / "waits"
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    rng = random.Random(29)
    from lichhook.waits.api import run_op

    for r in range(12):
        procs = []
        for k in range(16):
            args = (["adopt", "--by", SHARED[k % 3], "--session", f"race-{r}-{k}"] if k % 3 == 0 else
                    ["add", "--by", f"own{k}", "--session", f"own-{k}", "--what", f"r{r}k{k}"])
            procs.append(subprocess.Popen([sys.executable, str(pyz), "wait", *args], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        time.sleep(rng.uniform(0.02, 0.15))
        for p in rng.sample(procs, len(procs)):
            p.send_signal(signal.SIGKILL)
            time.sleep(rng.uniform(0, 0.01))
        for p in procs:
            _, err = p.communicate(timeout=HANG_GUARD)
            assert b"Traceback" not in err
        if (folder / "store.json").exists():
            load_store(folder)
        if (folder / "index.json").exists():
            assert_mirrors_are_json(folder)
        assert run_op("list", by=f"probe{r}", session=f"probe-{r}", environ={
            "LICHHOOK_WAITS_DIR": str(folder), "LICHHOOK_NODE": NODE})["ok"]
        assert_mirrors_match(folder, load_store(folder))


# ---------------------------------------------------------------------------------------
# Damaged files on disk
# ---------------------------------------------------------------------------------------

@pytest.fixture
def seeded(pyz, base_env, tmp_path):
    """A waits folder with two names, one open wait each; returns (folder, env)."""
    folder = tmp_path / "waits"
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    for by, session, what in (("rev", "s1", "review"), ("ci", "s2", "build")):
        done = subprocess.run([sys.executable, str(pyz), "wait", "add", "--by", by, "--session", session,
                               "--what", what], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=HANG_GUARD)
        assert done.returncode == 0, done.stdout
    return folder, env


def wait_cli(pyz, env, *args, timeout=HANG_GUARD):
    done = subprocess.run([sys.executable, str(pyz), "wait", *args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    assert b"Traceback" not in done.stderr and b"Traceback" not in done.stdout, done.stderr[-1500:]
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, done.stdout
    return done.returncode, json.loads(lines[0])


def hook(pyz, env, which, session, timeout=HANG_GUARD):
    payload = json.dumps({"session_id": session, "hook_event_name": "Stop" if which == "stop" else "SessionStart",
                          "source": "startup", "stop_hook_active": False})
    done = subprocess.run([sys.executable, str(pyz), "claude-code", which], input=payload.encode(), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr and b"Traceback" not in done.stdout, done.stderr[-1500:]
    out = json.loads(done.stdout) if done.stdout.strip() else {}
    return out, done.stderr.decode()


STORE_DAMAGE = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "empty": lambda raw: b"",
    "garbage": lambda raw: b"\x00\xff\xfe garbage",
    "not-an-object": lambda raw: b"[1, 2, 3]",
    "wrong-format": lambda raw: raw.replace(b'"format":1', b'"format":99'),
    "waits-not-a-list": lambda raw: raw.replace(b'"waits":[', b'"waits":{"x":[').replace(b'}],"displaced"', b'}]},"displaced"', 1),
    "next-not-a-number": lambda raw: raw.replace(b'"next":2', b'"next":"2"', 1),
    "hostile-session": lambda raw: raw.replace(b'"session":"s1"', b'"session":"../../x"', 1),
    "nested-too-deep": lambda raw: b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("damage", sorted(STORE_DAMAGE))
def test_a_damaged_store_is_refused_by_every_op_naming_it(pyz, seeded, damage):
    folder, env = seeded
    store = folder / "store.json"
    store.write_bytes(STORE_DAMAGE[damage](store.read_bytes()))
    before = store.read_bytes()
    ops = [["list"], ["add", "--what", "more"], ["done", "--id", "w1"], ["watched", "--id", "w1"],
           ["said", "--id", "w1"], ["adopt"]]
    for op in ops:
        code, answer = wait_cli(pyz, env, op[0], "--by", "rev", "--session", "s1", *op[1:])
        assert code == 1 and answer["ok"] is False, (damage, op, answer)
        assert str(store) in answer["error"], answer["error"]
    assert store.read_bytes() == before, "a refused op overwrote the damaged store (its waits would be lost)"


def test_a_damaged_store_does_not_wedge_the_hooks(pyz, seeded):
    folder, env = seeded
    store = folder / "store.json"
    store.write_bytes(store.read_bytes()[:20])
    # The hooks read only the mirrors, which still hold the last known waits. The Stop hook
    # may refuse a stop for the open wait, but never more than three times in a row: the
    # session cannot close it while the store is refused, so the turn must not be wedged.
    outs = [hook(pyz, env, "stop", "s1")[0] for _ in range(4)]
    assert outs[3].get("decision") != "block" and "let this stop through" in outs[3].get("systemMessage", ""), outs
    out, _ = hook(pyz, env, "session-start", "s1")
    assert "review" in out["hookSpecificOutput"]["additionalContext"]


def test_once_an_op_finds_the_store_damaged_the_hooks_let_through_saying_why(pyz, seeded):
    folder, env = seeded
    store = folder / "store.json"
    good = store.read_bytes()
    store.write_bytes(good[:20])
    # The model follows the Stop hook's advice; the op is refused for the store...
    code, answer = wait_cli(pyz, env, "done", "--by", "rev", "--session", "s1", "--id", "w1")
    assert code == 1 and str(store) in answer["error"]
    # ...so holding the turn again would only ask for more refused commands.
    out, err = hook(pyz, env, "stop", "s1")
    assert out.get("decision") is None, out
    assert out["systemMessage"] == err.rstrip("\n")
    assert "let this stop through" in err and answer["error"] in err
    out, err = hook(pyz, env, "session-start", "s1")
    assert answer["error"] in out["systemMessage"]
    assert answer["error"] in out["hookSpecificOutput"]["additionalContext"]
    # Once the store loads again, the waits hold the turn again.
    store.write_bytes(good)
    code, answer = wait_cli(pyz, env, "list", "--by", "rev", "--session", "s1")
    assert code == 0, answer
    out, err = hook(pyz, env, "stop", "s1")
    assert out.get("decision") == "block" and err == ""
    out, err = hook(pyz, env, "session-start", "s1")
    assert "systemMessage" not in out and err == ""


def test_a_store_that_is_a_folder_is_refused(pyz, seeded):
    folder, env = seeded
    store = folder / "store.json"
    store.unlink()
    store.mkdir()
    code, answer = wait_cli(pyz, env, "add", "--by", "rev", "--session", "s1", "--what", "x")
    assert code == 1 and str(store) in answer["error"]
    assert store.is_dir()


MIRROR_DAMAGE = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:17]),
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(b"\xff\xfe\x00garbage"),
    "json-null": lambda p: p.write_bytes(b"null"),
    "wrong-shape": lambda p: p.write_bytes(b'{"session": 5, "name": [], "waits": "many"}'),
    "deep": lambda p: p.write_bytes(b"[" * 100_000),
    "huge": lambda p: p.write_bytes(b'{"pad": "' + b"x" * (9 << 20) + b'"}'),
    "folder": lambda p: (p.unlink(), p.mkdir()),
    "deleted": lambda p: p.unlink(),
}


def mirror_path(folder: Path, which: str) -> Path:
    return folder / "index.json" if which == "index" else folder / "sessions" / "s1.json"


@pytest.mark.parametrize("which", ["session", "index"])
@pytest.mark.parametrize("damage", sorted(MIRROR_DAMAGE))
def test_a_damaged_mirror_lets_hooks_through_and_the_next_op_mends_it(pyz, seeded, which, damage):
    folder, env = seeded
    path = mirror_path(folder, which)
    MIRROR_DAMAGE[damage](path)
    # Hooks: exit 0, no traceback; a damaged own mirror lets Stop through and says why.
    out, err = hook(pyz, env, "stop", "s1")
    if which == "session" and damage not in ("deleted",):
        assert out.get("decision") != "block", (damage, out)
        assert str(path) in out.get("systemMessage", "") and str(path) in err, (damage, out, err)
    out, err = hook(pyz, env, "session-start", "s1")
    assert "hookSpecificOutput" in out
    if damage != "deleted":
        assert str(path) in out.get("systemMessage", ""), (damage, out)
    # The next op, even a read-only one, mends it from the store; or, where it cannot
    # replace the damaged file, says so naming the file and keeps the op.
    code, answer = wait_cli(pyz, env, "list", "--by", "rev", "--session", "s1")
    if damage == "folder":
        # A folder cannot be replaced by a file: the op refuses, naming what is in the way.
        assert code == 1 and f"{path}: Is a directory" in answer["error"] or \
            f"{path}:" in answer["error"], answer
        code, answer = wait_cli(pyz, env, "add", "--by", "rev", "--session", "s1", "--what", "kept")
        assert code == 0 and answer["ok"] and str(path) in answer["warning"], answer  # recorded, said why
        return
    assert code == 0 and answer["ok"] and [w["what"] for w in answer["waits"]] == ["review"], answer
    assert_mirrors_match(folder, load_store(folder))
    out, _ = hook(pyz, env, "stop", "s1")
    assert out.get("decision") == "block"  # with the mirror mended the open wait holds the turn again


@POSIX_ONLY
@pytest.mark.parametrize("which", ["session", "index"])
def test_a_fifo_in_place_of_a_mirror_hangs_nothing(pyz, seeded, which):
    folder, env = seeded
    path = mirror_path(folder, which)
    path.unlink()
    os.mkfifo(path)
    start = time.monotonic()
    out, err = hook(pyz, env, "stop", "s1")
    out, err = hook(pyz, env, "session-start", "s1")
    assert time.monotonic() - start < 10
    start = time.monotonic()
    code, answer = wait_cli(pyz, env, "list", "--by", "rev", "--session", "s1", timeout=HANG_GUARD)
    assert time.monotonic() - start < 10, "a FIFO mirror wedged the op (and the store's lock with it)"
    assert answer["ok"], answer
    # The lock was not left held: another op gets through at once.
    code, answer = wait_cli(pyz, env, "add", "--by", "ci", "--session", "s2", "--what", "after fifo")
    assert code == 0 and answer["ok"], answer


@POSIX_ONLY
@pytest.mark.parametrize("which", ["session", "index"])
def test_a_mirror_linked_elsewhere_is_replaced_not_followed(pyz, seeded, tmp_path, which):
    folder, env = seeded
    victim = tmp_path / "victim.json"
    victim.write_text('{"keep": "me"}')
    path = mirror_path(folder, which)
    path.unlink()
    path.symlink_to(victim)
    code, answer = wait_cli(pyz, env, "add", "--by", "rev", "--session", "s1", "--what", "second")
    assert code == 0 and answer["ok"]
    assert victim.read_text() == '{"keep": "me"}'
    assert not path.is_symlink()
    assert_mirrors_match(folder, load_store(folder))


@POSIX_ONLY
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_store_is_refused_naming_it(pyz, seeded):
    folder, env = seeded
    store = folder / "store.json"
    store.chmod(0)
    try:
        code, answer = wait_cli(pyz, env, "list", "--by", "rev", "--session", "s1")
        assert code == 1 and str(store) in answer["error"]
    finally:
        store.chmod(0o600)


def test_leftover_dirty_mark_and_temporaries_are_cleaned(pyz, seeded):
    folder, env = seeded
    (folder / "store.dirty").write_bytes(b"")
    # Temporaries as write_atomic names them, for files only an op under the lock writes.
    (folder / f".store.json.{os.getpid()}.deadbeef.tmp").write_bytes(b'{"half')
    (folder / "sessions" / f".x.json.{os.getpid()}.deadbeef.tmp").write_bytes(b'{"half')
    (folder / "sessions" / "s1.json").write_bytes(b'{"half')
    code, answer = wait_cli(pyz, env, "list", "--by", "ci", "--session", "s2")
    assert code == 0 and answer["ok"]
    assert not list(folder.rglob("*.tmp")) and not (folder / "store.dirty").exists()
    assert_mirrors_match(folder, load_store(folder))
