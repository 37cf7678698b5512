"""lichhook's Claude Code mods inside the real Claude Code (the pinned 2.1.332): installed
through the plugin route, its TUI in a pseudo-terminal against the fake model, and lich's
stand-in (``lichhook.standin``), which serves lich's mod endpoints with lich's rules (the
held poll, the detach rule, acks, usage, status, answers; session-state's /hook) and judges
every request the mods send."""

from __future__ import annotations

import json
import time
from typing import Callable, List, Optional

import pytest

from lichhook.contracts import RELEASE
from testkit import harnesses
from testkit.constants import LICH_SESSION
from testkit.models import hold, text

pytestmark = pytest.mark.e2e


def waited(find: Callable[[], object], timeout: float, what: str, box) -> object:
    """``find()`` once it is truthy; fails with what lich got when it is not within ``timeout``."""
    return harnesses.waited(find, timeout, what, lambda: "lich got:\n" + "\n".join(
        f"{r.status} {r.contract} {r.accepted or r.verdict}" for r in box.standin.reports))


def attached(box, timeout: float = 90) -> None:
    """The session's mod polls /mod/commands (lich queues commands only then)."""
    waited(lambda: box.standin.mods.attached(LICH_SESSION), timeout, "a poll from the mod", box)


def send(box, kind: str, **fields: object) -> str:
    return str(box.standin.enqueue({"kind": kind, **fields}, LICH_SESSION)["id"])


def ack(box, command_id: str, timeout: float = 60) -> dict:
    """The ack of ``command_id`` as lich took it (204), lich's normalised body."""
    found = waited(lambda: [r for r in box.standin.of("mod-acks") if (r.accepted or {}).get("id") == command_id],
                   timeout, f"the ack of {command_id}", box)
    report = found[0]  # type: ignore[index]
    assert report.status == 204 and report.release == RELEASE, report
    return dict(report.accepted)


def states(box) -> List[Optional[str]]:
    return [(r.accepted or {}).get("state") for r in box.standin.of("session-state")]


def tui_session(sandbox):
    """Claude Code with lichhook installed through its plugin manager, in lich."""
    box = sandbox("claude").plugin_route()
    box.install()
    return box


def model_requests(box) -> List[dict]:
    return [r.body for r in box.model.model_requests()]


def test_lich_drives_a_tui_session_and_hears_its_figures(sandbox):
    box = tui_session(sandbox)
    box.standin.mods.status[LICH_SESSION] = {"owed": [{"ticket": "b1", "from": "docs", "asked": "which file?"}],
                                             "open": [{"ticket": "c2", "target": "tests", "state": "busy"}],
                                             "ready": []}
    with box.harness.tui(box) as tui:
        attached(box)
        # the footer: lich's errands, read every 5 s
        tui.wait_for(box.harness.mode_label(r'lich: owes "docs" an answer, 1 task out'), 30)
        read = box.standin.of("mod-status")[0]
        assert read.status == 200 and read.release == RELEASE

        # a prompt becomes a turn, and is acked once it entered
        box.model.script(text("Hello from the fake model."))
        sent = send(box, "prompt", text="say hello to lich")
        assert ack(box, sent) == {"session_id": LICH_SESSION, "id": sent, "kind": "prompt", "ok": True, "error": "",
                                  "answer": ""}
        tui.wait_for(r"Hello from the fake model\.", 60)
        assert any("say hello to lich" in json.dumps(body) for body in model_requests(box))

        # after the turn, Claude Code's own figures, taken by lich's rules (204)
        usage = waited(lambda: [r for r in box.standin.of("mod-usage") if (r.accepted or {}).get("context", {}).get("tokens")],
                       60, "a usage report after the turn", box)[-1]  # type: ignore[index]
        assert usage.status == 204 and usage.release == RELEASE, usage
        body = usage.accepted
        assert body["session_id"] == LICH_SESSION and body["conversation_id"]
        assert body["context"]["window"] > 0 and body["context"]["tokens"] > 0
        assert all(r.status == 204 for r in box.standin.of("mod-usage")), box.standin.of("mod-usage")

        # model and effort reach the next model request
        for kind, value in (("model", "claude-opus-4-6"), ("effort", "low")):
            assert ack(box, send(box, kind, **{kind: value}))["ok"] is True
        box.model.script(text("Overridden."))
        before = len(model_requests(box))
        assert ack(box, send(box, "prompt", text="once more"))["ok"] is True
        tui.wait_for(r"Overridden\.", 60)
        request = next(b for b in model_requests(box)[before:] if "once more" in json.dumps(b))
        assert request["model"] == "claude-opus-4-6", request.get("model")
        # a model that takes effort (Claude Code sends none to one that does not)
        assert request.get("output_config", {}).get("effort") == "low", \
            {k: v for k, v in request.items() if k not in ("messages", "system", "tools")}

        # /compact: compacting, then done, once each (the plugin's PreCompact and PostCompact hooks)
        box.model.script(text("Summary of the conversation.", when=lambda r: True))
        tui.type_line("/compact")
        after = waited(lambda: (lambda s: s[s.index("compacting"):] if "compacting" in s and "done" in
                                s[s.index("compacting"):] else None)(states(box)), 90, "compacting then done", box)
        time.sleep(3)  # a second report of either would have come by now
        after = states(box)[states(box).index("compacting"):]
        assert after[:2] == ["compacting", "done"] and after.count("compacting") == after.count("done") == 1, after


def test_abort_command_and_ask_from_lich(sandbox):
    box = tui_session(sandbox)
    with box.harness.tui(box) as tui:
        attached(box)
        # abort stops a long turn
        box.model.script(hold(120, text("too late")))
        assert ack(box, send(box, "prompt", text="take your time"))["ok"] is True
        box.model.wait_for(lambda rs: any("take your time" in r.text() for r in rs), 60)
        aborted = ack(box, send(box, "abort"))
        assert aborted["ok"] is True, aborted
        # the session is free at once: the next prompt is answered long before the held reply
        box.model.script(text("Free again."))
        assert ack(box, send(box, "prompt", text="are you free?"), 30)["ok"] is True
        tui.wait_for(r"Free again\.", 30)
        assert "too late" not in tui.text()

        # a built-in slash command runs (and the mods go on after it)
        ran = ack(box, send(box, "command", name="clear"), 90)
        assert ran["ok"] is True, ran

        # ask: answered from a fork of the session's transcript, outside the turn
        box.model.script(text("First answer."))
        assert ack(box, send(box, "prompt", text="remember the word kumquat"))["ok"] is True
        tui.wait_for(r"First answer\.", 60)
        box.model.script(text("You asked about kumquat.", when=lambda r: "side question" in r.text()))
        asked = ack(box, send(box, "ask", question="what word?"), 90)
        assert asked["ok"] is True and asked["answer"] == "You asked about kumquat.", asked


def test_headless_runs_send_nothing_to_the_mod_endpoints(sandbox):
    box = sandbox("claude").plugin_route()
    box.install()
    box.run(box.harness.headless("Say hi."))
    time.sleep(3)
    assert box.standin.of("session-start"), "the run was inside lich: its command hooks reported"
    mods = [r for r in box.standin.reports if r.contract.startswith("mod-")]
    assert mods == [], mods
    assert "compacting" not in states(box)
    assert not box.standin.mods.attached(LICH_SESSION)


def test_a_worker_posts_its_final_answer(sandbox):
    box = tui_session(sandbox)
    box.env["LICH_SUBAGENT_DEPTH"] = "1"  # lich opened this session as a sub-agent worker
    with box.harness.tui(box) as tui:
        attached(box)
        box.model.script(text("Rewrote docs/cli.md; the tests pass."))
        tui.type_line("rewrite the cli docs")
        answer = waited(lambda: box.standin.of("mod-answer"), 60, "the worker's answer", box)[0]  # type: ignore[index]
        assert answer.status == 204 and answer.release == RELEASE, answer
        assert answer.accepted["text"] == "Rewrote docs/cli.md; the tests pass.", answer.accepted


def fnv1a(text: str) -> str:
    """FNV-1a 32 over the path's UTF-16 code units, as lich-plugin names its markers."""
    value = 0x811C9DC5
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        value = ((value ^ int.from_bytes(data[i:i + 2], "little")) * 0x01000193) & 0xFFFFFFFF
    return f"{value:08x}"


def test_an_edit_of_a_file_another_session_just_edited_is_told(sandbox):
    import subprocess

    from testkit.models import tool_call

    box = tui_session(sandbox)
    subprocess.run(["git", "init", "-q", str(box.project)], check=True)
    target = box.project / "shared.txt"
    markers = box.project / ".git" / "lich-edits"
    markers.mkdir()
    (markers / fnv1a(str(target))).write_text(json.dumps(
        {"path": str(target), "session": "another-card", "at": int(time.time() * 1000) - 120_000}))
    box.model.script(tool_call("Write", {"file_path": str(target), "content": "mine\n"}), text("Written."))
    with box.harness.tui(box, "--allowedTools", "Write") as tui:
        attached(box)
        tui.type_line("write shared.txt")
        tui.wait_for(r"Written\.", 60)
        # a session lich does not list (no LICH_BIN here) is told by its id
        tui.wait_for(box.harness.mode_label(r"lich: shared\.txt also edited by another-card"), 10)
    after = [r for r in box.model.model_requests() if "tool_result" in json.dumps(r.body)]
    told = [r for r in after if f"The lich session another-card also edited {target} in the last " in json.dumps(r.body)]
    assert told, box.model.log()[-3000:]
    mine = json.loads((markers / fnv1a(str(target))).read_text())
    assert mine["session"] == LICH_SESSION and mine["path"] == str(target)


def test_the_mods_unit_tests_pass_on_claude_codes_own_engine(sandbox, pyz, tmp_path):
    """tests/claude-engine/*.test.ts, run by `claude plugin test` beside the mods of the
    release the build writes (Claude Code's own dispatch, `$` and mock clock)."""
    import shutil
    from pathlib import Path

    import build_zipapp

    box = sandbox("claude")
    plugin = tmp_path / "plugin"
    shutil.copytree(build_zipapp.release_dir(pyz), plugin)
    tests = sorted((Path(__file__).resolve().parent.parent / "claude-engine").glob("*.test.ts"))
    assert tests
    for path in tests:
        shutil.copy(path, plugin / "hooks" / path.name)
    done = box.run(["claude", "plugin", "test", str(plugin)], lich=False, timeout=300)
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert " 0 fail" in out and "(fail)" not in out, out
    assert f" {out.count('(pass)')} pass" in out and out.count("(pass)") >= 6, out
