"""omp with lichhook's extension installed: a turn that writes a file reports each step in
order; a session switched to in place (resume, /new, /fork, a branch) is reported; a
sub-agent's session belongs to its parent's card and is not; under a profile omp loads the
extension from where install put it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time

import pytest

from testkit import archive
from testkit.constants import LICH_SESSION
from testkit.harnesses import START
from testkit.harnesses import TITLE as TITLE_ROUTE
from testkit.harnesses import lichhook_servers, wait_until
from testkit.models import hold, text, tool_call

pytestmark = pytest.mark.e2e

SUB_TASK = "Say what you see in the project folder."


@pytest.fixture
def omp(sandbox):
    return sandbox("omp", installed=True)


PROMPT = "Write hello into g.txt."
TITLE = "Write hello into g.txt"


def names_the_session(request) -> bool:
    """omp's request for a session's title (made without tools, unless --no-title)."""
    return "title using only the task" in request.text() and not request.tool_names()


def shorts(seen) -> list:
    return [s.short() for s in seen]


def test_a_turn_that_writes_a_file_reports_each_step_in_order(omp):
    target = omp.project / "g.txt"
    omp.model.script(text(TITLE, when=names_the_session),
                     tool_call("write", {"path": str(target), "content": "hello\n"}), text("Written."))
    # In its TUI: omp names a session there (not in -p or RPC mode).
    with omp.tui(["omp", "--model", "fake/fake-model"], OMP_SKIP_SETUP="1") as tui:
        tui.wait_for(r"π >")
        tui.type_line(PROMPT)
        tui.wait_for(r"Written\.")
        seen = omp.timeline(until=lambda seen: ("done",) in shorts(seen))
        tui.type_line("/exit")
    assert target.read_text() == "hello\n"
    sid = seen[0].provider_session_id
    assert omp.harness.session_files(omp, sid)
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}
    # omp names the session during the first turn; lichhook reads the name at each turn's
    # start and at its end, and sends it once
    titles = [i for i, s in enumerate(seen) if s.route == TITLE_ROUTE]
    assert [seen[i].short() for i in titles] == [("title", TITLE)], shorts(seen)
    assert [s.short() for s in seen if s.route != TITLE_ROUTE] == [
        ("start",), ("busy",), ("busy",), ("busy", "write", "g.txt"), ("touched",), ("busy",), ("done",),
    ], shorts(seen)


def test_a_resumed_session_is_reported_on_session_switch(omp):
    earlier = omp.harness.session_id(omp.run(omp.harness.headless("Start.")))
    (earlier_file,) = omp.harness.session_files(omp, earlier)
    assert omp.accepted(1) == [("omp", earlier)]
    # A second omp, driven as an editor drives it, starts a session and then resumes the
    # earlier one in the same process: omp emits session_switch for the resume.
    rpc = omp.harness.rpc(omp)
    fresh = rpc.call("get_state")["data"]["sessionId"]
    assert started(omp, 2)[-1] == fresh
    assert rpc.call("switch_session", sessionPath=str(earlier_file))["data"]["cancelled"] is False
    assert rpc.call("get_state")["data"]["sessionId"] == earlier
    rpc.close()
    assert omp.accepted(3) == [("omp", earlier), ("omp", fresh), ("omp", earlier)]


def test_a_sub_agent_session_is_not_reported(omp):
    omp.model.script(
        tool_call("task", {"i": "look around", "context": "A test project.",
                           "tasks": [{"name": "Scout", "task": SUB_TASK}]}),
        # The parent's next answer waits, so the sub-agent runs inside this print-mode run.
        hold(5, text("Done.", when=lambda request: bool(request.tool_results()))),
    )
    parent = omp.harness.session_id(omp.run(omp.harness.headless("Delegate a look around.")))
    asked = [r for r in omp.model.model_requests() if SUB_TASK in r.text() and not r.tool_results()]
    assert asked, omp.model.log()  # the sub-agent really ran, in a session of its own
    (parent_file,) = omp.harness.session_files(omp, parent)
    assert list(parent_file.with_suffix("").glob("*.jsonl")), "omp wrote no sub-agent session file"
    assert omp.accepted(1) == [("omp", parent)]
    # none of the sub-agent's events reports anything: every report is the parent's
    seen = omp.timeline(until=lambda seen: ("done",) in shorts(seen))
    assert {s.provider_session_id for s in seen} == {parent}, shorts(seen)
    steps = shorts(seen)
    # the task call (its arguments name no command, file or description), the turns after
    # it, the end: no sub-agent's tool or end among them
    assert steps[:3] == [("start",), ("busy",), ("busy", "task", "")] and steps[-1] == ("done",), steps
    assert set(steps[3:-1]) == {("busy",)}, steps


def test_new_fork_and_resume_in_the_tui_are_reported(omp):
    """/new, /fork and /resume, typed in omp's TUI, each make omp emit session_switch."""
    ids = []

    def reported(n: int) -> str:
        ids = started(omp, n)
        assert len(ids) == n, ids
        return ids[-1]

    with omp.tui(["omp", "--model", "fake/fake-model", "--no-title"], OMP_SKIP_SETUP="1") as tui:
        tui.wait_for(r"π >")
        tui.type_line("Start.")
        tui.wait_for(r"Done\.")
        ids.append(reported(1))
        tui.type_line("/fork")
        tui.wait_for(r"Session forked to")
        ids.append(reported(2))
        tui.type_line("/new")
        ids.append(reported(3))
        tui.type_line(f"/resume {ids[0]}")
        ids.append(reported(4))
    first, forked, fresh, resumed = ids
    assert len({first, forked, fresh}) == 3 and resumed == first
    (fork_file,) = omp.harness.session_files(omp, forked)
    assert header_of(fork_file)["parentSession"] == first  # a fork names its parent by id, and is reported
    assert [p for p, _ in omp.accepted(4)] == ["omp"] * 4


def test_a_branch_naming_its_parent_file_is_reported(omp):
    """A branch (RPC ``branch``, the TUI's /tree) names the parent's file in its header but
    sits beside it, not in its folder: a session of the card's own."""
    rpc = omp.harness.rpc(omp)
    first = rpc.call("get_state")["data"]["sessionId"]
    rpc.call("prompt", message="Start.")
    assert omp.model.wait_for(lambda requests: any(r.reply for r in requests), timeout=60)
    entry = _first_user_entry(rpc)
    branched = rpc.call("branch", entryId=entry)["data"]
    assert branched["cancelled"] is False
    second = rpc.call("get_state")["data"]["sessionId"]
    rpc.close()
    assert second != first
    (branch_file,) = omp.harness.session_files(omp, second)
    assert header_of(branch_file)["parentSession"].endswith(".jsonl")  # a file, like a sub-agent's parent
    assert omp.accepted(2) == [("omp", first), ("omp", second)]


def started(box, count: int) -> list:
    """The sessions reported started so far, once ``count`` were (or the wait ran out)."""
    return [s.provider_session_id for s in box.arrived(count, START) if s.route == START]


def header_of(session_file) -> dict:
    """The session header omp wrote into a session file (the first line may be its title)."""
    for line in session_file.read_text().splitlines():
        value = json.loads(line)
        if value.get("type") == "session":
            return value
    raise AssertionError(f"no session header in {session_file}")


def _first_user_entry(rpc) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        messages = rpc.call("get_branch_messages")["data"]
        entries = messages.get("messages") if isinstance(messages, dict) else messages
        for entry in entries or []:
            if isinstance(entry, dict) and entry.get("entryId"):
                return entry["entryId"]
        time.sleep(0.5)
    raise AssertionError(f"no entry to branch from: {rpc.seen[-5:]}")


PROFILES = {
    "OMP_PROFILE": ({"OMP_PROFILE": "work"}, ".omp/profiles/work/agent"),
    "PI_PROFILE": ({"PI_PROFILE": "work"}, ".omp/profiles/work/agent"),
    "a profile over PI_CODING_AGENT_DIR": ({"OMP_PROFILE": "work", "PI_CODING_AGENT_DIR": "/nonexistent/agent"},
                                           ".omp/profiles/work/agent"),
    "OMP_PROFILE=default over PI_PROFILE": ({"OMP_PROFILE": "default", "PI_PROFILE": "work"}, ".omp/agent"),
    "PI_CONFIG_DIR": ({"PI_CONFIG_DIR": ".omp-alt", "OMP_PROFILE": "work"}, ".omp-alt/profiles/work/agent"),
}


@pytest.mark.parametrize("case", list(PROFILES))
def test_omp_loads_the_extension_from_where_install_put_it(sandbox, case):
    environ, folder = PROFILES[case]
    box = sandbox("omp")
    box.env.update(environ)
    agent = box.home / folder
    if agent != box.harness.agent_dir(box):  # omp reads its model settings from that folder too
        agent.mkdir(parents=True)
        shutil.copyfile(box.harness.agent_dir(box) / "models.yml", agent / "models.yml")
    out = box.install().stdout.decode()
    assert f"created {agent / 'extensions' / 'lich.js'}" in archive.absolute(out, box.home), out
    done = box.run(box.harness.headless("Say hello."))
    shown = box.harness.session_id(done)
    assert box.accepted(1) == [("omp", shown)]
    assert list((agent / "sessions").glob(f"*/*_{shown}.jsonl"))  # omp ran in that folder


def test_one_lichhook_reports_several_tool_calls_in_order_and_dies_with_omp(omp):
    """Every event of a turn with three tool calls goes to one lichhook, reported once and
    in order; omp killed hard leaves no lichhook behind."""
    omp.model.script(tool_call("write", {"path": str(omp.project / "a.txt"), "content": "a\n"}),
                     tool_call("write", {"path": str(omp.project / "b.txt"), "content": "b\n"}),
                     tool_call("read", {"path": str(omp.project / "a.txt")}),
                     hold(120, text("Done.")))
    proc = omp.start(omp.harness.headless("Write a.txt and b.txt, then read a.txt."))
    try:
        tools = [("busy", "write", "a.txt"), ("busy", "write", "b.txt"), ("busy", "read", "a.txt")]
        seen = omp.timeline(until=lambda seen: tools[-1] in shorts(seen), settle=0.5)
        steps = [s for s in shorts(seen) if s[0] != "title"]
        assert [s for s in steps if len(s) == 3] == tools, steps
        assert steps[0] == ("start",) and steps.count(("touched",)) == 2, steps
        servers = lichhook_servers(omp)
        assert len(servers) == 1, servers  # one for the whole session
        (server, harness), = servers.items()
        os.kill(harness, signal.SIGKILL)
        assert wait_until(lambda: server not in lichhook_servers(omp), 10), lichhook_servers(omp)
    finally:
        proc.kill()
        proc.communicate()
