"""What the model reaches through skills, in the real harnesses (Claude Code 2.1.332's TUI and
Codex 0.171.0 against the fake model, lichhook installed through the plugin route, lich's
stand-in): a built-in slash command of the session's own, asked for through Claude Code's
Skill tool, runs once the turn has ended (lichhook/js/claude/selfcommand.js); and
``/lich:theme`` is lichhook's theme skill, with the installed lichhook's theme check written
in, in Claude Code and in Codex."""

from __future__ import annotations

import json

import pytest

from testkit import lichcli
from testkit.models import text, tool_call
from test_claude_mods import attached, states, tui_session, waited

pytestmark = pytest.mark.e2e


def test_the_models_skill_call_for_a_built_in_runs_it_after_the_turn(sandbox):
    box = tui_session(sandbox)
    box.model.script(tool_call("Skill", {"skill": "compact"}), text("It runs once this turn ends."))
    with box.harness.tui(box) as tui:
        attached(box)
        tui.type_line("please run /compact for me")
        tui.wait_for(r"It runs once this turn ends\.", 90)
        # /compact ran: the plugin's PreCompact and PostCompact hooks told lich
        after = waited(lambda: (lambda s: s[s.index("compacting"):] if "compacting" in s and "done" in
                                s[s.index("compacting"):] else None)(states(box)), 90, "compacting then done", box)
        assert after[:2] == ["compacting", "done"], after
    answered = [r.body for r in box.model.model_requests() if "It runs once" not in json.dumps(r.body)
                and "tool_result" in json.dumps(r.body)]
    assert any("/compact is queued on this session and runs once your turn has ended" in json.dumps(b)
               for b in answered), box.model.log()[-3000:]
    skill_tool = next(t for b in answered for t in b.get("tools", []) if t.get("name") == "Skill")
    assert "In this lich session a built-in slash command of Claude Code" in skill_tool["description"]


def test_control_session_aimed_at_itself_by_its_label_runs_its_own_built_in(sandbox, tmp_path):
    """lich's tools from lich's MCP server (the stand-in CLI's `mcp`, which refuses a session
    controlling itself as lich does), the session named by the label `lich whoami` gives it."""
    box = tui_session(sandbox)
    record = tmp_path / "calls.jsonl"
    lich = lichcli.install(tmp_path / "lich bin", record)
    box.env["LICH_BIN"] = str(lich)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"lich": {"command": str(lich), "args": ["mcp"]}}}))
    box.model.script(tool_call("mcp__lich__control_session", {"session": "Me", "action": "command", "value": "/compact"}),
                     text("Queued; ending the turn."))
    with box.harness.tui(box, "--mcp-config", str(config), "--allowedTools", "mcp__lich__control_session") as tui:
        attached(box)
        tui.type_line("compact yourself")
        tui.wait_for(r"Queued; ending the turn\.", 90)
        after = waited(lambda: (lambda s: s[s.index("compacting"):] if "compacting" in s and "done" in
                                s[s.index("compacting"):] else None)(states(box)), 90, "compacting then done", box)
        assert after[:2] == ["compacting", "done"], after
    runs = [c["argv"] for c in lichcli.calls(record) if c["argv"][:1] != ["mcp"]]
    assert runs == [["whoami", "--json"]], runs
    served = "".join(c["stdin"] or "" for c in lichcli.calls(record) if c["argv"] == ["mcp"])
    assert '"control_session"' in served, served
    results = [r for request in box.model.model_requests() for r in request.tool_results()]
    assert any("/compact is queued on this session" in r for r in results), results


def test_lich_theme_is_lichhooks_skill_with_its_theme_check(sandbox):
    box = tui_session(sandbox)
    box.model.script(text("Which palette shall it be?"))
    with box.harness.tui(box) as tui:
        attached(box)
        tui.type_line("/lich:theme a harbour theme")
        tui.wait_for(r"Which palette shall it be\?", 90)
    turns = [json.dumps(r.body) for r in box.model.model_requests() if r.tool_names()]
    said = next((t for t in turns if "a harbour theme" in t), "")
    assert "# A lich colour theme" in said and "@LICHHOOK@" not in said, [t[:2000] for t in turns]
    assert "lichhook.pyz theme check <theme.json or repository folder>" in said, said[:3000]


def test_claude_codes_validator_takes_the_release_with_its_mods_and_skill(sandbox, pyz):
    """`claude plugin validate` reads the mods as Claude Code's loader does (a module it
    refuses never loads) and the skill's frontmatter."""
    import build_zipapp

    box = sandbox("claude")
    done = box.run(["claude", "plugin", "validate", str(build_zipapp.release_dir(pyz))], lich=False, timeout=120)
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert "Validation passed" in out and "error" not in out.lower(), out
    assert "tool.call{tool=Skill}" in out and "tool.call{tool=mcp__lich__control_session}" in out, out


def test_codex_offers_lich_theme_from_lichhooks_plugin(sandbox):
    """Codex 0.171.0 lists a plugin's skills in what the model reads: `codex debug
    prompt-input` renders it, as lichhook's plugin (its manifest names "skills") installed it."""
    box = sandbox("codex").plugin_route()
    box.install()
    done = box.run(["codex", "debug", "prompt-input", "hi"], lich=False, timeout=120)
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 0, out
    assert "- lich:theme: Make, port or repair a colour theme for lich" in out, out
    assert "/skills/theme/SKILL.md)" in out, out
