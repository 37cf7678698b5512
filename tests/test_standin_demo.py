"""``listen`` and ``demo``: the stand-in judges like lich; demo shows every built-in accepted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from testkit.servers import post


def demo_sections(out: str) -> dict:
    """provider -> the lines of its table in demo's output."""
    sections: dict = {}
    current = None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            current = line.split(" ", 1)[0]
            sections[current] = []
        elif current and line.strip():
            sections[current].append(line)
    return sections


def test_demo_shows_each_harness_session_start_to_end(run):
    done = run("demo", timeout=180)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    sections = demo_sections(out)
    life = {}
    for provider in ("claude", "codex", "antigravity", "crush", "opencode", "omp"):
        header, *rows = sections[provider]
        assert header.split() == ["event", "sent", "lich", "stdout"]
        for row in rows:  # every report accepted; a step may rightly send nothing
            assert re.search(r"  204(  |$)", row) or "nothing sent" in row, (provider, row)
        life[provider] = "\n".join(rows)
        assert "start " in life[provider], provider
    # Every report kind each harness can send, across its session.
    for provider in ("claude", "codex", "opencode"):
        for word in ("busy", "tool=", "waiting  reason=", "done", "title '", "touched"):
            assert word in life[provider], (provider, word)
    assert "idle" in life["claude"] and "idle" in life["codex"]
    for word in ("busy", "tool=", "done", "title '", "touched"):
        assert word in life["antigravity"] and word in life["omp"], word
    assert "touched" in life["crush"] and "busy" not in life["crush"]
    assert '{"decision":"allow"}' in life["antigravity"] and '{"decision":""}' in life["antigravity"]
    assert "reports accepted by the lich stand-in" in out


def test_demo_runs_each_hook_as_it_was_run_itself(pyz, base_env):
    # Started isolated and without site, as hooks may be registered, demo starts its
    # hooks the same way.
    done = subprocess.run([sys.executable, "-I", "-S", str(pyz), "demo"], env=base_env, capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    probe = "import sys; sys.path.insert(0, sys.argv[1]); from lichhook.selfcmd import self_command; print(self_command())"
    for flags, expected in (([], []), (["-I"], ["-I"]), (["-I", "-S"], ["-I", "-S"]), (["-S"], ["-S"])):
        out = subprocess.run([sys.executable, *flags, "-c", probe, str(pyz)], env=base_env, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == repr([sys.executable, *expected, str(pyz)]), flags


def test_demo_fails_when_a_built_in_is_refused(run, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "broken_codex.py").write_text(
        "from lichhook import Adapter, hookimpl\n"
        "class C(Adapter):\n"
        "    provider = 'codex'\n"
        "    sample = {'session_id': 'a/b'}\n"
        "    def session_id(self, p, e): return p.get('session_id')\n"
        "@hookimpl\n"
        "def lichhook_adapters(): return [C()]\n")
    done = run("demo", env={"LICHHOOK_PLUGIN_DIR": str(plugins)}, timeout=180)
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "nothing sent" in demo_sections(out)["codex"][1]
    assert "codex: nothing sent for its whole session" in out


def test_standin_judges_like_lich():
    from lichhook.standin import StandIn

    good = json.dumps({"session_id": "s1", "provider_session_id": "abc", "provider": "omp"}).encode()
    with StandIn(token="tok") as s:
        assert post(s.port, "/session-start", "tok", good)[0] == 204
        assert post(s.port, "/session-start", "bad", good)[0] == 401
        assert post(s.port, "/session-start", "tok", b"", method="GET")[0] == 405
        assert post(s.port, "/elsewhere", "tok", good)[0] == 404
        status, reason = post(s.port, "/session-start", "tok", b"{")
        assert (status, reason) == (400, b"body must be a JSON object\n")
        big = json.dumps({"session_id": "s1", "provider_session_id": "x" * 5000}).encode()
        assert post(s.port, "/session-start", "tok", big)[0] == 400  # cut at 4 KiB: no longer JSON
        assert post(s.port, "/hook", "tok", json.dumps({"session_id": "s1", "state": "busy"}).encode())[0] == 204
        assert [r.status for r in s.reports] == [204, 401, 405, 404, 400, 400, 204]
        assert [r.contract for r in s.reports] == ["session-start"] * 3 + [""] + ["session-start"] * 2 + ["session-state"]
        assert [r.status for r in s.of("session-state")] == [204]


def test_listen_prints_exports_and_each_report(pyz, base_env, run):
    proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--port", "0", "--token", "tk-1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_env, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        text = "".join(lines)
        port = int(re.search(r"127\.0\.0\.1:(\d+)/session-start, /hook, /session-title, /session-touched",
                             text).group(1))
        assert f"LICH_PORT={port}" in text and "LICH_TOKEN=tk-1" in text and "LICH_SESSION_ID=" in text
        assert f"$env:LICH_PORT = '{port}'" in text
        env = {"LICH_PORT": str(port), "LICH_TOKEN": "tk-1", "LICH_SESSION_ID": "lichhook-demo"}
        run("omp", stdin=json.dumps({"type": "session_start", "session_id": "omp-1"}), env=env)
        deadline = time.monotonic() + 10
        seen = ""
        while "omp-1" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert "204 accepted  session-start  provider=omp" in seen and "omp-1" in seen
        run("omp", "tool_call", stdin=json.dumps({"type": "tool_call", "session_id": "omp-1", "toolName": "bash",
                                                  "input": {"command": "ls"}}), env=env)
        while "tool=bash" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert "204 accepted  session-state  busy  tool=bash  detail=ls" in seen
    finally:
        proc.terminate()
        proc.wait(timeout=10)
