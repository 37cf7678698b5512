"""``codex-waits session-start`` through the archive: what a Codex session is told on
SessionStart (its id, how to keep waits, its open waits), and that it never fails."""

from __future__ import annotations

import json

import pytest

SID = "01a22ef8-2bf2-71b1-b5b8-ee3e67e5b6fe"
PAYLOAD = {"session_id": SID, "transcript_path": None, "cwd": "/home/u/proj", "hook_event_name": "SessionStart",
           "model": "gpt-5.5", "permission_mode": "default", "source": "startup"}


def hook(run, payload, *args, env=None):
    result = run("codex-waits", "session-start", *args, stdin=json.dumps(payload), env=env)
    assert result.returncode == 0
    out = result.stdout.decode("ascii")  # ASCII only: no console code page can garble it
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out), result.stderr.decode()


def test_the_model_is_told_its_session_id_and_how_to_keep_waits(run):
    out, err = hook(run, PAYLOAD)
    assert set(out) == {"hookSpecificOutput"} and err == ""
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(f"[lichhook waits] Your Codex session id is {SID}. No tool tells you this id")
    assert f"call the claude_code_wait tool of the lichhook MCP server with session {SID}" in text
    assert "choose a short name of your own" in text


def test_a_resumed_session_is_told_its_name_and_open_waits(run, tmp_path):
    waits = str(tmp_path / "waits")
    for what in ("CI run 4512", "review of change 77"):
        added = run("wait", "add", "--by", "reviewer", "--session", SID, "--what", what, "--waits-dir", waits)
        assert added.returncode == 0, added.stderr
    run("wait", "watched", "--by", "reviewer", "--session", SID, "--id", "w2", "--waits-dir", waits)
    out, _ = hook(run, dict(PAYLOAD, source="resume"), waits)
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "Your waits are kept under the name reviewer@" in text
    assert "Your open waits (2):" in text
    assert "- w1: CI run 4512 (open: neither watched nor said, since " in text
    assert "- w2: review of change 77 (watched, since " in text


@pytest.mark.parametrize("stdin,said", [
    ("not json", "lichhook SessionStart hook told the model nothing about its waits"),
    (json.dumps({"source": "startup"}), "the hook payload on stdin has no session_id"),
    (json.dumps({"session_id": "../../x"}), "session id '../../x' contains '/'"),
    (json.dumps({"session_id": 7}), "session id must be a string"),
])
def test_a_bad_payload_tells_the_user_and_never_fails(run, stdin, said):
    result = run("codex-waits", "session-start", stdin=stdin)
    assert result.returncode == 0
    out = json.loads(result.stdout)
    assert set(out) == {"systemMessage"} and said in out["systemMessage"]
    assert said in result.stderr.decode()


def test_a_named_waits_folder_that_is_missing_is_said_and_the_id_still_given(run, tmp_path):
    out, err = hook(run, PAYLOAD, str(tmp_path / "nowhere"))
    assert f"Your Codex session id is {SID}." in out["hookSpecificOutput"]["additionalContext"]
    assert "does not exist" in out["systemMessage"] and "does not exist" in err


def test_usage_errors_exit_1_and_never_print_on_stdout(run):
    for args in ((), ("stop",)):
        result = run("codex-waits", *args, stdin="{}")
        assert result.returncode == 1 and result.stdout == b""
        assert "expected session-start" in result.stderr.decode()
    result = run("codex-waits", "session-start", "a", "b", stdin=json.dumps(PAYLOAD))
    assert result.returncode == 0 and "at most one argument" in json.loads(result.stdout)["systemMessage"]


def test_both_harnesses_are_told_the_same_text_each_in_its_own_voice():
    """One text for the model: Codex's says ``by NAME`` (the MCP tool's argument) where
    Claude Code's says ``--by NAME`` (the wait command's), and nothing else differs in the
    lines they share."""
    from lichhook.waits.hooks.text import CLI, TOOL, instructions

    for name in (None, "rev@box"):
        claude = instructions("s-1", name, CLI, "wait <op> --by WHO --session s-1")
        codex = instructions("s-1", name, TOOL, "")
        assert codex[0] == claude[0].replace("Claude Code", "Codex")
        assert codex[2] == claude[2].replace("--by", "by")
        assert "--" not in codex[1] and "claude_code_wait" in codex[1]
    assert len(claude) == 4 and len(codex) == 3  # the Stop hook's line: Codex runs no Stop hook of lichhook's
