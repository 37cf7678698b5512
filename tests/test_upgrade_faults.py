"""A hook never fails the turn because its archive copy is half there: the complete
archive missing or cut short (as a swap or a broken copy leaves it), the hook still exits 0
with its verdict, and doctor names the missing archive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.archive import installed_copy, installed_hooks

PLUGIN = "from lichhook import hookimpl\n"  # any plugin file sends the hook through the host


def hook(env: dict, archive: Path, *args: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", str(archive), *args], input=json.dumps(payload).encode(),
                          env=env, capture_output=True, timeout=30)


@pytest.fixture
def installed(run, home, base_env, tmp_path):
    done = run("install", "antigravity", "claude")
    assert done.returncode == 0, done.stderr.decode()
    plugins = tmp_path / "plugins"
    plugins.mkdir(mode=0o755)
    (plugins / "mine.py").write_text(PLUGIN)
    return dict(base_env, LICHHOOK_PLUGIN_DIR=str(plugins)), installed_copy(home), installed_hooks(home)


@pytest.mark.parametrize("damage", ["missing", "cut-short"])
def test_a_hook_whose_complete_archive_is_gone_still_gives_its_verdict(installed, damage):
    env, complete, hooks = installed
    if damage == "missing":
        complete.unlink()
    else:
        data = complete.read_bytes()
        complete.write_bytes(data[: len(data) // 2])
    done = hook(env, hooks, "antigravity", "PreToolUse",
                payload={"conversation_id": "c-1", "tool_name": "run_command", "hook_event_name": "PreToolUse"})
    assert (done.returncode, done.stdout) == (0, b'{"decision":"allow"}'), done.stderr.decode()
    assert b"Traceback" not in done.stderr
    done = hook(env, hooks, "antigravity", "Stop", payload={"conversation_id": "c-1"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()


def test_doctor_names_a_missing_complete_archive(run, installed):
    env, complete, hooks = installed
    assert run("uninstall", "claude").returncode == 0  # its MCP server names the complete archive itself
    complete.unlink()
    done = run("doctor")
    out = done.stdout.decode()
    assert done.returncode == 1 and "no problem found" not in out
    assert f"{complete}" in out and "missing" in out.split("problem:", 1)[1]
