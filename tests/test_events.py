"""Every harness event, as the real harness sends it (tests/payloads/), through the built
archive against lich's stand-in: exactly the reports lich should get, and exactly the
stdout the harness needs, inside lich and outside it."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from lichhook.adapters import BY_PROVIDER
from testkit.constants import TESTS
from testkit.environment import lich_env

PAYLOADS = TESTS / "payloads"
TRANSCRIPTS = {  # the transcript each harness's payloads point at, as a test copy
    "claude": ("transcript_path", "transcript-45806d05.jsonl"),
    "codex": ("transcript_path", "rollout-01a22eb6.jsonl"),
    "antigravity": ("transcriptPath", "transcript_full.jsonl"),
}
CLAUDE = "45806d05-f16e-449e-b2d5-2953f3f3ea1b"
CODEX = "01a22eb6-b980-71c2-a9e0-e31c3a858c56"
AGY = "2bb3613b-f2a2-4573-9282-e389ac224bda"
CRUSH = "6f1c0a4e-3b2d-4c1a-9e8f-7a6b5c4d3e21"
OPENCODE = "ses_dd13b4d40ffe3aYyIuLUoqsjmq"
OMP = "01a22ec3-4501-7766-a07b-ba211c3beff8"
ALLOW = '{"decision":"allow"}'


def start(sid):
    return ("session-start", {"provider_session_id": sid})


def busy(tool="", detail=""):
    return ("session-state", {"state": "busy", "tool": tool, "detail": detail, "reason": ""})


def state(name, reason=""):
    return ("session-state", {"state": name, "tool": "", "detail": "", "reason": reason})


def title(text):
    return ("session-title", {"title": text})


TOUCHED = ("session-touched", {})

# harness -> fixture -> (reports lich gets, in order; stdout), each event run on its own
# for a card with no title yet.
EXPECTED = {
    "claude": {
        "SessionStart-startup": ([start(CLAUDE)], ""),
        "SessionStart-clear": ([start("13dccd24-22e6-4028-9b6c-0725ae06157d")], ""),
        "UserPromptSubmit": ([busy()], ""),
        "PreToolUse-Bash": ([busy("Bash", "echo hi > f.txt")], ""),
        "PreToolUse-Write": ([busy("Write", "g.txt")], ""),
        "PreToolUse-Agent": ([busy("Agent", "Capture sub-agent")], ""),
        "PreToolUse-Bash-subagent": ([busy("Bash", "echo sub > sub.txt")], ""),
        "PermissionRequest-Bash": ([], ""),  # not registered: the Notification says it
        "Notification-permission": ([state("waiting", "Claude needs your permission")], ""),
        "Notification-idle": ([state("waiting", "Claude is waiting for your input")], ""),
        "PostToolUse-Bash": ([busy(), TOUCHED, title("Write hi into f.txt")], ""),
        "PostToolUse-Write": ([busy(), TOUCHED, title("Write hi into f.txt")], ""),
        "PostToolUse-Agent": ([busy(), title("Write hi into f.txt")], ""),
        "Stop": ([state("done"), title("Write hi into f.txt")], ""),
        "StopFailure": ([state("done")], ""),
        "PreCompact-manual": ([state("compacting")], ""),
        "PostCompact-manual": ([state("done")], ""),  # /compact typed between turns
        "PostCompact-auto": ([busy()], ""),  # inside a turn, which goes on
        "PreCompact-subagent": ([], ""),  # a sub-agent's own compaction is not the card's
        "SessionEnd-clear": ([state("idle")], ""),
        "SessionEnd-other": ([state("idle")], ""),
    },
    "codex": {
        "SessionStart": ([start(CODEX)], ""),
        "SessionStart-fork": ([start("01a22ebc-467f-70c1-a671-1ecc460f6a59")], ""),
        "UserPromptSubmit": ([busy()], ""),
        "PreToolUse-Bash": ([busy("Bash", "echo hi > f.txt")], ""),
        "PreToolUse-apply_patch": ([busy("apply_patch", "g.txt")], ""),
        "PreToolUse-spawn_agent": ([busy("spawn_agent", "CAPTURE_SUB: run one shell command in a sub-agent")], ""),
        "PermissionRequest-apply_patch": ([state("waiting", "apply_patch: g.txt")], ""),
        "PermissionRequest-Bash": ([state("waiting", "Bash: touch asked.txt")], ""),
        "PostToolUse-Bash": ([busy(), TOUCHED, title("CAPTURE_TOOLS write two files")], ""),
        "PostToolUse-apply_patch": ([busy(), TOUCHED, title("CAPTURE_TOOLS write two files")], ""),
        "PostToolUse-Bash-subagent": ([busy(), TOUCHED], ""),  # a sub-agent's rollout holds no card title
        "Stop": ([state("done"), title("CAPTURE_TOOLS write two files")], ""),
        "SessionEnd": ([state("idle")], ""),
        "Interrupt": ([], ""),
        "PreCompact-auto": ([state("compacting")], ""),
        "PostCompact-auto": ([busy()], ""),
        "PostCompact-manual": ([state("done")], ""),
    },
    "antigravity": {
        "PreInvocation": ([start(AGY), busy(), title("Add a --verbose flag to the CLI")], "{}"),
        "PreToolUse-run_command": ([busy("run_command", "npm test")], ALLOW),
        "PreToolUse-write_to_file": ([busy("write_to_file", "src/app.ts")], ALLOW),
        "PostToolUse-run_command": ([TOUCHED], "{}"),
        "PostToolUse-view_file": ([], "{}"),
        "Stop": ([state("done"), title("Add a --verbose flag to the CLI")], '{"decision":""}'),
    },
    "crush": {
        "PreToolUse-bash": ([start(CRUSH), TOUCHED], ""),
        "PreToolUse-multiedit": ([start(CRUSH), TOUCHED], ""),
        "PreToolUse-view": ([start(CRUSH)], ""),
    },
    "opencode": {
        "session.created": ([start(OPENCODE)], ""),  # its placeholder title is kept, not sent
        "session.created-fork": ([start("ses_dd13a4b8bffeBkxxxcB6hUdNn1")], ""),
        "session.created-subsession": ([], ""),
        "session.updated-titled": ([title("Write hi into f.txt")], ""),
        "session.updated-subsession": ([], ""),
        "session.status-busy": ([busy()], ""),
        "session.status-idle": ([state("done")], ""),
        "tool.execute.before-bash": ([busy("bash", "echo hi > f.txt")], ""),
        "tool.execute.before-write": ([busy("write", "g.txt")], ""),
        "tool.execute.after-bash": ([busy()], ""),
        "permission.asked": ([state("waiting", "bash: touch asked.txt")], ""),
        "file.edited": ([TOUCHED], ""),
    },
    "omp": {
        "session_start": ([start(OMP)], ""),
        "session_switch": ([start("01a22ec3-bf72-716e-9cf8-dec5b2647116")], ""),
        "session_start-subagent": ([], ""),
        "input": ([busy()], ""),
        "turn_start-untitled": ([busy()], ""),
        "turn_start-titled": ([busy(), title("Write hi into f.txt")], ""),
        "tool_call-bash": ([busy("bash", "echo hi > f.txt")], ""),
        "tool_call-write": ([busy("write", "g.txt")], ""),
        "tool_result-bash": ([TOUCHED], ""),
        "tool_result-task": ([], ""),
        "tool_result-subagent": ([], ""),  # a task sub-agent's write belongs to the parent's card
        "session_stop": ([state("done"), title("Write hi into f.txt")], ""),
    },
}


def fixture(harness: str, name: str) -> tuple:
    data = json.loads((PAYLOADS / harness / f"{name}.json").read_text(encoding="utf-8"))
    return data["event"], data["payload"]


def prepared(harness: str, payload: dict, folder: Path) -> dict:
    """The payload with its transcript pointing at a test copy of the captured one."""
    if harness in TRANSCRIPTS:
        key, name = TRANSCRIPTS[harness]
        if key in payload:
            copy = folder / name
            if not copy.exists():
                shutil.copy(PAYLOADS / harness / name, copy)
            payload = dict(payload, **{key: str(copy)})
    return payload


class Card:
    """One lich card: the stand-in, and a state folder of its own (its last title)."""

    def __init__(self, run, standin, folder: Path) -> None:
        self.run, self.standin, self.folder = run, standin, folder
        self.env = dict(lich_env(standin), XDG_STATE_HOME=str(folder / "state"))

    def hook(self, harness: str, name: str, env: dict | None = None) -> tuple:
        event, payload = fixture(harness, name)
        before = len(self.standin.reports)
        done = self.run(harness, event, stdin=json.dumps(prepared(harness, payload, self.folder)),
                        env=dict(self.env, **(env or {})))
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return done.stdout.decode(), self.standin.reports[before:]


def said(report) -> tuple:
    """(contract, what lich kept) of a report, minus the card's own session id."""
    assert report.status == 204, (report.status, report.verdict, report.body)
    kept = {k: v for k, v in report.accepted.items() if k != "session_id"}
    if report.contract == "session-start":
        kept = {"provider_session_id": kept["provider_session_id"]}
    return report.contract, kept


CASES = [(harness, name) for harness, cases in EXPECTED.items() for name in cases]


@pytest.mark.parametrize("harness,name", CASES, ids=[f"{h}-{n}" for h, n in CASES])
def test_each_event_gives_exactly_its_reports_and_stdout(run, standin, tmp_path, harness, name):
    expected, verdict = EXPECTED[harness][name]
    stdout, reports = Card(run, standin, tmp_path).hook(harness, name)
    assert stdout == verdict
    assert [said(r) for r in reports] == expected
    _, payload = fixture(harness, name)
    for report in reports:  # the harness's own session id rides along where the payload names it
        body = json.loads(report.body)
        assert body["session_id"] == "lich-s1"
        if report.contract != "session-start":
            assert body.get("provider_session_id") == session_named(payload), body


def session_named(payload: dict):
    """The harness session a payload names, in each harness's own field."""
    for path in (("session_id",), ("conversationId",), ("properties", "info", "id"), ("properties", "sessionID"),
                 ("input", "sessionID")):
        node = payload
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str):
            return node
    return None


def test_every_fixture_has_an_expectation():
    found = {(p.parent.name, p.stem) for p in PAYLOADS.glob("*/*.json")}
    in_sequences_only = {("opencode", "session.updated-placeholder"), ("antigravity", "PreInvocation-later")}
    assert found == set(CASES) | in_sequences_only


@pytest.mark.parametrize("harness", sorted(EXPECTED))
def test_outside_lich_each_event_prints_its_verdict_and_sends_nothing(run, fault_server, harness):
    server = fault_server()
    for name, (_, verdict) in EXPECTED[harness].items():
        event, payload = fixture(harness, name)
        done = run(harness, event, stdin=json.dumps(payload),
                   env={"LICH_PORT": str(server.port), "LICH_TOKEN": "", "LICH_SESSION_ID": "s"})
        assert (done.returncode, done.stdout.decode(), done.stderr) == (0, verdict, b"")
    assert server.requests == []


def test_every_verdict_is_the_descriptors(run):
    for harness, descriptor in BY_PROVIDER.items():
        for event in (e for e in descriptor.events if e[:1] != "*"):
            done = run(harness, event, stdin=b"{}")
            assert done.stdout.decode() == descriptor.verdict(event), (harness, event)
    assert BY_PROVIDER["antigravity"].verdicts == {
        "PreInvocation": "{}", "PreToolUse": ALLOW, "PostToolUse": "{}", "Stop": '{"decision":""}'}
    assert {d.verdict(e) for h, d in BY_PROVIDER.items() if h != "antigravity" for e in d.events} == {""}


# --- a card's life: titles once, and in order ----------------------------------------------

@pytest.mark.parametrize("harness,steps", [
    ("claude", [("PostToolUse-Bash", [busy(), TOUCHED, title("Write hi into f.txt")]),
                ("PostToolUse-Write", [busy(), TOUCHED]),  # a title is known: the transcript is not read
                ("Stop", [state("done")])]),  # read again, unchanged: not sent
    ("codex", [("Stop", [state("done"), title("CAPTURE_TOOLS write two files")]),
               ("PostToolUse-Bash", [busy(), TOUCHED]),
               ("Stop", [state("done")])]),
    ("antigravity", [("PreInvocation", [start(AGY), busy(), title("Add a --verbose flag to the CLI")]),
                     ("PreInvocation-later", [start(AGY), busy()]),
                     ("Stop", [state("done")])]),
    ("opencode", [("session.created", [start(OPENCODE)]),
                  ("session.updated-placeholder", []),  # the placeholder kept at creation
                  ("session.updated-titled", [title("Write hi into f.txt")]),
                  ("session.updated-titled", [])]),
    ("omp", [("turn_start-untitled", [busy()]),
             ("turn_start-titled", [busy(), title("Write hi into f.txt")]),
             ("session_stop", [state("done")])]),
])
def test_a_title_goes_out_once_per_change(run, standin, tmp_path, harness, steps):
    card = Card(run, standin, tmp_path)
    for name, expected in steps:
        _, reports = card.hook(harness, name)
        assert [said(r) for r in reports] == expected, name


def test_a_changed_title_goes_out_again(run, standin, tmp_path):
    card = Card(run, standin, tmp_path)
    card.hook("omp", "turn_start-titled")
    event, payload = fixture("omp", "session_stop")
    for text, sent in (("Write hi into f.txt", False), ("Rename the flag", True), ("Rename the flag", False)):
        before = len(standin.reports)
        run("omp", event, stdin=json.dumps(dict(payload, session_name=text)), env=card.env)
        titles = [r.accepted["title"] for r in standin.reports[before:] if r.contract == "session-title"]
        assert titles == ([text] if sent else [])


def test_another_card_has_its_own_titles(run, standin, tmp_path):
    card = Card(run, standin, tmp_path)
    card.hook("omp", "turn_start-titled")
    _, again = card.hook("omp", "turn_start-titled")
    _, other = card.hook("omp", "turn_start-titled", env={"LICH_SESSION_ID": "lich-s2"})
    assert [r.contract for r in again] == ["session-state"]
    assert [r.contract for r in other] == ["session-state", "session-title"]


def test_a_title_lich_refused_is_sent_again(run, fault_server, tmp_path):
    server = fault_server("status", 500)
    env = dict(lich_env(server), XDG_STATE_HOME=str(tmp_path / "state"))
    event, payload = fixture("omp", "turn_start-titled")
    for _ in range(2):
        run("omp", event, stdin=json.dumps(payload), env=env)
    assert sum(b"POST /session-title?" in r for r in server.requests) == 2


def test_crush_takes_its_id_from_the_environment(run, standin, tmp_path):
    event, payload = fixture("crush", "PreToolUse-bash")
    payload = {k: v for k, v in payload.items() if k != "session_id"}
    run("crush", event, stdin=json.dumps(payload), env=dict(lich_env(standin), CRUSH_SESSION_ID=CRUSH))
    assert [said(r) for r in standin.wait_for(2, timeout=5)] == [start(CRUSH), TOUCHED]


def test_claude_code_powershell_tool_changes_files_as_bash_does(run, standin, tmp_path):
    # On Windows without Git for Windows, Claude Code runs commands through its PowerShell
    # tool and registers no Bash tool (its setup.md and hooks.md): the same commands.
    event, payload = fixture("claude", "PostToolUse-Bash")
    payload = dict(payload, tool_name="PowerShell", tool_input={"command": "Set-Content f.txt hi"})
    card = Card(run, standin, tmp_path)
    done = run("claude", event, stdin=json.dumps(prepared("claude", payload, tmp_path)), env=card.env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert [said(r) for r in standin.reports] == [busy(), TOUCHED, title("Write hi into f.txt")]


# --- one deadline for every report of an event ------------------------------------------

def test_reports_of_one_event_share_one_deadline(run, fault_server, tmp_path):
    """A lich that takes the connection and never answers: the event's three reports
    together end about one second after the hook starts, not three."""
    server = fault_server("silent")
    env = dict(lich_env(server), XDG_STATE_HOME=str(tmp_path / "state"))
    event, payload = fixture("claude", "PostToolUse-Write")
    began = time.monotonic()
    done = run("claude", event, stdin=json.dumps(prepared("claude", payload, tmp_path)), env=env)
    took = time.monotonic() - began
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert len(server.requests) == 1  # the first ate the deadline; the others were not started
    assert took < 5  # one deadline (about 1 s) plus start-up, on a loaded machine


def test_a_dead_lich_costs_each_report_nothing(run, tmp_path):
    from testkit.servers import free_port

    env = {"LICH_PORT": str(free_port()), "LICH_TOKEN": "t", "LICH_SESSION_ID": "s",
           "XDG_STATE_HOME": str(tmp_path / "state"), "LICHHOOK_DEBUG": "1"}
    event, payload = fixture("claude", "PostToolUse-Write")
    done = run("claude", event, stdin=json.dumps(prepared("claude", payload, tmp_path)), env=env)
    assert done.returncode == 0 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 3 and all("no answer" in line for line in lines), lines


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_lich_older_than_compacting_costs_that_one_report(run, standin, tmp_path, harness):
    """A lich that answers ``compacting`` 400: the one request, nothing sent again, nothing
    printed or logged (the failures log stays absent), exit 0; the closing state lands."""
    standin.compacting = False
    card = Card(run, standin, tmp_path)
    name = "PreCompact-manual" if harness == "claude" else "PreCompact-auto"
    stdout, reports = card.hook(harness, name)
    assert stdout == ""
    assert [(r.status, r.verdict) for r in reports] == [(400, 'hook has unknown state "compacting"')]
    stdout, reports = card.hook(harness, "PostCompact-manual")
    assert [said(r) for r in reports] == [state("done")]
    assert not list(tmp_path.rglob("*fail*"))
