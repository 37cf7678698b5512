"""The waits module: binding rules, refusals, mirrors, through the archive and the API."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from lichhook.waits.api import run_op
from lichhook.waits.rules import OPS
from testkit.constants import NODE
from testkit.hostile import FILE_UNSAFE_IDS, NOT_STRINGS, QUICK_FILE_UNSAFE_IDS
from testkit.waits import assert_consistent, read

BAD_SESSIONS = FILE_UNSAFE_IDS + NOT_STRINGS
BAD_NAMES = ["", "  ", "a/b", "../x", "CON", "nul.txt", ".r", "a..b", "x" * 65, "a@", "a@b@c",
             "a@bad_host", "a@-x", "a@" + "h" * 64, "r\u00e9v", None, ["r"]]


@pytest.fixture
def waits(tmp_path) -> Path:
    return tmp_path / "waits"


@pytest.fixture
def env(waits) -> dict:
    return {"LICHHOOK_WAITS_DIR": str(waits), "LICHHOOK_NODE": NODE}


def op(env: dict, name: str, by: str = "rev", session: str = "s1", **kw) -> dict:
    """The API, as the MCP server calls it."""
    return run_op(name, by=by, session=session, environ=env, **kw)


def cli(run, env: dict, *args: str) -> tuple[int, dict]:
    done = run("wait", *args, env=env)
    assert done.stderr == b"", done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, done.stdout  # exactly one JSON object
    return done.returncode, json.loads(lines[0])


def listing(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes: what 'writes nothing' is checked against.

    The lock file's bytes are left out: every op that takes the lock records its process
    id there (docs/waits.md), refused or not."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() if p.name != "store.lock" else b"(lock)"
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- binding rules, through the built archive ----------------------------------------------


def test_binding_rules_through_the_archive(run, env, waits):
    code, first = cli(run, env, "add", "--by", "rev", "--session", "s1", "--what", "CI run #12")
    assert code == 0
    assert first["ok"] is True and first["claimed"] is True
    assert (first["op"], first["name"], first["session"]) == ("add", f"rev@{NODE}", "s1")
    wait = first["wait"]
    assert list(wait) == ["id", "what", "family", "created", "watched", "said"]
    assert wait["id"] == "w1" and wait["what"] == "CI run #12" and wait["family"] is None
    assert len(wait["created"]) == 20 and wait["created"].endswith("Z") and wait["created"][10] == "T"

    # the binding holds: a matching session proceeds, another is refused naming the holder
    code, listed = cli(run, env, "list", "--by", f"rev@{NODE}", "--session", "s1")
    assert code == 0 and [w["id"] for w in listed["waits"]] == ["w1"]
    for args in (["list"], ["add", "--what", "x"], ["done", "--id", "w1"], ["said", "--id", "w1"],
                 ["watched", "--id", "w1"]):
        before = listing(waits)
        code, refused = cli(run, env, *args, "--by", "rev", "--session", "s2")
        assert code == 1 and refused["ok"] is False
        assert refused["held_by"] == "s1"
        assert "'s1'" in refused["error"] and "adopt" in refused["error"]
        assert listing(waits) == before

    # adopt takes the name over at once, even right after the holder's call
    code, adopted = cli(run, env, "adopt", "--by", "rev", "--session", "s2")
    assert code == 0
    assert adopted["previous_session"] == "s1"
    assert [w["id"] for w in adopted["waits"]] == ["w1"]

    # the earlier session is told, on its next call, who adopted the name and when
    code, told = cli(run, env, "add", "--by", "rev", "--session", "s1", "--what", "y")
    assert code == 1
    assert told["held_by"] == "s2" and told["adopted_by"] == "s2"
    assert told["adopted_at"].endswith("Z") and len(told["adopted_at"]) == 20
    assert "adopted by session 's2'" in told["error"] and told["adopted_at"] in told["error"]

    # and the new holder carries on
    code, done = cli(run, env, "done", "--by", "rev", "--session", "s2", "--id", "w1")
    assert code == 0 and done["wait"]["id"] == "w1" and done["open"] == 0
    assert_consistent(waits)


def test_adopt_back_and_chain(env, waits):
    assert op(env, "add", session="a", what="x")["ok"]
    assert op(env, "adopt", session="b")["previous_session"] == "a"
    assert op(env, "adopt", session="c")["previous_session"] == "b"
    told = op(env, "list", session="a")
    # a lost the name to b, and c holds it now: both are said
    assert told["adopted_by"] == "b" and told["held_by"] == "c" and "now held by session 'c'" in told["error"]
    assert op(env, "adopt", session="a")["previous_session"] == "c"
    assert op(env, "list", session="a")["ok"]
    again = op(env, "adopt", session="a")
    assert again["ok"] and again["previous_session"] is None  # adopting what one holds changes nothing
    assert_consistent(waits)


def test_ids_are_never_reused_and_ops_on_waits(env, waits):
    assert [op(env, "add", what=f"t{i}")["wait"]["id"] for i in range(3)] == ["w1", "w2", "w3"]
    assert op(env, "done", id="w3")["ok"]
    fourth = op(env, "add", what="t4", family="ci.build")["wait"]
    assert (fourth["id"], fourth["family"]) == ("w4", "ci.build")
    watched = op(env, "watched", id="w1", note="pid 4242")["wait"]["watched"]
    assert watched["note"] == "pid 4242" and watched["at"].endswith("Z")
    said = op(env, "said", id="w2")["wait"]
    assert said["said"]["note"] is None and said["watched"] is None
    listed = op(env, "list")["waits"]
    assert [w["id"] for w in listed] == ["w1", "w2", "w4"]  # watched and said stay open
    for name in ("done", "said", "watched"):
        before = listing(waits)
        refused = op(env, name, id="w3")  # closed already
        assert refused["ok"] is False and "'w3'" in refused["error"] and "list" in refused["error"]
        assert listing(waits) == before
    assert_consistent(waits)


@pytest.mark.parametrize("args,needle", [
    ({"op": "add"}, "needs what"),
    ({"op": "add", "what": "   "}, "needs what"),
    ({"op": "add", "what": "x" * 501}, "501 characters"),
    ({"op": "add", "what": "a\x1bb"}, "control character"),
    ({"op": "add", "what": "a\ud800b"}, "half of a character"),
    ({"op": "said", "id": "w1", "note": "\udcff"}, "note contains U+DCFF"),
    ({"op": "add", "what": "x", "family": "no spaces"}, "family"),
    ({"op": "done"}, "needs id"),
    ({"op": "done", "id": "7"}, "not a wait id"),
    ({"op": "said", "id": "w0"}, "not a wait id"),
    ({"op": "watched", "id": "w1", "note": "n" * 501}, "note"),
    ({"op": "frobnicate"}, "not an op"),
])
def test_bad_arguments_are_refused_and_write_nothing(env, waits, args, needle):
    assert op(env, "add", what="keep")["ok"]
    before = listing(waits)
    answer = run_op(args.pop("op"), by="rev", session="s1", environ=env, **args)
    assert answer["ok"] is False and needle in answer["error"]
    assert listing(waits) == before


def test_what_of_500_characters_and_unicode_are_kept(env, waits):
    what = "\u00e9" * 499 + "\n"
    assert op(env, "add", what=what)["wait"]["what"] == what
    assert read(waits / "sessions" / "s1.json")["waits"][0]["what"] == what


# ---- malformed ids and names ----------------------------------------------------------------


@pytest.mark.parametrize("name", OPS)
def test_every_op_refuses_every_malformed_session_and_writes_nothing(env, waits, name):
    assert op(env, "add", session="good", what="keep")["ok"]
    before = listing(waits)
    for bad in BAD_SESSIONS:
        # the session is checked first: even with no other argument the answer is about it
        answer = run_op(name, by="rev", session=bad, environ=env)  # type: ignore[arg-type]
        assert answer["ok"] is False, bad
        assert "session id" in answer["error"], (bad, answer)
        assert listing(waits) == before, bad


@pytest.mark.parametrize("name", OPS)
def test_every_op_refuses_every_malformed_name_and_writes_nothing(env, waits, name):
    assert op(env, "add", session="good", what="keep")["ok"]
    before = listing(waits)
    for bad in BAD_NAMES:
        answer = run_op(name, by=bad, session="s1", environ=env, what="x", id="w1")  # type: ignore[arg-type]
        assert answer["ok"] is False, bad
        assert listing(waits) == before, bad


def test_malformed_ids_through_the_archive_create_no_folder(run, env, waits):
    for name in OPS:
        for bad in QUICK_FILE_UNSAFE_IDS:
            code, answer = cli(run, env, name, "--by", "rev", "--session", bad, "--what", "x", "--id", "w1")
            assert code == 1 and answer["ok"] is False and "session id" in answer["error"]
        code, answer = cli(run, env, name, "--by", "a/b", "--session", "s1", "--what", "x", "--id", "w1")
        assert code == 1 and "name" in answer["error"]
    assert not waits.exists()


def test_a_refused_first_op_creates_nothing(env, waits):
    answer = op(env, "done", id="w1")
    assert answer["ok"] is False and "no open wait" in answer["error"]
    assert not waits.exists()


# ---- node, folder, files --------------------------------------------------------------------


def test_node_comes_from_lichhook_node_or_the_host(env, tmp_path):
    assert op({**env, "LICHHOOK_NODE": "Build-Box.Local"}, "list")["name"] == "rev@build-box.local"
    assert op(env, "list", by="rev@OtherHost", session="s2")["name"] == "rev@otherhost"
    bad = op({**env, "LICHHOOK_NODE": "bad_host"}, "list", session="s3")
    assert bad["ok"] is False and bad["error"].startswith("LICHHOOK_NODE is not usable: node 'bad_host'")
    assert "unset it" in bad["error"]  # the fix, not only the fault
    from lichhook.waits.names import host_name

    plain = {"LICHHOOK_WAITS_DIR": str(tmp_path / "other")}
    answer = op(plain, "list", session="s4")
    assert answer["ok"] and answer["name"] == f"rev@{host_name().lower()}"


def test_explicit_folder_wins_and_default_is_user_state(run, base_env, home, tmp_path):
    explicit = tmp_path / "explicit"
    answer = run_op("add", by="rev", session="s1", what="x", waits_dir=str(explicit),
                    environ={"LICHHOOK_WAITS_DIR": str(tmp_path / "env"), "LICHHOOK_NODE": NODE})
    assert answer["ok"] and (explicit / "store.json").exists() and not (tmp_path / "env").exists()
    done = run("wait", "add", "--by", "rev", "--session", "s1", "--what", "x", env={"LICHHOOK_NODE": NODE})
    assert done.returncode == 0, done.stdout
    if sys.platform.startswith("linux"):
        assert (home / ".local" / "state" / "lichhook" / "waits" / "sessions" / "s1.json").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_folder_private_and_files_not_world_readable(env, waits):
    old = os.umask(0o022)
    try:
        assert op(env, "add", what="x")["ok"]
    finally:
        os.umask(old)
    assert waits.stat().st_mode & 0o777 == 0o700
    assert (waits / "sessions").stat().st_mode & 0o777 == 0o700
    for path in waits.rglob("*"):
        if path.is_file():
            assert path.stat().st_mode & 0o077 == 0, path


def test_adopt_moves_the_mirror_files(env, waits):
    op(env, "add", session="old", what="one")
    op(env, "add", session="old", what="two", family="ci.build")
    old_file, new_file = waits / "sessions" / "old.json", waits / "sessions" / "new.json"
    assert [w["id"] for w in read(old_file)["waits"]] == ["w1", "w2"]
    assert not new_file.exists()
    answer = op(env, "adopt", session="new")
    assert answer["ok"] and answer["previous_session"] == "old"
    emptied, filled = read(old_file), read(new_file)
    assert (emptied["session"], emptied["name"], emptied["waits"]) == ("old", None, [])
    assert (filled["session"], filled["name"]) == ("new", f"rev@{NODE}")
    assert filled["waits"] == answer["waits"] and [w["id"] for w in filled["waits"]] == ["w1", "w2"]
    assert read(waits / "index.json")["names"] == [{"name": f"rev@{NODE}", "session": "new", "open": 2}]
    assert_consistent(waits)


def test_index_lists_exactly_the_names_with_open_waits(env, waits):
    op(env, "add", by="a", session="sa", what="x")
    op(env, "add", by="b", session="sb", what="x")
    op(env, "add", by="b", session="sb", what="y")
    op(env, "list", by="c", session="sc")  # claimed, no waits: not in the index
    op(env, "add", by="d@elsewhere", session="sd", what="x")
    index = read(waits / "index.json")
    assert index["node"] == NODE
    assert index["names"] == [
        {"name": f"a@{NODE}", "session": "sa", "open": 1},
        {"name": f"b@{NODE}", "session": "sb", "open": 2},
        {"name": "d@elsewhere", "session": "sd", "open": 1},
    ]
    op(env, "done", by="a", session="sa", id="w1")
    assert [n["name"] for n in read(waits / "index.json")["names"]] == [f"b@{NODE}", "d@elsewhere"]
    assert read(waits / "sessions" / "sc.json")["name"] == f"c@{NODE}"
    assert_consistent(waits)


def test_a_session_keeps_one_name(env, waits):
    assert op(env, "add", by="a", session="s", what="x")["ok"]
    refused = op(env, "list", by="b", session="s")
    assert refused["ok"] is False and refused["holds"] == f"a@{NODE}" and "one name" in refused["error"]
    assert op(env, "adopt", by="b", session="s")["ok"] is False
    op(env, "done", by="a", session="s", id="w1")
    moved = op(env, "list", by="b", session="s")  # with no open waits the old name is let go
    assert moved["ok"] and moved["released"] == f"a@{NODE}"
    assert read(waits / "sessions" / "s.json")["name"] == f"b@{NODE}"
    assert op(env, "add", by="a", session="t", what="x")["wait"]["id"] == "w2"  # ids still not reused
    assert_consistent(waits)


# ---- damage ---------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"{\"format\":1,\"names\":{\"r", b"\x00\xff", b"[]",
                                     b"{\"format\":1,\"names\":{\"r@n\":{\"session\":\"../x\"}}}"])
def test_a_corrupt_store_refuses_naming_the_file(run, env, waits, content):
    assert op(env, "add", what="x")["ok"]
    (waits / "store.json").write_bytes(content)
    before = listing(waits)
    done = run("wait", "list", "--by", "rev", "--session", "s1", env=env)
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is False and str(waits / "store.json") in answer["error"]
    assert "corrupt" in answer["error"]
    after = listing(waits)
    # The one file written: the refusal, for the hooks, which never read the store.
    assert after.pop("store.broken").decode() == answer["error"]
    assert after == before


def test_a_corrupt_mirror_or_index_is_rewritten_by_the_next_op(env, waits):
    op(env, "add", session="s1", what="x")
    op(env, "add", by="other", session="s2", what="y")
    (waits / "sessions" / "s1.json").write_text("{trunc", encoding="utf-8")
    (waits / "sessions" / "s2.json").unlink()
    (waits / "index.json").write_text("", encoding="utf-8")
    assert op(env, "list", session="s1")["ok"]  # a read-only op still mends the mirrors
    assert_consistent(waits)


def test_an_interrupted_op_is_finished_by_the_next(env, waits):
    """What a process killed mid-op leaves: the dirty mark, a temporary file, stale mirrors."""
    op(env, "add", session="old", what="x")
    store = read(waits / "store.json")
    entry = store["names"][f"rev@{NODE}"]
    entry["displaced"].append({"session": "old", "by": "new", "at": "2026-01-01T00:00:00Z"})
    entry["session"] = "new"
    (waits / "store.json").write_text(json.dumps(store), encoding="utf-8")  # the store was replaced...
    (waits / "store.dirty").write_bytes(b"")  # ...and the mirrors were not
    (waits / "sessions" / ".old.json.123.0badf00d.tmp").write_bytes(b"{\"sess")
    assert op(env, "list", by="x", session="bystander")["ok"]
    assert not (waits / "store.dirty").exists()
    assert_consistent(waits)
    assert read(waits / "sessions" / "old.json")["name"] is None


def test_a_store_moved_aside_leaves_no_mirror_listing_its_waits(env, waits):
    """A corrupt store's refusal says to move it aside: the mirrors must then follow the new store."""
    op(env, "add", by="a", session="sa", what="x")
    op(env, "add", by="b", session="sb", what="y")
    (waits / "store.json").rename(waits / "store.json.bad")
    assert op(env, "list", by="c", session="sc")["ok"]
    assert_consistent(waits)
    assert read(waits / "sessions" / "sa.json")["waits"] == []


def test_a_refused_op_still_mends_what_an_interrupted_op_left(env, waits):
    op(env, "add", by="a", session="sa", what="x")
    (waits / "store.json").rename(waits / "store.json.bad")
    # The Stop hook's advice for sa: close w1. The new store has no such wait, so the op is
    # refused; the mirror that kept the session's turn held must agree with the store anyway.
    refused = op(env, "done", by="a", session="sa", id="w1")
    assert refused["ok"] is False and "no open wait 'w1'" in refused["error"]
    assert read(waits / "sessions" / "sa.json")["waits"] == []
    assert read(waits / "index.json")["names"] == []
    # Likewise after an op killed between the store and the mirrors.
    op(env, "add", by="a", session="sa", what="x")
    store = read(waits / "store.json")
    store["names"][f"a@{NODE}"]["waits"] = []
    (waits / "store.json").write_text(json.dumps(store), encoding="utf-8")
    (waits / "store.dirty").write_bytes(b"")
    assert op(env, "list", by="a", session="other")["ok"] is False
    assert_consistent(waits)
    assert not (waits / "store.dirty").exists()


# ---- the command line -----------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    [],
    ["lst", "--by", "r", "--session", "s"],
    ["list", "--by", "r"],
    ["list", "--session", "s"],
    ["list", "--by", "r", "--session"],
    ["list", "--by", "r", "--session", "s", "--colour", "red"],
    ["list", "--by", "r", "--by", "q", "--session", "s"],
    ["add", "--by", "r", "--session", "s", "two", "words"],
])
def test_usage_errors_exit_2(run, env, waits, args):
    done = run("wait", *args, env=env)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"usage:" in done.stderr and b"Traceback" not in done.stderr
    assert not waits.exists()


def test_equals_form_and_help(run, env):
    code, answer = cli(run, env, "add", "--by=rev", "--session=s1", "--what=a=b", "--family=ci.build")
    assert code == 0 and answer["wait"]["what"] == "a=b" and answer["wait"]["family"] == "ci.build"
    done = run("wait", "--help", env=env)
    assert done.returncode == 0 and b"adopt" in done.stdout


@pytest.mark.skipif(sys.platform == "win32" or not os.path.exists("/bin/sh"), reason="closes fds in a POSIX shell")
def test_started_without_stdout_or_stderr_the_op_stands_and_the_status_says_so(pyz, base_env, env, waits):
    import subprocess

    def sh(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", "-c", 'archive="$1"; shift; "$0" "$archive" wait "$@" >&- 2>&-', sys.executable, str(pyz), *args],
                              env={**base_env, **env}, capture_output=True, timeout=30)

    assert sh("add", "--by", "rev", "--session", "s1", "--what", "x").returncode == 0
    assert [w["what"] for w in op(env, "list")["waits"]] == ["x"]
    assert sh("done", "--by", "rev", "--session", "s1", "--id", "w9").returncode == 1
    assert sh("done", "--by", "rev").returncode == 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX passes argv as bytes")
def test_text_the_command_line_cannot_decode_is_refused_by_name(run, env, waits):
    assert op(env, "add", what="keep")["ok"]
    before = listing(waits)
    code, answer = cli(run, env, "add", "--by", "rev", "--session", "s1", "--what", b"caf\xe9")  # Latin-1
    assert code == 1 and answer["error"].startswith("what contains U+DCE9, half of a character")
    assert listing(waits) == before  # not even the mark of an op cut short


def test_the_api_never_raises(env, waits):
    (waits).mkdir()
    (waits / "store.lock").mkdir()  # the lock cannot be opened
    answer = op(env, "add", what="x")
    assert answer["ok"] is False and "waits folder" in answer["error"]


@pytest.mark.parametrize("name", OPS)
def test_the_command_line_takes_every_op_the_rules_have(name):
    from lichhook.waits.cli import parse

    assert parse([name, "--by", "rev", "--session", "s1"]) == (name, {"by": "rev", "session": "s1"})


def test_an_unknown_op_is_refused_naming_every_op():
    from lichhook.waits.cli import UsageError, parse

    with pytest.raises(UsageError) as refused:
        parse(["close", "--by", "rev", "--session", "s1"])
    assert str(refused.value) == "unknown op 'close'; use one of " + ", ".join(OPS)


def test_the_usage_and_the_hooks_instructions_give_each_op_the_arguments_the_rules_give_it():
    """The hooks do without lichhook.waits.rules (it is not on their import path), so their
    instructions spell each op's arguments again, as the usage's prose does: here they are
    held to the rules' table."""
    import re

    from lichhook.waits.cli import USAGE
    from lichhook.waits.hooks.text import CLI, TOOL
    from lichhook.waits.rules import REQUIRED, TAKES

    placeholder = {"what": "TEXT", "family": "F", "id": "W", "note": "TEXT"}
    spelt = [" ".join([op, *(f"--{a} {placeholder[a]}" if a in REQUIRED else f"[--{a} {placeholder[a]}]"
                             for a in TAKES.get(op, ()))]) for op in OPS]
    assert CLI.ops == ", ".join(spelt[:-1]) + ", or " + spelt[-1]
    named = []
    for part in TOOL.ops.split(", "):  # "watched or said with id (and note if you like)"
        ops = [word for word in part.split() if word in OPS]
        taken = re.findall(r"\bwith (\w+)", part) + re.findall(r"\(and (\w+) if you like\)", part)
        assert all(tuple(taken) == TAKES.get(op, ()) for op in ops), part
        assert all(a in REQUIRED for a in re.findall(r"\bwith (\w+)", part)), part
        named += ops
    assert named == list(OPS)
    for op in OPS:
        (line,) = [line for line in USAGE.splitlines() if line.split()[:1] == [op]]
        assert re.findall(r"--(\w+)", line) == list(TAKES.get(op, ())), line
