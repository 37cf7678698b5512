"""Sub-agent cards inside the real Claude Code (the pinned 2.1.332): lichhook installed through
the plugin route, its TUI in a pseudo-terminal against the fake model, scripted to call the
Agent tool and later TaskStop, with the stand-in for lich's command line
(``testkit.lichcli``, recording every call) as ``$LICH_BIN``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from testkit import harnesses, lichcli
from testkit.constants import LICH_SESSION
from testkit.models import offers_tools, text, tool_call

pytestmark = pytest.mark.e2e

MARK = "MAIN-LOOP-7q"  # in every request of the main conversation, in none of a sub-agent's
TASK = "Port the parser to the new AST and run its tests; report what changed."
AGENT = {"description": "port the parser", "prompt": TASK, "subagent_type": "general-purpose"}


def main_loop(request) -> bool:
    return offers_tools(request) and MARK in request.text()


def sub_agent(request) -> bool:
    return offers_tools(request) and MARK not in request.text() and TASK in request.text()


def in_lich(sandbox, tmp_path: Path, **env: str):
    """Claude Code with lichhook's plugin, in lich, with lich's command line standing in."""
    box = sandbox("claude").plugin_route()
    box.install()
    record = tmp_path / "lich-calls.jsonl"
    box.env["LICH_BIN"] = str(lichcli.install(tmp_path / "lich bin", record))
    box.env.update(env)
    return box, record


def argvs(record: Path) -> list:
    return [c["argv"] for c in lichcli.calls(record)]


def waited(find, timeout: float, what: str, box) -> object:
    return harnesses.waited(find, timeout, what, lambda: "the model got:\n" + box.model.log()[-6000:])


def ready(box, tui) -> None:
    """The TUI at its prompt with the mods loaded (their poll reached lich)."""
    waited(lambda: box.standin.mods.attached(LICH_SESSION), 90, "a poll from the mods", box)
    time.sleep(1)


def results_after(box, marker: str) -> str:
    """Every tool result the main loop's requests carried, as one text."""
    return "\n".join(json.dumps(r.body) for r in box.model.model_requests() if main_loop(r) and marker in r.text())


def test_an_agent_call_opens_a_lich_card_and_task_stop_closes_it(sandbox, tmp_path):
    box, record = in_lich(sandbox, tmp_path)
    box.model.script(tool_call("Agent", AGENT, when=main_loop), text("Launched it on a card.", when=main_loop))
    with box.harness.tui(box) as tui:
        ready(box, tui)
        tui.type_line(f"{MARK} delegate the parser port")
        tui.wait_for(r"Launched it on a card\.", 90)
        assert argvs(record) == [["open", "--kind", "claude", "--subagent", "--prompt", TASK, "--json"]], argvs(record)
        seen = results_after(box, "tool_result")
        assert "Async agent launched successfully" in seen and "agentId: w1" in seen, seen[-3000:]
        assert 'lich session \\"Session 4\\"' in seen, seen[-3000:]
        assert not [r for r in box.model.model_requests() if sub_agent(r)], "no native sub-agent ran"
        tui.wait_for(box.harness.mode_label(r"lich: 1 worker"), 20)

        # lich brings the worker's report back as a note at this prompt (its relay, through the mods)
        box.model.script(text("The parser is ported.", when=main_loop))
        note = "[lich] Session 4 finished (ticket t-1): parser ported, 41 tests pass"
        box.standin.enqueue({"kind": "prompt", "text": note,
                             "notification": {"status": "completed", "summary": 'lich session "Session 4" finished'}},
                            LICH_SESSION)
        tui.wait_for(r"The parser is ported\.", 90)
        assert "parser ported, 41 tests pass" in results_after(box, "41 tests pass")

        box.model.script(tool_call("TaskStop", {"task_id": "w1"}, when=main_loop), text("Stopped it.", when=main_loop))
        tui.type_line(f"{MARK} stop that agent")
        tui.wait_for(r"Stopped it\.", 90)
        assert argvs(record)[1:] == [["close", "--", "session-4-w1"]], argvs(record)
        stop = results_after(box, "stop that agent")
        assert "Closed the lich session" in stop, stop[stop.rfind("tool_result") - 200:][:3000]
    assert all(c["env"].get("LICH_SESSION_ID") for c in lichcli.calls(record))


def test_at_lichs_depth_limit_the_native_sub_agent_runs(sandbox, tmp_path):
    box, record = in_lich(sandbox, tmp_path, LICH_SUBAGENT_DEPTH="2", LICH_SUBAGENT_CARDS="off")
    box.model.script(tool_call("Agent", AGENT, when=main_loop), text("Native sub-agent report.", when=sub_agent),
                     text("Done.", when=main_loop))
    # the default mode: auto mode would ask its classifier (the fake model) about the native agent
    with box.harness.tui(box, "--permission-mode", "default") as tui:
        ready(box, tui)
        tui.type_line(f"{MARK} delegate the parser port")
        waited(lambda: [r for r in box.model.model_requests() if sub_agent(r)], 90, "the native sub-agent's request",
               box)
        tui.wait_for(r"Done\.", 90)
    assert [a for a in argvs(record) if a[:1] == ["open"]] == [], argvs(record)


def test_a_headless_run_never_opens_a_card(sandbox, tmp_path):
    box, record = in_lich(sandbox, tmp_path)
    box.model.script(tool_call("Agent", AGENT, when=main_loop), text("Native sub-agent report.", when=sub_agent),
                     text("Done.", when=main_loop))
    box.run(box.harness.headless(f"{MARK} delegate the parser port"))
    assert [r for r in box.model.model_requests() if sub_agent(r)], box.model.log()[-4000:]
    assert [a for a in argvs(record) if a[:1] == ["open"]] == [], argvs(record)


def test_a_report_lich_already_has_is_the_agents_result(sandbox, tmp_path):
    """A worker that answered within lich's hand-off: the Agent call answers as a finished agent,
    in the shape Claude Code validates for its own."""
    script = tmp_path / "lich-script.json"
    script.write_text(json.dumps({"open": {"status": "answered", "answer": "Parser ported; 41 tests pass."}}))
    box, record = in_lich(sandbox, tmp_path, LICHCLI_SCRIPT=str(script))
    box.model.script(tool_call("Agent", AGENT, when=main_loop), text("It is done.", when=main_loop))
    with box.harness.tui(box) as tui:
        ready(box, tui)
        tui.type_line(f"{MARK} delegate the parser port")
        tui.wait_for(r"It is done\.", 90)
    seen = results_after(box, "tool_result")
    assert "Parser ported; 41 tests pass." in seen and "agentId: w1" in seen, seen[-3000:]
    assert [a[0] for a in argvs(record)] == ["open"]
    assert not [r for r in box.model.model_requests() if sub_agent(r)], "no native sub-agent ran"
