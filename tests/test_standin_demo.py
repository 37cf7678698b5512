"""``listen`` and ``demo``: the stand-in judges like lich; demo shows every built-in accepted."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from testkit.servers import post


def test_demo_accepts_all_six_built_ins(run):
    done = run("demo", timeout=120)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    for provider in ("claude", "codex", "antigravity", "crush", "opencode", "omp"):
        (row,) = [line for line in out.splitlines() if line.startswith(provider + " ")]
        assert "204 accepted" in row
    antigravity = [line for line in out.splitlines() if line.startswith("antigravity ")][0]
    assert "{}" in antigravity
    assert "All 6 built-in reports accepted" in out


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
    done = run("demo", env={"LICHHOOK_PLUGIN_DIR": str(plugins)}, timeout=120)
    assert done.returncode == 1
    assert "nothing sent" in done.stdout.decode()


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
        assert post(s.port, "/session-start", "tok", big)[0] == 400
        assert [r.status for r in s.reports] == [204, 401, 405, 404, 400, 400]


def test_listen_prints_exports_and_each_report(pyz, base_env, run):
    proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--port", "0", "--token", "tk-1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_env, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        text = "".join(lines)
        port = int(re.search(r"127\.0\.0\.1:(\d+)/session-start", text).group(1))
        assert f"LICH_PORT={port}" in text and "LICH_TOKEN=tk-1" in text and "LICH_SESSION_ID=" in text
        assert f"$env:LICH_PORT = '{port}'" in text
        env = {"LICH_PORT": str(port), "LICH_TOKEN": "tk-1", "LICH_SESSION_ID": "lichhook-demo"}
        run("omp", stdin=json.dumps({"type": "session_start", "session_id": "omp-1"}), env=env)
        deadline = time.monotonic() + 10
        seen = ""
        while "omp-1" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert "204 accepted" in seen and "provider=omp" in seen and "omp-1" in seen
    finally:
        proc.terminate()
        proc.wait(timeout=10)
