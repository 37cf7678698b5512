"""lich's own tools inside the real harnesses, with lich's command line stood in by
testkit.lichcli (which records every call): opencode's module runs lich's CLI with an argv
array; omp reaches lich's MCP server that install registered. lich's reading of what install
wrote (testkit.lichreading, as lich's Go code reads it) finds its plugin installed with tools."""

from __future__ import annotations

import json

import pytest

from testkit import lichcli, lichreading
from testkit.models import text, tool_call

pytestmark = pytest.mark.e2e

# Quotes, a command substitution, backticks, a newline and non-ASCII: a shell would change it.
PROMPT = 'it\'s "quoted" $(touch pwned) `touch pwned2`\nsecond line: ü 東 -- --timeout 1'


def untitled(request) -> bool:
    """Any request but a harness's own request for a session title (asked without tools)."""
    return bool(request.tool_names())


def titling(request) -> bool:
    return not request.tool_names()


def test_opencode_runs_lichs_cli_for_lichs_tools(sandbox, tmp_path):
    box = sandbox("opencode")
    box.install()
    lich = lichcli.install(tmp_path / "lich bin", tmp_path / "calls.jsonl")
    module = box.home / ".config" / "opencode" / "plugin" / "lich.js"
    assert lichreading.has_tools("opencode", module, "")
    box.model.script(text("Asking docs", when=titling),
                     tool_call("list_sessions", {}, when=untitled),
                     tool_call("send_to_session", {"session": "docs", "prompt": PROMPT, "timeout_seconds": 30},
                               when=untitled),
                     text("Sent.", when=untitled))
    done = box.run(box.harness.headless("Ask the docs session."), LICH_BIN=str(lich))
    argvs = [c["argv"] for c in lichcli.calls(tmp_path / "calls.jsonl")]
    assert argvs == [["sessions", "--json"], ["send", "--timeout", "30", "--", "docs", PROMPT]], box.describe(done)
    results = [r for request in box.model.model_requests() for r in request.tool_results()]
    assert any('"label": "docs"' in r for r in results), results
    assert any(f"done: {PROMPT}" in r for r in results), results
    assert not (box.project / "pwned").exists() and not (box.project / "pwned2").exists()


def test_omp_reaches_lichs_mcp_server_that_install_registered(sandbox, tmp_path):
    box = sandbox("omp")
    lich = lichcli.install(tmp_path / "lich bin", tmp_path / "calls.jsonl")
    done = box.lichhook("install", "omp", LICH_BIN=str(lich))
    assert done.returncode == 0, done.stderr.decode()
    agent = box.harness.agent_dir(box)
    assert lichreading.has_tools("omp", agent / "extensions" / "lich.js", str(lich))
    assert lichreading.document_command(agent / "mcp.json") == str(lich)
    # omp mounts MCP tools under xd:// devices by default; offered top-level, the model calls
    # them by name. omp names an MCP tool after its server: read the names it offers first.
    (agent / "config.yml").write_text("tools:\n  xdev: false\n")
    box.model.script(text("Looked."))
    box.run(box.harness.headless("Look."))
    offered = [n for r in box.model.model_requests() for n in r.tool_names()]
    names = {tool: next((n for n in offered if n.endswith(tool) and "lich" in n[:-len(tool)]), None)
             for tool in ("list_sessions", "send_to_session")}
    assert all(names.values()), " ".join(sorted(set(offered)))
    box.model.script(tool_call(names["list_sessions"], {}),
                     tool_call(names["send_to_session"], {"session": "docs", "prompt": PROMPT}),
                     text("Sent."))
    box.run(box.harness.headless("Ask the docs session."))
    served = "".join(c["stdin"] or "" for c in lichcli.calls(tmp_path / "calls.jsonl") if c["argv"] == ["mcp"])
    calls = [json.loads(line)["params"] for line in served.splitlines() if '"tools/call"' in line]
    assert [(c["name"], c.get("arguments") or {}) for c in calls] == [
        ("list_sessions", {}), ("send_to_session", {"session": "docs", "prompt": PROMPT})], served
    results = [r for request in box.model.model_requests() for r in request.tool_results()]
    assert any("send_to_session" in r and "second line" in r for r in results), results
