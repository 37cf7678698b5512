"""Claude Code with lichhook installed: the waits hooks and the MCP tool, as the model
meets them, and the ids reported on resume and fork."""

from __future__ import annotations

import json

import pytest

from testkit.models import tool_call

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
