"""The stand-in for lich's command line (testkit/lichcli.py), run as the executable the
tests and the e2e put on PATH."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from testkit import lichcli


def _lich(tmp_path: Path, *argv: str, stdin: str = "", env: dict = None) -> subprocess.CompletedProcess:
    program = lichcli.install(tmp_path / "bin", tmp_path / "calls.jsonl")
    return subprocess.run([str(program), *argv], input=stdin.encode(), capture_output=True, timeout=30,
                          env=dict(env or {}, PATH="/usr/bin:/bin"))


def test_records_the_exact_argv_and_lich_env(tmp_path):
    prompt = "it's \"quoted\" $(touch x) `y`\nsecond line ü 東"
    done = _lich(tmp_path, "send", "--timeout", "30", "--", "docs", prompt,
                 env={"LICH_SESSION_ID": "s1", "LICH_PORT": "1", "OTHER": "x"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"done: {prompt}\n"
    (call,) = lichcli.calls(tmp_path / "calls.jsonl")
    assert call["argv"] == ["send", "--timeout", "30", "--", "docs", prompt]
    assert call["env"] == {"LICH_SESSION_ID": "s1", "LICH_PORT": "1"}


def test_json_shapes(tmp_path):
    peers = json.loads(_lich(tmp_path, "sessions", "--json").stdout)
    assert set(peers[0]) == {"label", "name", "project", "kind", "state", "id"}
    opened = json.loads(_lich(tmp_path, "open", "--kind", "claude", "--subagent", "--prompt", "go", "--json",
                              env={"LICH_SESSION_ID": "s1"}).stdout)
    assert set(opened) == {"id", "projectId", "project", "label", "name", "kind", "path", "nextSeq",
                           "originSessionId", "originLabel", "confined", "folder", "run", "delivery"}
    assert set(opened["delivery"]) == {"ticket", "target", "status", "answer"}
    assert set(json.loads(_lich(tmp_path, "worktrees", "--json").stdout)[0]) == {"name", "path", "dirty", "sessions"}
    assert set(json.loads(_lich(tmp_path, "folders", "--json").stdout)[0]) == {"name", "sessions"}
    assert "id" in json.loads(_lich(tmp_path, "whoami", "--json").stdout)


def test_usage_and_limit_errors_are_lichs(tmp_path):
    done = _lich(tmp_path, "send", "docs")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode().startswith("lich: usage: send [--project <name>]")
    done = _lich(tmp_path, "send", "docs", "x" * 8193)
    assert done.returncode == 1
    assert done.stderr.decode() == ("lich: prompt is 8193 bytes, over the 8192 limit: name the paths to read "
                                    "instead of pasting their contents\n")
    assert _lich(tmp_path, "control", "docs").returncode == 1
    assert _lich(tmp_path, "control", "docs", "abort").returncode == 0


def test_a_script_makes_a_command_answer_otherwise(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"wait": {"stdout": "still working\n", "exit": 3}}))
    done = _lich(tmp_path, "wait", "t-1", env={"LICHCLI_SCRIPT": str(script)})
    assert (done.returncode, done.stdout) == (3, b"still working\n")


def test_mcp_serves_lichs_fourteen_tools(tmp_path):
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05"}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_sessions"}},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}}]
    done = _lich(tmp_path, "mcp", stdin="".join(json.dumps(m) + "\n" for m in messages))
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert replies[0]["result"]["protocolVersion"] == "2024-11-05"
    assert [t["name"] for t in replies[1]["result"]["tools"]] == list(lichcli.TOOLS)
    assert len(lichcli.TOOLS) == 14
    assert replies[3]["error"]["code"] == -32602
    assert "tools/call" in lichcli.calls(tmp_path / "calls.jsonl")[-1]["stdin"]


def test_open_subagent_is_refused_before_opening_as_lich_refuses_it(tmp_path):
    """lich internal/cli/subagent_test.go: --prompt and a calling session are needed;
    --project, --folder and --private are refused; stderr names the flag; nothing opened."""
    inside = {"LICH_SESSION_ID": "s1"}
    for args, named, env in ((["--subagent"], "--prompt", inside),
                             (["--subagent", "--prompt", "x", "--project", "lich"], "--project", inside),
                             (["--subagent", "--prompt", "x", "--folder", "Apps"], "--folder", inside),
                             (["--subagent", "--prompt", "x", "--private"], "--private", inside),
                             (["--subagent", "--prompt", "x"], "LICH_SESSION_ID", {})):
        done = _lich(tmp_path, "open", *args, env=env)
        assert (done.returncode, done.stdout) == (1, b""), args
        assert named in done.stderr.decode(), (args, done.stderr)
    assert json.loads(_lich(tmp_path, "sessions", "--json").stdout) == lichcli.PEERS


def test_a_subagent_worker_is_listed_until_closed(tmp_path):
    inside = {"LICH_SESSION_ID": "s1"}
    first = json.loads(_lich(tmp_path, "open", "--kind", "claude", "--subagent", "--prompt", "a", "--json",
                             env=inside).stdout)
    second = json.loads(_lich(tmp_path, "open", "--kind", "claude", "--subagent", "--worktree", "subagent/b-1",
                              "--prompt", "b", "--json", env=inside).stdout)
    assert first["delivery"] == {"ticket": "t-1", "target": "Session 4", "status": "pending", "answer": ""}
    assert (second["label"], second["path"], second["originSessionId"]) == ("subagent/b-1", "/wt/subagent/b-1", "s1")
    listed = json.loads(_lich(tmp_path, "sessions", "--json").stdout)
    assert [p["id"] for p in listed] == ["a1b2", "c3d4", first["id"], second["id"]]
    assert _lich(tmp_path, "close", "--", first["name"], env=inside).stdout == b'Closed "Session 4".\n'
    assert [p["id"] for p in json.loads(_lich(tmp_path, "sessions", "--json").stdout)][2:] == [second["id"]]
    refused = _lich(tmp_path, "close", "s1", env=inside)
    assert (refused.returncode, refused.stderr) == (1, b"lich: a session cannot close itself\n")
    third = json.loads(_lich(tmp_path, "open", "--subagent", "--prompt", "c", "--json", env=inside).stdout)
    assert third["id"] not in (first["id"], second["id"])


def test_a_script_fails_the_open_before_or_after_lich_took_the_task(tmp_path):
    script = tmp_path / "script.json"
    env = {"LICH_SESSION_ID": "s1", "LICHCLI_SCRIPT": str(script)}
    script.write_text(json.dumps({"open": {"fail": "before"}}))
    before = _lich(tmp_path, "open", "--subagent", "--prompt", "a", "--json", env=env)
    assert (before.returncode, before.stdout) == (1, b"")
    script.write_text(json.dumps({"open": {"fail": "after"}}))
    after = _lich(tmp_path, "open", "--subagent", "--prompt", "a", "--json", env=env)
    assert after.returncode == 1 and "delivery" not in json.loads(after.stdout)
    assert after.stderr.decode().startswith('lich: the task did not reach "Session 4"')
    over = _lich(tmp_path, "open", "--subagent", "--prompt", "x" * 8193, "--json", env={"LICH_SESSION_ID": "s1"})
    assert over.returncode == 1 and json.loads(over.stdout)["id"] and b"8193 bytes" in over.stderr
    script.write_text(json.dumps({"open": {"status": "answered", "answer": "done"}}))
    answered = json.loads(_lich(tmp_path, "open", "--subagent", "--prompt", "a", "--json", env=env).stdout)
    assert answered["delivery"]["status"] == "answered" and answered["delivery"]["answer"] == "done"


def test_control_json_is_lichs_shape(tmp_path):
    done = json.loads(_lich(tmp_path, "control", "--json", "docs", "command", "compact").stdout)
    assert done == {"id": "c3d4", "project": "proj", "label": "docs", "action": "command", "value": "compact",
                    "command_id": "c-1", "state": "done"}
    assert "value" not in json.loads(_lich(tmp_path, "control", "--json", "docs", "abort").stdout)
