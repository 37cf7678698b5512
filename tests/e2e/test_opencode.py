"""opencode with lichhook's plugin installed: a turn that writes a file reports each step in
order; a task's sub-session belongs to its parent's card and is not reported; a fork is a
session of its own and is."""

from __future__ import annotations

import os
import signal

import pytest

from testkit.constants import LICH_SESSION
from testkit.harnesses import TITLE as TITLE_ROUTE
from testkit.harnesses import lichhook_servers, wait_until
from testkit.models import hold, text, tool_call
from testkit.servers import FaultServer

pytestmark = pytest.mark.e2e

SUB_PROMPT = "Look around the project and say what you see."


@pytest.fixture
def opencode(sandbox):
    return sandbox("opencode", installed=True)


PROMPT = "Write hello into g.txt."
TITLE = "Write hello into g.txt"


def names_the_session(request) -> bool:
    """opencode's request for a session's title (its small model, asked without tools)."""
    return "You are a title generator" in request.text() and not request.tool_names()


def shorts(seen) -> list:
    return [s.short() for s in seen]


def test_a_turn_that_writes_a_file_reports_each_step_in_order(opencode):
    target = opencode.project / "g.txt"
    opencode.model.script(text(TITLE, when=names_the_session),
                          tool_call("write", {"filePath": str(target), "content": "hello\n"}), text("Written."))
    done = opencode.run(opencode.harness.headless(PROMPT))
    sid = opencode.harness.session_id(done)
    assert target.read_text() == "hello\n"
    seen = opencode.timeline(until=lambda seen: ("done",) in shorts(seen) and ("title", TITLE) in shorts(seen))
    assert {(s.status, s.accepted["session_id"]) for s in seen} == {(204, LICH_SESSION)}, opencode.describe(done)
    # file.edited names no session; every other report carries opencode's own id
    assert {s.provider_session_id for s in seen if s.short() != ("touched",)} == {sid}
    # opencode names the session while the turn runs: the title goes once, after the start
    titles = [i for i, s in enumerate(seen) if s.route == TITLE_ROUTE]
    assert [seen[i].short() for i in titles] == [("title", TITLE)], shorts(seen)
    # opencode says busy at each step of a turn; the module runs lichhook for one only
    # when something else came between
    steps = [s.short() for s in seen if s.route != TITLE_ROUTE]
    assert steps == [("start",), ("busy",), ("busy", "write", "g.txt"), ("touched",), ("busy",), ("busy",),
                     ("done",)], opencode.describe(done)


def test_a_sub_session_is_not_reported(opencode):
    opencode.model.script(tool_call("task", {"description": "look around", "prompt": SUB_PROMPT,
                                             "subagent_type": "general"}))
    done = opencode.run(opencode.harness.headless("Delegate a look around."))
    parent = opencode.harness.session_id(done)
    # The sub-agent really ran: its own session asked the model with the task's prompt.
    asked = [r for r in opencode.model.model_requests() if SUB_PROMPT in r.text()
             and not r.tool_results()]
    assert asked, opencode.model.log()
    assert opencode.accepted(1) == [("opencode", parent)]
    # nothing of the sub-session's: its busy, its tools, its title, its end
    seen = opencode.timeline(until=lambda seen: ("done",) in shorts(seen))
    assert {s.provider_session_id for s in seen} == {parent}, shorts(seen)
    assert shorts(seen).count(("done",)) == 1


def test_a_fork_is_reported_and_a_plain_continue_is_not(opencode):
    first = opencode.harness.session_id(opencode.run(opencode.harness.headless("Start.")))
    assert opencode.accepted(1) == [("opencode", first)]
    # --session continues in place: opencode creates no session, so nothing is reported.
    again = opencode.harness.session_id(opencode.run(opencode.harness.headless("Go on.", "--session", first)))
    assert again == first
    assert opencode.accepted(1) == [("opencode", first)]
    forked = opencode.harness.session_id(opencode.run(
        opencode.harness.headless("Try another way.", "--session", first, "--fork")))
    assert forked != first
    assert opencode.accepted(2) == [("opencode", first), ("opencode", forked)]


def test_opencode_asks_npm_for_its_plugin_package_exactly_when_doctor_says_it_will(sandbox):
    """opencode installs @opencode-ai/plugin into its config folder before it loads any plugin,
    unless that folder holds node_modules and a lock naming the package (as the kit's does, and
    as a successful install leaves it). lichhook cannot avoid it; doctor says when it is due."""
    box = sandbox("opencode", installed=True)
    folder = box.home / ".config" / "opencode"
    registry = FaultServer("status", 404)  # an npm registry that knows no package, and says so at once
    npm = {"npm_config_registry": f"http://127.0.0.1:{registry.port}/"}
    try:
        assert "@opencode-ai/plugin" not in box.lichhook("doctor", "--verbose").stdout.decode()
        box.run(box.harness.headless("Say hello."), **npm)
        assert registry.requests == []
        for name in ("node_modules", "package.json", "package-lock.json"):
            (folder / name).unlink()
        assert "and that folder has no node_modules" in box.lichhook("doctor", "--verbose").stdout.decode()
        box.run(box.harness.headless("Say hello."), **npm)
        assert any(b"@opencode-ai" in request.split(b"\r\n", 1)[0] for request in registry.requests), registry.requests
    finally:
        registry.close()
    assert len(box.accepted(2)) == 2


def test_one_lichhook_reports_several_tool_calls_in_order_and_dies_with_opencode(opencode):
    """Every event of a turn with three tool calls goes to one lichhook, reported once and
    in order; opencode killed hard leaves no lichhook behind."""
    opencode.model.script(text("Write and read", when=names_the_session),
                          tool_call("write", {"filePath": str(opencode.project / "a.txt"), "content": "a\n"}),
                          tool_call("write", {"filePath": str(opencode.project / "b.txt"), "content": "b\n"}),
                          tool_call("read", {"filePath": str(opencode.project / "a.txt")}),
                          hold(120, text("Done.")))
    proc = opencode.start(opencode.harness.headless("Write a.txt and b.txt, then read a.txt."))
    try:
        tools = [("busy", "write", "a.txt"), ("busy", "write", "b.txt"), ("busy", "read", "a.txt")]
        seen = opencode.timeline(until=lambda seen: tools[-1] in shorts(seen), settle=0.5)
        steps = [s for s in shorts(seen) if s[0] != "title"]
        assert [s for s in steps if len(s) == 3] == tools, steps
        assert steps[:2] == [("start",), ("busy",)] and steps.count(("touched",)) == 2, steps
        servers = lichhook_servers(opencode)
        assert len(servers) == 1, servers  # one for the whole session
        (server, harness), = servers.items()
        os.kill(harness, signal.SIGKILL)
        assert wait_until(lambda: server not in lichhook_servers(opencode), 10), lichhook_servers(opencode)
    finally:
        proc.kill()
        proc.communicate()
