"""Codex with lichhook installed: the SessionStart hook runs once trusted, and Codex sees
lichhook's MCP server."""

from __future__ import annotations

import json

import pytest

from testkit.archive import installed_copy
from testkit.models import hold, text

pytestmark = pytest.mark.e2e


@pytest.fixture
def codex(sandbox):
    return sandbox("codex", installed=True)


def test_an_untrusted_hook_is_skipped_and_a_trusted_one_reports(codex):
    # Codex skips a hook nobody has trusted yet without a word; the session still runs.
    untrusted = codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert codex.harness.session_id(untrusted)
    assert codex.reports(0) == []
    trusted = codex.run(codex.harness.headless("Say hello."))
    assert codex.accepted(1) == [("codex", codex.harness.session_id(trusted))]


def test_the_report_arrives_while_the_model_still_holds_its_answer(codex):
    codex.model.script(hold(10, text("Finally.")))
    proc = codex.start(codex.harness.headless("Say hello."))
    assert codex.model.wait_for(lambda requests: any(r.reply for r in requests), timeout=60), codex.model.log()
    # SessionStart ran before the first model call: lich knows the id before any answer.
    early = codex.standin.wait_for(1, timeout=5)
    assert proc.poll() is None, "codex ended while the model was still holding its answer"
    done = codex.finish(proc)
    assert [(r.status, r.accepted["provider_session_id"]) for r in early] == [(204, codex.harness.session_id(done))]
    assert codex.accepted(1) == [("codex", codex.harness.session_id(done))]


def test_codex_lists_the_lichhook_mcp_server(codex):
    done = codex.run(["codex", "mcp", "list", "--json"], lich=False)
    servers = {s["name"]: s for s in json.loads(done.stdout)}
    transport = servers["lichhook"]["transport"]
    assert servers["lichhook"]["enabled"] is True
    archive = installed_copy(codex.home)
    assert (transport["type"], transport["args"]) == ("stdio", ["-I", "-S", str(archive), "mcp"])
    plain = codex.run(["codex", "mcp", "list"], lich=False).stdout.decode()
    assert "lichhook" in plain and "enabled" in plain
