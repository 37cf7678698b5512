"""The Claude Code SessionStart and Stop hooks, run as Claude Code runs them.

Each test starts the built archive in a subprocess with a real Claude Code payload on
stdin and a real waits folder on disk. Mirrors are written by hand in the format the
waits module publishes (docs/waits.md); the round-trip tests drive the real ``wait``
command instead, end to end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.hostile import FILE_UNSAFE_IDS, NOT_STRINGS

FAMILY_OFFER = "if this session's tool runner is granted it, otherwise start a watcher"

posix_shell = pytest.mark.skipif(sys.platform == "win32" or not os.path.exists("/bin/sh"),
                                 reason="runs the printed commands in a POSIX shell")


# ---- payloads and mirrors -------------------------------------------------------------

def start_payload(session: object = "3f6a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", source: str = "startup") -> str:
    body = {"session_id": session,
            "transcript_path": f"/home/u/.claude/projects/-home-u-proj/{session}.jsonl",
            "cwd": "/home/u/proj", "hook_event_name": "SessionStart", "source": source,
            "model": "claude-sonnet-5"}
    return json.dumps(body)


def stop_payload(session: object = "3f6a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", active: bool = False) -> str:
    body = {"session_id": session,
            "transcript_path": f"/home/u/.claude/projects/-home-u-proj/{session}.jsonl",
            "cwd": "/home/u/proj", "permission_mode": "default", "hook_event_name": "Stop",
            "stop_hook_active": active, "last_assistant_message": "Done.",
            "background_tasks": [], "session_crons": []}
    return json.dumps(body)


def a_wait(wid: str, what: str, family: str | None = None, watched: bool = False,
           said: bool = False) -> dict:
    mark = {"at": "2026-11-30T04:10:00Z", "note": "noted"}
    return {"id": wid, "what": what, "family": family, "created": "2026-11-30T04:00:00Z",
            "watched": mark if watched else None, "said": mark if said else None}


def make_folder(folder: Path) -> Path:
    """A waits folder as lichhook creates it: private, with its marker (docs/waits.md)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker = folder / "lichhook-waits.json"
    if not marker.exists():
        marker.write_text('{"lichhook": "waits", "format": 1}\n', encoding="utf-8")
    return folder


def write_session(folder: Path, session: str, name: str | None, waits: list) -> Path:
    path = make_folder(folder) / "sessions" / f"{session}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"session": session, "name": name, "waits": waits,
                                "updated": "2026-11-30T04:10:00Z"}), encoding="utf-8")
    return path


def write_index(folder: Path, names: list, node: str = "box") -> Path:
    path = make_folder(folder) / "index.json"
    path.write_text(json.dumps({"node": node, "updated": "2026-11-30T04:10:00Z",
                                "names": [{"name": n, "session": s, "open": c} for n, s, c in names]}),
                    encoding="utf-8")
    return path


class Hook:
    """One hook run: exit status, the parsed stdout object (or None) and stderr."""

    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.proc = proc
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        out = proc.stdout.decode("ascii")  # the hooks print ASCII-only JSON
        self.stderr = proc.stderr.decode("utf-8")
        if out:
            assert out.endswith("\n") and out.count("\n") == 1, out  # exactly one object
            self.out = json.loads(out)
            assert isinstance(self.out, dict)
        else:
            self.out = None

    @property
    def notice(self) -> str | None:
        """The systemMessage, after checking that stderr says the very same words."""
        if self.out is None or "systemMessage" not in self.out:
            assert self.stderr == ""
            return None
        assert self.stderr == self.out["systemMessage"] + "\n"
        return self.out["systemMessage"]

    @property
    def context(self) -> str:
        assert set(self.out) <= {"hookSpecificOutput", "systemMessage"}, self.out
        specific = self.out["hookSpecificOutput"]
        assert specific["hookEventName"] == "SessionStart"
        assert set(specific) == {"hookEventName", "additionalContext"}
        return specific["additionalContext"]

    @property
    def blocked(self) -> bool:
        if self.out is None or "decision" not in self.out:
            return False
        assert self.out["decision"] == "block" and set(self.out) == {"decision", "reason"}
        assert self.stderr == ""
        return True


@pytest.fixture
def waits(tmp_path) -> Path:
    return tmp_path / "waits"


@pytest.fixture
def session_start(run, waits):
    def go(session: object = "s-new", source: str = "startup", folder: Path | None = waits,
           **kw) -> Hook:
        args = ["claude-code", "session-start"] + ([str(folder)] if folder else [])
        return Hook(run(*args, stdin=kw.pop("stdin", None) or start_payload(session, source), **kw))
    return go


@pytest.fixture
def stop(run, waits):
    def go(session: object = "s-new", active: bool = False, folder: Path | None = waits,
           **kw) -> Hook:
        args = ["claude-code", "stop"] + ([str(folder)] if folder else [])
        return Hook(run(*args, stdin=kw.pop("stdin", None) or stop_payload(session, active), **kw))
    return go


def prefix_of(pyz: Path) -> str:
    return f'"{sys.executable}" "{pyz}"'


def adopt_line(context: str, name: str) -> str:
    """The copy-pasteable adopt call printed for ``name``."""
    lines = [ln for ln in context.splitlines() if ln.startswith(f"- {name}: ")]
    assert len(lines) == 1, context
    return lines[0].split(": ", 2)[2]


def tree(path: Path) -> list:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


# ---- SessionStart --------------------------------------------------------------------

def test_session_start_gives_the_id_and_how_to_pass_it(session_start, pyz, waits):
    waits.mkdir()
    hook = session_start("3f6a1c2e-5b7d", folder=waits)
    text = hook.context
    assert hook.notice is None
    assert "Your Claude Code session id is 3f6a1c2e-5b7d." in text
    assert (f'{prefix_of(pyz)} wait <op> --by WHO --session 3f6a1c2e-5b7d --waits-dir "{waits}"'
            in text)
    assert "claude_code_wait" in text and "session field" in text


def test_session_start_lists_own_waits_and_name(session_start, waits):
    write_session(waits, "s-1", "me@box", [
        a_wait("w1", "CI build of PR 12", "ci.build"),
        a_wait("w2", "reply from\nbob\x07", watched=True),
        a_wait("w4", "review", said=True)])
    text = session_start("s-1", source="resume").context
    assert "under the name me@box; keep using --by me@box" in text
    assert "--by me@box --session s-1" in text
    assert "- w1: CI build of PR 12 [family ci.build] (holds your turn" in text
    assert "- w2: reply from bob (watched" in text  # control characters cannot break lines
    assert "- w4: review (said" in text


def test_session_start_prints_adopt_calls_for_other_names(session_start, pyz, waits):
    write_session(waits, "s-now", "me@box", [a_wait("w1", "mine")])
    write_index(waits, [("me@box", "s-now", 1), ("old@box", "s-gone", 2),
                        ("ci-bot@box", "s-other", 5)])
    hook = session_start("s-now", source="clear")
    text = hook.context
    assert hook.notice is None
    assert "began with /clear" in text
    assert adopt_line(text, "old@box") == (
        f'{prefix_of(pyz)} wait adopt --by old@box --session s-now --waits-dir "{waits}"')
    assert "- old@box: 2 open, held by session s-gone: " in text
    assert "- ci-bot@box: 5 open" in text
    assert "- me@box:" not in text  # its own name is not offered for adoption


@pytest.mark.parametrize("source,intro", [("startup", "Other names on this node"),
                                          ("resume", "Other names on this node"),
                                          ("clear", "began with /clear"), ("fork", "is a fork")])
def test_adopt_list_is_introduced_by_source(session_start, waits, source, intro):
    write_index(waits, [("old@box", "s-gone", 2)])
    text = session_start("s-now", source=source).context
    assert intro in text and "- old@box: 2 open" in text


def test_index_entries_that_could_inject_shell_text_are_left_out(session_start, waits):
    write_index(waits, [("x; rm -rf ~@box", "s-a", 1), ("ok@box", "../../etc", 1),
                        ("fine@box", "s-b", 1), ("zero@box", "s-c", 0)])
    hook = session_start("s-now")
    assert "rm -rf" not in hook.context and "../../etc" not in hook.context
    assert "- fine@box: 1 open" in hook.context and "zero@box" not in hook.context
    assert "has 3 entries with a bad name, session or count" in hook.notice


def test_session_start_context_stays_under_claude_code_cap(session_start, waits):
    write_session(waits, "s-1", "me@box", [a_wait(f"w{i}", "x" * 500, "f" * 200) for i in range(1, 301)])
    write_index(waits, [(f"name{i:03d}@box", f"t-{i}", 9) for i in range(300)])
    text = session_start("s-1").context
    assert len(text) < 10_000
    lines = text.splitlines()
    listed_waits = [ln for ln in lines if ln.startswith("- w")]
    listed_names = [ln for ln in lines if ln.startswith("- name")]
    assert listed_waits and listed_names
    assert f"... and {300 - len(listed_waits)} more; " in text  # with the list command
    assert f"... and {300 - len(listed_names)} more names." in text


def test_session_start_with_no_waits_folder_yet_is_quiet(session_start, run, base_env):
    # Neither argument nor LICHHOOK_WAITS_DIR: the default folder, absent until the first wait.
    hook = session_start("s-1", folder=None)
    assert hook.notice is None
    assert "--session s-1" in hook.context and "--waits-dir" not in hook.context
    assert not (Path(base_env["XDG_STATE_HOME"]) / "lichhook").exists()


def test_session_start_reads_the_default_and_env_folders(session_start, base_env, tmp_path):
    default = Path(base_env["XDG_STATE_HOME"]) / "lichhook" / "waits"
    write_session(default, "s-1", "me@box", [a_wait("w1", "from the default folder")])
    assert "w1: from the default folder" in session_start("s-1", folder=None).context
    other = tmp_path / "elsewhere"
    write_session(other, "s-1", "me@box", [a_wait("w1", "from the env folder")])
    hook = session_start("s-1", folder=None, env={"LICHHOOK_WAITS_DIR": str(other)})
    assert "w1: from the env folder" in hook.context
    assert f'--waits-dir "{other}"' in hook.context


@pytest.mark.parametrize("content", [b"{not json", b"", b"\xff\xfe{}", b"[]",
                                     b'{"session": "s-1", "name": "me@box", "waits": "w1"}'])
def test_session_start_with_a_corrupt_mirror_still_gives_the_id(session_start, waits, content):
    path = write_session(waits, "s-1", "me@box", [])
    path.write_bytes(content)
    write_index(waits, [("old@box", "s-0", 1)])
    hook = session_start("s-1")
    assert "session id is s-1" in hook.context
    assert "- old@box: 1 open" in hook.context  # the index was still readable
    assert hook.notice.startswith("lichhook SessionStart hook could not read all the waits records: ")
    assert str(path) in hook.notice


def test_session_start_with_a_corrupt_index(session_start, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "mine")])
    (waits / "index.json").write_text('{"names": 3}')
    hook = session_start("s-1")
    assert "- w1: mine" in hook.context
    assert "index.json has no list of names" in hook.notice


def test_session_start_with_a_missing_named_folder(session_start, tmp_path):
    hook = session_start("s-1", folder=tmp_path / "typo")
    assert "session id is s-1" in hook.context
    assert f"the waits folder {tmp_path / 'typo'} does not exist" in hook.notice


# ---- Stop ------------------------------------------------------------------------------

def test_stop_without_waits_prints_nothing(stop, waits):
    waits.mkdir()
    hook = stop("s-1")
    assert hook.out is None and hook.stderr == ""
    write_session(waits, "s-1", "me@box", [a_wait("w1", "watched", watched=True),
                                           a_wait("w2", "said", said=True)])
    hook = stop("s-1")
    assert hook.out is None and hook.stderr == ""


def test_stop_with_no_waits_folder_yet_prints_nothing(stop):
    hook = stop("s-1", folder=None)
    assert hook.out is None and hook.stderr == ""


def test_stop_blocks_with_family_advice(stop, pyz, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI build of PR 12", "ci.build")])
    hook = stop("s-1")
    assert hook.blocked
    reason = hook.out["reason"]
    assert "- w1: CI build of PR 12" in reason
    assert f"mesh_wait on the family 'ci.build' {FAMILY_OFFER}." in reason
    p, tail = prefix_of(pyz), f'--waits-dir "{waits}"'
    lines = reason.splitlines()
    assert lines[-3:] == [
        f'- a watcher now watches it: {p} wait watched --by me@box --session s-1 --id w1 --note "how it is watched" {tail}',
        f'- you told the operator about it: {p} wait said --by me@box --session s-1 --id w1 --note "what you told them" {tail}',
        f"- it is over: {p} wait done --by me@box --session s-1 --id w1 {tail}",
    ]


def test_stop_advice_without_family_drops_it(stop, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "reply from bob")])
    hook = stop("s-1")
    assert hook.blocked
    reason = hook.out["reason"]
    assert "- w1: reply from bob\n  Start a watcher" in reason
    assert "mesh_wait" not in reason and "family" not in reason.lower()


def test_stop_lists_only_holding_waits(stop, waits):
    write_session(waits, "s-1", "me@box", [
        a_wait("w1", "held one", "ci.build"), a_wait("w2", "watched", "ci.build", watched=True),
        a_wait("w3", "said", said=True), a_wait("w5", "held two")])
    reason = stop("s-1").out["reason"]
    assert "- w1: held one" in reason and "- w5: held two" in reason
    assert "w2" not in reason and "w3" not in reason
    assert reason.count("mesh_wait") == 1
    assert "Then mark each wait, or close it (shown for w1; for w5, use that --id):" in reason
    assert reason.splitlines()[-1].startswith("- it is over: ")


def test_three_strikes_then_the_stop_goes_through(stop, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    counter = waits / "stops" / "s-1.count"
    for strike in (1, 2, 3):
        hook = stop("s-1", active=strike > 1)  # stop_hook_active does not end the refusals
        assert hook.blocked
        assert counter.read_text().strip() == str(strike)
    hook = stop("s-1", active=True)
    assert not hook.blocked
    assert hook.notice.startswith("lichhook Stop hook let this stop through after 3 refusals in a row")
    assert "w1" in hook.notice
    assert not counter.exists()
    assert stop("s-1").blocked  # a fresh count starts


def test_allowed_stop_resets_the_count(stop, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    assert stop("s-1").blocked and stop("s-1").blocked
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI", watched=True)])
    assert stop("s-1").out is None
    assert not (waits / "stops" / "s-1.count").exists()
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI"), a_wait("w2", "more")])
    assert [stop("s-1").blocked for _ in range(4)] == [True, True, True, False]


def test_counts_are_per_session(stop, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    write_session(waits, "s-2", "you@box", [a_wait("w1", "CI")])
    for _ in range(3):
        assert stop("s-1").blocked
    assert stop("s-2").blocked
    assert not stop("s-1").blocked


@pytest.mark.parametrize("obstacle", ["counter is a folder", "stops is a file"])
def test_unwritable_counter_lets_the_stop_through(stop, waits, obstacle):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    counter = waits / "stops" / "s-1.count"
    if obstacle == "counter is a folder":
        counter.mkdir(parents=True)
    else:
        counter.parent.write_text("not a folder")
    hook = stop("s-1")
    assert not hook.blocked
    assert hook.notice.startswith(f"lichhook Stop hook let this stop through: cannot count refusals in {counter}")
    assert set(hook.out) == {"systemMessage"}
    assert [p.name for p in waits.rglob("*.tmp")] == []


@pytest.mark.parametrize("content", [
    b"{not json", b"", b"\xff\xfe", b"[]", b"null",
    b'{"session": "s-1", "name": "me@box", "waits": "w1"}',
    b'{"session": "s-1", "name": "me@box", "waits": [["w1"]]}',
    b'{"session": "s-1", "name": "me@box", "waits": [{"id": "w1", "what": "x", "watched": "yes"}]}',
    b'{"session": "s-1", "name": "me@box", "waits": [{"id": "../w1", "what": "x"}]}',
    b'{"session": "s-1", "name": null, "waits": [{"id": "w1", "what": "x"}]}',
    b'{"session": "s-1", "name": "me; reboot@box", "waits": [{"id": "w1", "what": "x"}]}',
    b'{"session": "s-9", "name": "me@box", "waits": [{"id": "w1", "what": "x"}]}',
    b"[" * 100_000 + b"]" * 100_000,
], ids=lambda c: repr(c[:40]))
def test_stop_with_a_corrupt_mirror_lets_through(stop, waits, content):
    path = write_session(waits, "s-1", "me@box", [])
    path.write_bytes(content)
    hook = stop("s-1")
    assert not hook.blocked
    assert hook.notice.startswith(f"lichhook Stop hook let this stop through: {path}")
    assert not (waits / "stops").exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_stop_with_a_mirror_that_is_no_file_lets_through(stop, waits, kind):
    path = make_folder(waits) / "sessions" / "s-1.json"
    path.parent.mkdir()
    if kind == "folder":
        path.mkdir()
    elif hasattr(os, "mkfifo"):
        os.mkfifo(path)  # no writer ever comes: the hook must not wait for one
    else:
        pytest.skip("no FIFOs here")
    hook = stop("s-1", timeout=10)
    assert not hook.blocked
    assert hook.notice.startswith("lichhook Stop hook let this stop through: ") and str(path) in hook.notice


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_counter_neither_hangs_nor_stops_the_count(stop, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    counter = waits / "stops" / "s-1.count"
    counter.parent.mkdir()
    os.mkfifo(counter)
    assert stop("s-1", timeout=10).blocked
    assert counter.read_text() == "1\n"


def test_stop_with_a_missing_named_folder_says_so(stop, tmp_path):
    hook = stop("s-1", folder=tmp_path / "typo")
    assert hook.notice == f"lichhook Stop hook let this stop through: the waits folder {tmp_path / 'typo'} does not exist"


def test_stop_reads_the_default_folder(stop, pyz, base_env):
    default = Path(base_env["XDG_STATE_HOME"]) / "lichhook" / "waits"
    write_session(default, "s-1", "me@box", [a_wait("w1", "CI")])
    hook = stop("s-1", folder=None)
    assert hook.blocked
    assert hook.out["reason"].endswith(f"- it is over: {prefix_of(pyz)} wait done --by me@box --session s-1 --id w1")


# ---- both hooks: ids, payloads, usage ---------------------------------------------------

BAD_IDS = FILE_UNSAFE_IDS + NOT_STRINGS


@pytest.mark.parametrize("which", ["session-start", "stop"])
@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_bad_session_ids_are_let_through_and_build_no_path(run, tmp_path, which, bad):
    folder = tmp_path / "w"
    write_session(folder, "x", "me@box", [a_wait("w1", "CI")])  # what '../../x' might reach
    write_session(tmp_path, "x", "me@box", [a_wait("w1", "CI")])
    before = tree(tmp_path)
    payload = start_payload(bad) if which == "session-start" else stop_payload(bad)
    hook = Hook(run("claude-code", which, str(folder), stdin=payload))
    assert set(hook.out) == {"systemMessage"}
    assert "session id" in hook.notice
    assert tree(tmp_path) == before


@pytest.mark.parametrize("which", ["session-start", "stop"])
@pytest.mark.parametrize("stdin,why", [
    (b"", "stdin is empty"),
    (b"{\"session_id\": ", "stdin is not JSON"),
    (b"[\"s-1\"]", "not an object"),
    (b"\xff{}", "not UTF-8"),
    (b"{\"hook_event_name\": \"Stop\"}", "has no session_id"),
    (b" " * (1 << 20) + b"{}", "larger than"),
], ids=["empty", "cut", "array", "latin", "no id", "huge"])
def test_bad_payloads_are_let_through(run, waits, which, stdin, why):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    hook = Hook(run("claude-code", which, str(waits), stdin=stdin))
    assert set(hook.out) == {"systemMessage"}
    assert why in hook.notice


def test_stdin_left_open_does_not_hang_the_hook(pyz, base_env, waits):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    read_end, write_end = os.pipe()
    os.write(write_end, stop_payload("s-1").encode())  # and never closed, as a harness might
    try:
        proc = subprocess.Popen([sys.executable, str(pyz), "claude-code", "stop", str(waits)],
                                stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=base_env)
        os.close(read_end)
        out, _ = proc.communicate(timeout=10)
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert json.loads(out)["decision"] == "block"


@posix_shell
@pytest.mark.parametrize("which", ["session-start", "stop"])
@pytest.mark.parametrize("closed", [">&-", "2>&-", ">&- 2>&-"])
def test_a_hook_started_without_stdout_or_stderr_still_exits_0(pyz, base_env, waits, which, closed):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI")])
    payloads = [stop_payload("s-1") if which == "stop" else start_payload("s-1"), "{}"]  # a result; a notice
    for payload in payloads:
        done = subprocess.run(["/bin/sh", "-c", f'"$0" "$1" claude-code {which} "$2" {closed}',
                               sys.executable, str(pyz), str(waits)], input=payload.encode(),
                              env=base_env, capture_output=True, timeout=30)
        assert done.returncode == 0, (payload, done.stderr.decode()[-600:])
        assert b"Traceback" not in done.stderr
        if closed == "2>&-":
            assert done.stdout.startswith(b"{") and done.stdout.count(b"\n") == 1


def test_usage(run):
    bare = run("claude-code")
    assert bare.returncode == 1 and bare.stdout == b"" and b"session-start" in bare.stderr
    assert run("claude-code", "start").returncode == 1
    shown = run("claude-code", "--help")
    assert shown.returncode == 0 and b"claude-code stop [WAITS_DIR]" in shown.stdout


def test_extra_arguments_are_let_through(run, waits):
    hook = Hook(run("claude-code", "stop", str(waits), "more", stdin=stop_payload("s-1")))
    assert hook.notice.startswith("lichhook Stop hook let this stop through: it takes at most one argument")


def imported_by(argv: list, env: dict, stdin: bytes = b"") -> set:
    proc = subprocess.run(argv, input=stdin, env=env, capture_output=True)
    return {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
            if line.startswith("import time:")}


@pytest.mark.parametrize("which", ["session-start", "stop"])
def test_hot_path_imports_stay_lean(pyz, base_env, waits, which, tmp_path):
    write_session(waits, "s-1", "me@box", [a_wait("w1", "CI", "ci.build")])
    write_index(waits, [("old@box", "s-0", 1)])
    payload = start_payload("s-1") if which == "session-start" else stop_payload("s-1")
    # -S: without site, every module the hook needs shows up in the import log.
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", str(pyz), "claude-code", which,
                           str(waits)], input=payload.encode(), env=base_env, capture_output=True)
    assert proc.returncode == 0 and proc.stdout.startswith(b"{")
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert f"lichhook.waits.hooks.{'start' if which == 'session-start' else 'stop'}" in imported
    # The folder is read through the hooks' side of the module that owns it, and nothing of the ops.
    assert "lichhook.waits.view" in imported
    # json and re too: lichhook.coldstart.quickjson reads and writes plain JSON without them.
    # What running any zipapp imports before lichhook's first line is not the hook's doing
    # (3.9's runpy imports importlib.util, and with it typing and re).
    empty = tmp_path / "empty.pyz"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("__main__.py", "")
    before = imported_by([sys.executable, "-S", "-X", "importtime", str(empty)], base_env)
    for heavy in ("json", "re", "typing", "argparse", "subprocess", "sqlite3", "platformdirs", "pluggy",
                  "logging", "datetime", "lichhook.waits.rules", "lichhook.waits.api", "lichhook.waits.lock", "lichhook.waits.folder",
                  "threading", "ctypes", "http.client", "urllib.request"):
        assert heavy not in imported - before, heavy


# ---- printed commands, through a real shell ---------------------------------------------

@posix_shell
def test_printed_adopt_call_survives_the_shell(base_env, pyz, tmp_path):
    odd = tmp_path / 'dir with space $HOME `id` "q" \\b'
    odd.mkdir()
    archive = odd / "lichhook.pyz"
    shutil.copy(pyz, archive)
    python = odd / "python3"
    python.symlink_to(os.path.realpath(sys.executable))
    folder = odd / "waits"
    write_index(folder, [("old@box", "s-gone", 1)])
    proc = subprocess.run([str(python), str(archive), "claude-code", "session-start", str(folder)],
                          input=start_payload("s-now", "clear").encode(), env=base_env,
                          capture_output=True)
    command = adopt_line(Hook(proc).context, "old@box")
    words = subprocess.run(["/bin/sh", "-c", "printf '%s\\n' " + command], capture_output=True,
                           env=base_env, check=True).stdout.decode().splitlines()
    assert words == [str(python), str(archive), "wait", "adopt", "--by", "old@box",
                     "--session", "s-now", "--waits-dir", str(folder)]


def shell(command: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, timeout=30)


@posix_shell
def test_clear_round_trip_with_the_wait_command(run, session_start, stop, base_env, waits):
    env = dict(base_env, LICHHOOK_NODE="box")
    added = run("wait", "add", "--by", "me", "--session", "s-old", "--what", "CI build of PR 12",
                "--family", "ci.build", "--waits-dir", str(waits), env={"LICHHOOK_NODE": "box"})
    assert added.returncode == 0, added.stderr
    assert stop("s-old").blocked

    # /clear: a brand-new id, told about the old name and how to take it over.
    started = session_start("s-new", source="clear")
    assert "session id is s-new" in started.context
    command = adopt_line(started.context, "me@box")
    adopted = shell(command, env)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    assert json.loads(adopted.stdout)["ok"] is True

    held = stop("s-new")
    assert held.blocked and "- w1: CI build of PR 12" in held.out["reason"]
    assert "--by me@box --session s-new" in held.out["reason"]
    old = stop("s-old")
    assert old.out is None and old.stderr == ""

    # The next start of the new session sees its own waits and no one to adopt.
    again = session_start("s-new", source="compact").context
    assert "- w1: CI build of PR 12" in again and "adopt --by" not in again


@posix_shell
@pytest.mark.parametrize("mark", ["watched", "said", "done"])
def test_printed_marking_commands_release_the_turn(run, stop, base_env, waits, mark):
    env = dict(base_env, LICHHOOK_NODE="box")
    added = run("wait", "add", "--by", "me", "--session", "s-1", "--what", "reply from bob",
                "--waits-dir", str(waits), env={"LICHHOOK_NODE": "box"})
    assert added.returncode == 0, added.stderr
    hook = stop("s-1")
    assert hook.blocked
    marker = {"watched": "- a watcher now watches it: ", "said": "- you told the operator about it: ",
              "done": "- it is over: "}[mark]
    line = next(ln for ln in hook.out["reason"].splitlines() if ln.startswith(marker))
    ran = shell(line[len(marker):], env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    after = stop("s-1")
    assert after.out is None and after.stderr == ""
    assert not (waits / "stops" / "s-1.count").exists()


def test_clear_round_trip_over_hand_made_mirrors(session_start, stop, waits):
    # The same story as above, with the mirrors as the waits module leaves them.
    write_session(waits, "s-old", "me@box", [a_wait("w1", "CI build", "ci.build")])
    write_index(waits, [("me@box", "s-old", 1)])
    assert stop("s-old").blocked
    assert "wait adopt --by me@box --session s-new" in adopt_line(
        session_start("s-new", source="clear").context, "me@box")
    write_session(waits, "s-old", None, [])
    write_session(waits, "s-new", "me@box", [a_wait("w1", "CI build", "ci.build")])
    write_index(waits, [("me@box", "s-new", 1)])
    assert stop("s-new").blocked
    assert stop("s-old").out is None


# ---- the text the hooks print -------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2100), max_size=80), st.integers(4, 60))
def test_clean_makes_every_control_character_a_space_as_is_control_says(text, limit):
    from lichhook.waits.hooks.text import clean
    from lichhook.ids import is_control

    one = " ".join("".join(" " if is_control(c) else c for c in text).split())
    plain = one if len(one) <= limit else one[: limit - 3].rstrip() + "..."
    assert clean(text, limit) == plain
