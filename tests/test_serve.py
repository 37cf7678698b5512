"""``lichhook <provider> --serve``: the built archive, one process for a harness's events,
each a line on its stdin, against the stand-in (tests/test_install_js.py drives it from
the real modules)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from lichhook.serve import Inbox
from testkit.environment import lich_env

PAYLOADS = Path(__file__).parent / "payloads"
OPENCODE_SID = "ses_dd13b4d40ffe3aYyIuLUoqsjmq"


def payload(harness: str, name: str) -> dict:
    return json.loads((PAYLOADS / harness / f"{name}.json").read_text(encoding="utf-8"))["payload"]


def line(event, body) -> bytes:
    return json.dumps({"event": event, "payload": body}).encode() + b"\n"


def serve(pyz: Path, provider: str, env: dict, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-I", "-S", str(pyz), provider, "--serve"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def said(report) -> tuple:
    assert report.status == 204, (report.status, report.verdict, report.body)
    a = report.accepted
    if report.contract == "session-start":
        return ("start", a["provider_session_id"])
    if report.contract == "session-state":
        return (a["state"], a["tool"] or a["reason"], json.loads(report.body).get("provider_session_id"))
    if report.contract == "session-title":
        return ("title", a["title"])
    return (report.contract,)


def test_each_line_is_reported_once_in_order_and_stdin_ending_ends_it(pyz, base_env, standin, tmp_path):
    asked = payload("opencode", "permission.asked")
    asked["properties"]["sessionID"] = OPENCODE_SID
    question = {"type": "question.v2.asked", "properties": {"sessionID": OPENCODE_SID, "questions": [
        {"header": "Pick one", "question": "Which?"}]}, "directory": "/home/u/proj"}
    lines = [line("session.created", payload("opencode", "session.created")),
             line("session.status", payload("opencode", "session.status-busy")),
             b"not json\n", b'{"event": 1, "payload": {}}\n', b"\n",
             line("tool.execute.before", payload("opencode", "tool.execute.before-bash")),
             line("permission.v2.asked", dict(asked, type="permission.v2.asked")),
             line("question.v2.asked", question),
             line("tool.execute.after", payload("opencode", "tool.execute.after-bash")),
             line("session.status", payload("opencode", "session.status-idle"))]
    proc = serve(pyz, "opencode", dict(base_env, **lich_env(standin)))
    out, err = proc.communicate(b"".join(lines), timeout=30)
    assert (proc.returncode, out) == (0, b""), err
    assert [said(r) for r in standin.wait_for(7, timeout=5)] == [
        ("start", OPENCODE_SID), ("busy", "", OPENCODE_SID), ("busy", "bash", OPENCODE_SID),
        ("waiting", "bash: touch asked.txt", OPENCODE_SID), ("waiting", "Pick one", OPENCODE_SID),
        ("busy", "", OPENCODE_SID), ("done", "", OPENCODE_SID)]


def test_omp_events_without_a_session_id_report_and_a_title_goes_once_per_change(pyz, base_env, standin, tmp_path):
    """What lich-plugin's module reports of them, too: busy, the tool, touched, the title,
    done, none with an id; a session start needs one. A tool call with no tool name says
    nothing. The title goes once per change even with no state folder to keep it in."""
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder would be")
    bare = {"session_id": None, "cwd": "/home/u/proj", "session_file": None, "parent_session": None}
    lines = [line(t, dict(bare, type=t, **extra)) for t, extra in [
        ("session_start", {}), ("input", {}), ("turn_start", {}), ("tool_call", {}),
        ("tool_call", {"toolName": "bash", "input": {"command": "echo hi > f.txt"}}),
        ("tool_result", {"toolName": "bash", "input": {"command": "echo hi > f.txt"}}),
        ("session_stop", {"session_name": "Say hi"}), ("turn_start", {"session_name": "Say hi"}),
        ("session_stop", {"session_name": "Say hi"}), ("turn_start", {"session_name": "Say hi again"})]]
    proc = serve(pyz, "omp", dict(base_env, **lich_env(standin), XDG_STATE_HOME=str(blocked)))
    out, err = proc.communicate(b"".join(lines), timeout=30)
    assert proc.returncode == 0, err
    assert [said(r) for r in standin.wait_for(10, timeout=5)] == [
        ("busy", "", None), ("busy", "", None), ("busy", "bash", None), ("session-touched",),
        ("done", "", None), ("title", "Say hi"), ("busy", "", None), ("done", "", None), ("busy", "", None),
        ("title", "Say hi again")]


def test_outside_lich_it_reads_nothing_and_ends(pyz, base_env):
    proc = serve(pyz, "omp", base_env)
    out, err = proc.communicate(b"", timeout=30)
    assert (proc.returncode, out, err) == (0, b"", b"")


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_it_ends_when_its_parent_is_killed_though_its_stdin_stays_open(pyz, base_env, standin, tmp_path):
    """The harness killed hard while something else still holds the pipe: no lichhook is
    left behind all the same."""
    reader, writer = os.pipe()
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-I', '-S', {str(pyz)!r}, 'omp', '--serve'], stdin={reader})\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n")], env=dict(base_env, **lich_env(standin)), pass_fds=(reader,))
    os.close(reader)
    try:
        deadline = time.monotonic() + 10
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.write(writer, line("input", {"type": "input", "session_id": "s1"}))
        assert [r.contract for r in standin.wait_for(1, timeout=10)] == ["session-state"]
        assert running(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while running(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(child)
    finally:
        os.close(writer)
        parent.kill()


def test_behind_a_silent_lich_it_still_ends_soon_after_its_stdin(pyz, base_env, fault_server):
    silent = fault_server("silent")
    lines = [line("input", {"type": "input", "session_id": "s1"})] * 20
    proc = serve(pyz, "omp", dict(base_env, **lich_env(silent), LICHHOOK_DEBUG="1"))
    out, err = proc.communicate(b"".join(lines), timeout=30)
    assert proc.returncode == 0
    # each event was given its deadline, and what was left when the drain ran out was dropped
    assert 1 <= len(silent.requests) < 20
    assert b"the events left are dropped" in err, err


def test_the_queue_keeps_the_newest_and_counts_what_it_dropped():
    inbox = Inbox(limit=3)
    for n in range(5):
        inbox.put(b"%d" % n)
    taken: List[object] = [inbox.take(0)]
    inbox.close()
    taken += [inbox.take(0), inbox.take(0), inbox.take(0)]
    assert taken == [(b"2", False, 2), (b"3", True, 0), (b"4", True, 0), (None, True, 0)]


def test_omp_reports_an_event_without_a_session_id_but_no_start_and_no_nameless_tool_call():
    from lichhook.adapter import Event, Report
    from lichhook.adapters.omp import ADAPTER

    def reports(name: str, **payload: object) -> list:
        return ADAPTER.reports(Event("omp", name, dict(payload, type=name), {}, None, known=True))

    assert reports("session_start", session_id=None) == []
    assert reports("input", session_id=None) == [Report.state("busy")]
    assert reports("tool_call", session_id="s1", input={"command": "ls"}) == []
    assert reports("tool_call", session_id="s1", toolName="", input={"command": "ls"}) == []
    assert reports("tool_call", session_id="s1", toolName="bash", input={"command": "ls"}) == [
        Report.state("busy", tool="bash", detail="ls", provider_session_id="s1")]
