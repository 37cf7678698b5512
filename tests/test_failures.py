"""A hook that fails leaves a trace in the state folder, and doctor runs every registered
command live: through the built archive, against real stand-in servers, in a fake home."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lichhook import failures
from testkit.environment import lich_env
from testkit.servers import free_port

# An adapter that replaces the built-in Claude Code one and raises on every payload: the
# hook fails open (exit 0, nothing sent), as it did on a Python it could not run on.
RAISING_CLAUDE = """
    from lichhook import Adapter, hookimpl

    class Raising(Adapter):
        provider = "claude"

        def session_id(self, payload, environ):
            raise RuntimeError("adapter bug 42")

        def reports(self, event):
            raise RuntimeError("adapter bug 42")

    @hookimpl
    def lichhook_adapters():
        return [Raising()]
"""
PAYLOAD = json.dumps({"session_id": "s-1", "hook_event_name": "SessionStart", "cwd": "/tmp"})


def state(home: Path) -> Path:
    return home / ".local" / "state" / "lichhook"


def records(home: Path) -> list:
    return failures.recent({"XDG_STATE_HOME": str(home / ".local" / "state")}, 10_000)


def break_claude(home: Path) -> None:
    plugins = home / ".config" / "lichhook" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    (plugins / "raising.py").write_text(textwrap.dedent(RAISING_CLAUDE), encoding="utf-8")


def test_a_failing_hook_exits_0_sends_nothing_and_records_when_what_and_why(run, home, standin):
    break_claude(home)
    for event in ([], ["UserPromptSubmit"]):
        done = run("claude", *event, stdin=PAYLOAD, env=lich_env(standin))
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert standin.reports == []
    first, second = records(home)
    assert (first["provider"], first["event"]) == ("claude", None)
    assert (second["provider"], second["event"]) == ("claude", "UserPromptSubmit")
    for record in (first, second):
        assert record["error"] == "RuntimeError: adapter bug 42"
        assert record["at"].startswith("raising.py:") and record["python"].startswith("%d.%d." % sys.version_info[:2])
        assert record["when"].endswith("Z")
    # Private: only its owner reads what a hook saw go wrong.
    assert (state(home) / failures.NAME).stat().st_mode & 0o077 == 0


def test_a_hook_that_works_leaves_no_record(run, home, standin):
    done = run("claude", stdin=PAYLOAD, env=lich_env(standin))
    assert done.returncode == 0 and len(standin.wait_for(1, timeout=5)) == 1
    assert not (state(home) / failures.NAME).exists()


def test_a_hook_whose_lich_does_not_answer_records_it(run, home):
    port = free_port()  # nothing listens there: the connection is refused
    done = run("claude", stdin=PAYLOAD, env={"LICH_PORT": str(port), "LICH_TOKEN": "secret-tok",
                                             "LICH_SESSION_ID": "s"})
    assert done.returncode == 0
    (record,) = records(home)
    assert f"lich did not answer at 127.0.0.1:{port}" in record["error"]
    assert "secret-tok" not in json.dumps(record)


def test_the_records_stay_bounded_and_keep_the_newest(run, home, standin):
    """Past MAX_BYTES the file becomes failures.1.jsonl, replacing the one before: at most
    two files of about MAX_BYTES each, whatever the number of failures."""
    break_claude(home)
    folder = state(home)
    folder.mkdir(parents=True)
    old = json.dumps({"when": "2026-01-01T00:00:00Z", "provider": "old", "event": None, "error": "x" * 200}) + "\n"
    (folder / failures.OLDER).write_text(old * 400)  # an older file to be replaced
    (folder / failures.NAME).write_text(old * (failures.MAX_BYTES // len(old)))  # just under the bound
    for _ in range(2):
        assert run("claude", stdin=PAYLOAD, env=lich_env(standin)).returncode == 0
    sizes = [p.stat().st_size for p in folder.glob("failures*.jsonl")]
    assert len(sizes) == 2 and all(size <= failures.MAX_BYTES + 1024 for size in sizes)
    kept = records(home)
    assert [r["provider"] for r in kept[-2:]] == ["claude", "claude"]
    assert len(kept) < 2 * failures.MAX_BYTES // len(old) + 2


def test_the_records_stay_bounded_when_the_older_file_cannot_be_replaced(home):
    """A folder where failures.1.jsonl goes: the rotation fails every time, and the file
    is started afresh at twice MAX_BYTES rather than growing without bound."""
    environ = {"XDG_STATE_HOME": str(home / ".local" / "state")}
    folder = state(home)
    (folder / failures.OLDER).mkdir(parents=True)
    (folder / failures.OLDER / "kept").write_text("not lichhook's")
    for i in range(400):  # about 6 x MAX_BYTES of records
        failures.record(environ, "claude", "Stop", f"{i} " + "x" * failures.MAX_ERROR)
    assert (folder / failures.NAME).stat().st_size <= 2 * failures.MAX_BYTES + 1024
    assert records(home)[-1]["error"].startswith("399 ")  # the newest is there
    assert (folder / failures.OLDER / "kept").read_text() == "not lichhook's"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_no_record_goes_into_a_folder_others_can_write(home):
    """Another user who can write the state folder could plant records doctor shows as the
    user's own failures: nothing is written there until it is closed again."""
    environ = {"XDG_STATE_HOME": str(home / ".local" / "state")}
    folder = state(home)
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    failures.record(environ, "claude", "Stop", "not kept")
    assert not (folder / failures.NAME).exists()
    folder.chmod(0o700)
    failures.record(environ, "claude", "Stop", "kept")
    assert [r["error"] for r in records(home)] == ["kept"]


def test_concurrent_failures_each_leave_one_whole_line(pyz, base_env, home, standin):
    break_claude(home)
    env = dict(base_env, **lich_env(standin))
    procs = [subprocess.Popen([sys.executable, str(pyz), "claude", "Stop"], stdin=subprocess.PIPE, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(8)]
    for proc in procs:
        proc.communicate(PAYLOAD.encode(), timeout=30)
        assert proc.returncode == 0
    lines = (state(home) / failures.NAME).read_bytes().splitlines()
    assert len(lines) == 8 and all(json.loads(line)["event"] == "Stop" for line in lines)


# -- doctor runs every registration ------------------------------------------------------


def live_lines(out: str) -> list:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("run:")]


def test_doctor_runs_each_registered_command_and_sees_its_reports_arrive(run, home):
    assert run("install", "claude", "crush", "opencode").returncode == 0
    done = run("doctor", "--verbose", timeout=120)
    out = done.stdout.decode()
    assert done.returncode == 0, out
    lines = live_lines(out)
    # Claude Code: 12 hooks and its MCP server; Crush: 1 hook and its MCP server; opencode: its module.
    assert len(lines) == 16, out
    assert lines[-1].startswith("run:     11 events of a sample session, each exit 0, reports accepted")
    assert "exit 0; 1 report arrived, accepted (session-start)" in lines[0]  # Claude Code's bare SessionStart
    assert sum(" arrived, accepted (session-" in line for line in lines) == 11  # Claude Code's 10 report hooks, Crush's 1
    assert sum("reads the waits, sends nothing to lich by design" in line for line in lines) == 2
    assert sum("the MCP server answered initialize (lichhook " in line for line in lines) == 2
    assert all("exit 0" in line or "MCP server answered" in line for line in lines), out
    assert sum("; stdout as the contract asks (nothing)" in line for line in lines) == 11
    assert "Recent hook failures" in out and "none recorded" in out
    # The live runs changed nothing of the user's: no waits, titles or failures written.
    assert not (home / ".local" / "state").exists()


def test_doctor_calls_a_hook_that_sends_nothing_a_problem_and_shows_the_recorded_failure(run, home, standin):
    assert run("install", "claude").returncode == 0
    break_claude(home)
    assert run("claude", "Stop", stdin=PAYLOAD, env=lich_env(standin)).returncode == 0  # as Claude Code ran it
    done = run("doctor", "--verbose", timeout=120)
    out = done.stdout.decode()
    assert done.returncode == 1, out
    failed = [line for line in live_lines(out) if "FAILED" in line]
    assert len(failed) == 10, out  # every report hook; the waits hooks and the MCP server still work
    assert all("it recorded a failure" in line and "RuntimeError: adapter bug 42 (raising.py:" in line
               for line in failed), out
    problems = [line for line in out.splitlines() if line.startswith("problem: claude:")]
    assert len(problems) == 10 and all("would leave its harness with nothing" in line for line in problems)
    assert all("Fix: run python3 " in line and " install claude with a Python this release is tested on" in line
               for line in problems)
    # The failure of the real hook run above, recorded in the user's state folder.
    recent = out[out.index("Recent hook failures"):]
    assert "claude Stop: RuntimeError: adapter bug 42 (raising.py:" in recent
    assert len(records(home)) == 1  # doctor's own runs recorded theirs elsewhere


# An adapter that replaces the built-in Claude Code one and reports an id too long for
# the 4 KiB lich reads: the report path rightly sends nothing.
OVERSIZED_CLAUDE = """
    from lichhook import Adapter, Report, hookimpl

    class Oversized(Adapter):
        provider = "claude"

        def session_id(self, payload, environ):
            return "a" * 5000

        def reports(self, event):
            return [Report.start("a" * 5000)]

    @hookimpl
    def lichhook_adapters():
        return [Oversized()]
"""


def test_doctor_expects_no_report_the_report_path_keeps_back_for_its_size(run, home):
    assert run("install", "claude").returncode == 0
    plugins = home / ".config" / "lichhook" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "oversized.py").write_text(textwrap.dedent(OVERSIZED_CLAUDE), encoding="utf-8")
    done = run("doctor", "--verbose", timeout=120)
    out = done.stdout.decode()
    lines = live_lines(out)
    assert not [line for line in lines if "FAILED" in line], out
    assert sum("sends nothing for this sample, as the adapter decides" in line for line in lines) == 10, out


def test_doctor_no_run_only_reads_the_configs(run, home):
    assert run("install", "claude").returncode == 0
    done = run("doctor", "--verbose", "--no-run")
    assert done.returncode == 0 and live_lines(done.stdout.decode()) == []
    bad = run("doctor", "--verbose", "--sideways")
    assert bad.returncode == 2 and b"doctor takes --no-run and one of --verbose, --json" in bad.stderr
