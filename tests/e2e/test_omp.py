"""omp with lichhook's extension installed: a session switched to in place (resume, /new,
/fork, a branch) is reported; a sub-agent's session belongs to its parent's card and is not;
under a profile omp loads the extension from where install put it."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from testkit.models import hold, text, tool_call

pytestmark = pytest.mark.e2e

SUB_TASK = "Say what you see in the project folder."


@pytest.fixture
def omp(sandbox):
    return sandbox("omp", installed=True)


def test_a_resumed_session_is_reported_on_session_switch(omp):
    earlier = omp.harness.session_id(omp.run(omp.harness.headless("Start.")))
    (earlier_file,) = omp.harness.session_files(omp, earlier)
    assert omp.accepted(1) == [("omp", earlier)]
    # A second omp, driven as an editor drives it, starts a session and then resumes the
    # earlier one in the same process: omp emits session_switch for the resume.
    rpc = omp.harness.rpc(omp)
    fresh = rpc.call("get_state")["data"]["sessionId"]
    assert omp.standin.wait_for(2, timeout=20)[-1].accepted["provider_session_id"] == fresh
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


def test_new_fork_and_resume_in_the_tui_are_reported(omp):
    """/new, /fork and /resume, typed in omp's TUI, each make omp emit session_switch."""
    ids = []

    def reported(n: int) -> str:
        reports = omp.standin.wait_for(n, timeout=20)
        assert len(reports) == n, [r.accepted for r in reports]
        return reports[-1].accepted["provider_session_id"]

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
    assert f"created {agent / 'extensions' / 'lichhook.js'}" in out, out
    done = box.run(box.harness.headless("Say hello."))
    shown = box.harness.session_id(done)
    assert box.accepted(1) == [("omp", shown)]
    assert list((agent / "sessions").glob(f"*/*_{shown}.jsonl"))  # omp ran in that folder
