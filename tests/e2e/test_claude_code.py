"""Claude Code with lichhook installed: the waits hooks and the MCP tool, as the model
meets them, the ids reported on resume and fork, and a session's whole life as lich sees it."""

from __future__ import annotations

import json
import shutil

import pytest

from testkit.constants import LICH_SESSION
from testkit.harnesses import TITLE as TITLE_ROUTE
from testkit.models import text, tool_call

pytestmark = pytest.mark.e2e

WHO = "reviewer"
SESSION_HEADER = "X-Claude-Code-Session-Id"
# lichhook's MCP tool as Claude Code names it for the model (mcp__<server>__<tool>).
WAIT_TOOL = "mcp__lichhook__claude_code_wait"


def session_of(request) -> str:
    """The session id, as Claude Code sends it with every model request."""
    return request.headers[SESSION_HEADER]


def wait_op(op: str, **fields):
    """A call of the claude_code_wait tool for this session, as the model would make it."""
    return tool_call(WAIT_TOOL, lambda request: dict(op=op, by=WHO, session=session_of(request), **fields))


def allowed() -> tuple:
    """Lets the model call the tool in -p mode, where no one can answer a permission prompt."""
    return ("--allowedTools", WAIT_TOOL)


@pytest.fixture
def claude(sandbox):
    return sandbox("claude", installed=True)


def stream_events(done) -> list:
    """The events of ``--output-format stream-json``, one JSON object a line."""
    return [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]


def test_session_start_context_reaches_the_model(claude):
    done = claude.run(claude.harness.headless("Say hello."))
    sid = claude.harness.session_id(done)
    (first, *_) = claude.model.model_requests()
    context = [m for m in first.body["messages"] if m.get("role") == "system"
               and "SessionStart hook additional context" in json.dumps(m.get("content"))]
    assert len(context) == 1, claude.model.log()
    # The waits hook tells the model its own session id, which no tool gives it.
    assert f"Your Claude Code session id is {sid}." in json.dumps(context[0]["content"])


def test_the_model_adds_and_lists_a_wait_through_the_mcp_tool(claude):
    claude.model.script(
        wait_op("add", what="CI run 4512", family="ci.build"),
        wait_op("list"),
        wait_op("done", id="w1"),
    )
    done = claude.run(claude.harness.headless("Record the CI run you wait for.", *allowed()))
    sid = claude.harness.session_id(done)
    turns = claude.model.model_requests()
    results = [r.tool_results() for r in turns]
    added = json.loads(results[1][-1])
    assert added["ok"] is True and added["op"] == "add" and added["session"] == sid, results
    wid = added["wait"]["id"]
    listed = json.loads(results[2][-1])
    assert listed["ok"] is True and [w["what"] for w in listed["waits"]] == ["CI run 4512"], listed
    assert [w["id"] for w in listed["waits"]] == [wid]
    closed = json.loads(results[3][-1])
    assert closed["ok"] is True, closed
    # With the wait closed, the Stop hook let the turn end at once.
    assert not any("Stop hook feedback" in r.text() for r in turns), claude.model.log()
    assert not claude.model.pending()


def test_an_open_wait_sends_the_turn_back_three_times_then_lets_it_end(claude):
    claude.model.script(wait_op("add", what="review of change 77"))
    done = claude.run(claude.harness.headless("Ask for a review.", *allowed(), stream=True))
    turns = claude.model.model_requests()
    # The prompt, the tool result, then one request per refusal: three, and no fourth.
    assert len(turns) == 5, claude.model.log()
    feedback = [m for m in turns[-1].body["messages"] if m.get("role") == "user"
                and "Stop hook feedback" in json.dumps(m.get("content"))]
    assert len(feedback) == 3, claude.model.log()
    for message in feedback:
        reason = json.dumps(message["content"])
        assert "Do not end your turn yet" in reason and "w1: review of change 77" in reason
        assert "wait done --by reviewer@" in reason  # the command that closes it
    # The fourth stop was let through, and the user was told why.
    notices = [e for e in stream_events(done) if e.get("type") == "system"
               and "after 3 refusals in a row" in str(e.get("content"))]
    assert len(notices) == 1 and "w1" in notices[0]["content"], done.stdout.decode()[-3000:]


def test_resume_reports_the_same_id_and_fork_a_new_one(claude):
    first = claude.harness.session_id(claude.run(claude.harness.headless("Start.")))
    resumed = claude.harness.session_id(claude.run(claude.harness.headless("Go on.", "--resume", first)))
    forked = claude.harness.session_id(claude.run(
        claude.harness.headless("Try another way.", "--resume", first, "--fork-session")))
    assert resumed == first and forked != first
    assert claude.harness.session_files(claude, forked)
    # One report per session start, each with the id that session runs under.
    assert claude.accepted(3) == [("claude", first), ("claude", first), ("claude", forked)]


# -- the session's life as lich sees it ----------------------------------------------------

PROMPT = "Write the two files."
TITLE = "Write the two files"
COMMAND = "echo hi > f.txt"


def writes(box):
    """The model's turn: a shell command, then a new file in a sub-folder, then its answer."""
    return (tool_call("Bash", {"command": COMMAND, "description": "Write hi into f.txt"}),
            tool_call("Write", {"file_path": str(box.project / "notes" / "todo.txt"), "content": "call the reviewer\n"}),
            text("Both written."))


def names_the_session(request) -> bool:
    """Claude Code's request for a session's title (its TUI makes it; ``-p`` never does)."""
    return "naming a coding session" in request.text() and not request.tool_names()


def shorts(seen) -> list:
    return [s.short() for s in seen]


def test_a_headless_turn_reports_each_step_and_outside_lich_nothing_changes(claude):
    claude.model.script(*writes(claude))
    done = claude.run(claude.harness.headless(PROMPT, "--allowedTools", "Bash,Write"))
    sid = claude.harness.session_id(done)
    seen = claude.timeline(until=lambda seen: ("idle",) in shorts(seen))
    assert shorts(seen) == [
        ("start",), ("busy",),
        ("busy", "Bash", COMMAND), ("busy",), ("touched",),
        ("busy", "Write", "notes/todo.txt"), ("busy",), ("touched",),
        ("done",), ("idle",),  # -p ends the session when the turn ends: SessionEnd
    ], claude.describe(done)
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}
    inside = claude.model.model_requests()

    # The same run outside lich: nothing sent, and the harness shows and does the same.
    (claude.project / "f.txt").unlink()
    shutil.rmtree(claude.project / "notes")
    claude.model.script(*writes(claude))
    again = claude.run(claude.harness.headless(PROMPT, "--allowedTools", "Bash,Write"), lich=False)
    assert len(claude.timeline()) == len(seen)
    outside = claude.model.model_requests()[len(inside):]
    assert [r.tool_results() for r in outside] == [r.tool_results() for r in inside]
    shown, shown_again = (json.loads(d.stdout) for d in (done, again))
    kept = ("type", "subtype", "is_error", "result", "num_turns", "stop_reason", "permission_denials")
    assert {k: shown_again[k] for k in kept} == {k: shown[k] for k in kept}
    assert again.stderr == done.stderr == b""
    assert (claude.project / "notes" / "todo.txt").read_text() == "call the reviewer\n"


def test_the_tui_reports_a_permission_wait_the_title_and_the_end(claude):
    claude.model.script(text(json.dumps({"title": TITLE}), when=names_the_session), *writes(claude))
    # Write is allowed; Bash asks, as it does for any user in the default permission mode.
    with claude.harness.tui(claude, "--permission-mode", "default", "--allowedTools", "Write") as tui:
        tui.wait_for(r"\? for shortcuts")
        tui.type_line(PROMPT)
        tui.wait_for(r"Do you want to proceed\?")
        # Claude Code tells the Notification hook once the question has waited ~6 s.
        asked = claude.timeline(until=lambda seen: any(s.short()[0] == "waiting" for s in seen), settle=0)
        assert shorts(asked)[-1] == ("waiting", "Claude needs your permission"), shorts(asked)
        tui.send("1")  # "1. Yes"
        tui.wait_for(r"Both written\.")
        tui.type_line("/exit")
        assert tui.proc.wait(30) == 0, tui.text()
    seen = claude.timeline(until=lambda seen: ("idle",) in shorts(seen))
    sid = session_of(claude.model.model_requests()[0])
    assert claude.harness.session_files(claude, sid)
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}
    # The title is read from the transcript after a tool or at the turn's end, whichever
    # first finds Claude Code's ai-title line there; it is sent once.
    titles = [i for i, s in enumerate(seen) if s.route == TITLE_ROUTE]
    assert [seen[i].short() for i in titles] == [("title", TITLE)], shorts(seen)
    assert titles[0] > shorts(seen).index(("busy", "Bash", COMMAND))
    assert [s.short() for s in seen if s.route != TITLE_ROUTE] == [
        ("start",), ("busy",),
        ("busy", "Bash", COMMAND), ("waiting", "Claude needs your permission"), ("busy",), ("touched",),
        ("busy", "Write", "notes/todo.txt"), ("busy",), ("touched",),
        ("done",), ("idle",),  # /exit: SessionEnd
    ]


def compaction(box, first: str, prompt: str = "/compact") -> tuple:
    """Run ``prompt`` headless in session ``first``: (the run, the state reports it made)."""
    before = len(box.timeline())
    done = box.run(box.harness.headless(prompt, "--resume", first))
    seen = box.timeline(until=lambda seen: ("idle",) in shorts(seen[before:]))[before:]
    return done, [s for s in seen if s.route == "/hook"]


def test_compact_reports_compacting_then_done_and_a_failed_one_closes_at_the_next_report(claude):
    first = claude.harness.session_id(claude.run(claude.harness.headless("Start.")))
    done, states = compaction(claude, first, "/compact keep the plan")
    assert [(s.status, s.short()) for s in states] == [(204, ("compacting",)), (204, ("done",)), (204, ("idle",))], \
        claude.describe(done)
    # Nothing new to compact: Claude Code says so and fires no PostCompact. The card reads
    # compacting until the session's next report (here -p's SessionEnd).
    done, states = compaction(claude, first)
    assert json.loads(done.stdout)["result"] == "Not enough messages to compact."
    assert [s.short() for s in states] == [("compacting",), ("idle",)]


def test_a_lich_older_than_compacting_costs_one_report_and_nothing_else(claude):
    first = claude.harness.session_id(claude.run(claude.harness.headless("Start.")))
    claude.standin.compacting = False
    done, states = compaction(claude, first)
    assert [(s.status, s.sent.get("state")) for s in states] == [(400, "compacting"), (204, "done"), (204, "idle")], \
        claude.describe(done)
    assert done.stderr == b"" and json.loads(done.stdout)["is_error"] is False
