"""The release in lich-plugin's layout that the build writes beside the archive
(dist/lich-plugin/): reproducible, shaped as the harnesses' plugin managers and lich's
installer read it, and every command line in it runs lichhook and reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lichhook.adapters import BY_PROVIDER
from lichhook.contracts import release as releases
from lichhook.descriptor import registrations
from lichhook.install.copies.target import launcher
from testkit.environment import lich_env

import build_zipapp

CLAUDE_START = {"session_id": "0b3f5c1e-claude", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp"}
CODEX_START = {"session_id": "019d036d-c7fa-72d2-b6fd-78878bfe34e4", "hook_event_name": "SessionStart",
               "source": "startup"}


def tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def release(pyz) -> Path:
    return build_zipapp.release_dir(pyz)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_the_build_writes_the_same_release_twice(pyz, release, tmp_path):
    again = tmp_path / "again" / "lichhook.pyz"
    again.parent.mkdir()
    shutil.copy(pyz, again)
    build_zipapp.write_release(again)
    assert tree(build_zipapp.release_dir(again)) == tree(release)
    build_zipapp.write_release(again)  # a second build replaces its own release
    assert tree(build_zipapp.release_dir(again)) == tree(release)
    (tmp_path / "foreign" / "lich-plugin").mkdir(parents=True)
    with pytest.raises(SystemExit, match="not a release this build wrote"):
        build_zipapp.write_release(tmp_path / "foreign" / "lichhook.pyz")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("umask", [0o000, 0o077])
def test_the_releases_modes_do_not_follow_the_builders_umask(pyz, tmp_path, umask):
    # 0o000 left every folder writable by anyone (the plugin a harness copies and runs);
    # 0o077 left them unreadable to the user a release is copied for.
    out = tmp_path / "lichhook.pyz"
    shutil.copy(pyz, out)
    before = os.umask(umask)
    try:
        folder = build_zipapp.write_release(out)
    finally:
        os.umask(before)
    modes = {p.relative_to(folder).as_posix(): p.stat().st_mode & 0o777 for p in [folder, *folder.rglob("*")]}
    assert {rel: mode for rel, mode in modes.items() if mode not in (0o644, 0o755)} == {}
    assert all(mode == 0o755 for rel, mode in modes.items() if (folder / rel).is_dir())


def test_manifests_name_lich_plugin_and_the_versions_lich_reads(release, pyz):
    assert (release / "lichhook.pyz").read_bytes() == pyz.read_bytes()
    assert (release / "lichhook-plugin.txt").is_file()
    for market in (".claude-plugin/marketplace.json", ".agents/plugins/marketplace.json"):
        doc = load(release / market)
        assert doc["name"] == "lich-plugin" and doc["plugins"][0]["name"] == "lich"
    claude = load(release / ".claude-plugin/plugin.json")
    codex = load(release / ".codex-plugin/plugin.json")
    assert claude["name"] == codex["name"] == "lich"
    # lich drops "+build": the release is for any lich, so it names what every lich measured accepts
    assert codex["version"].split("+")[0] == releases.claim(None, "codex")
    assert claude["version"].split("+")[0] == releases.claim(None, "claude")
    assert codex["hooks"] == "./hooks/codex-hooks.json" and codex["mcpServers"] == "./.codex-mcp.json"
    mcp = load(release / ".codex-mcp.json")["mcpServers"]["lichhook"]
    assert mcp == {"command": "python3", "args": ["-I", "-S", "./lichhook.pyz", "mcp"], "cwd": "./"}


@pytest.mark.parametrize("harness, hooks_file", [("claude", "hooks/hooks.json"), ("codex", "hooks/codex-hooks.json")])
def test_hooks_are_the_descriptors_registrations(release, harness, hooks_file):
    hooks = load(release / hooks_file)["hooks"]
    seen = [(event, h["command"].split("lichhook.pyz\" ", 1)[1], h.get("timeout"), group.get("matcher"))
            for event, groups in hooks.items() for group in groups for h in group["hooks"]]
    wanted = [(r.event, " ".join(r.words), r.timeout, r.matcher) for r in registrations(BY_PROVIDER[harness])]
    assert seen == wanted
    if harness == "codex":
        for groups in hooks.values():
            for h in groups[0]["hooks"]:
                assert h["commandWindows"].startswith(f'py -3 -I -S -c "{launcher()}" "${{CLAUDE_PLUGIN_ROOT}}\\lichhook.pyz" ')


@pytest.mark.parametrize("harness, hooks_file, payload", [
    ("claude", "hooks/hooks.json", CLAUDE_START), ("codex", "hooks/codex-hooks.json", CODEX_START)])
def test_the_start_hook_runs_from_the_installed_plugin_and_reports(release, harness, hooks_file, payload, base_env,
                                                                  standin, tmp_path):
    installed = tmp_path / "cache" / "lich"  # where a plugin manager copies it
    shutil.copytree(release, installed)
    command = load(installed / hooks_file)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    command = command.replace("${CLAUDE_PLUGIN_ROOT}", str(installed))  # as the harness substitutes it
    result = subprocess.run(["sh", "-c", command], input=json.dumps(payload).encode(),
                            env=dict(base_env, **lich_env(standin)), capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    (report,) = standin.wait_for(1, timeout=10)
    assert report.verdict == "accepted"
    assert report.accepted["provider"] == harness
    assert report.accepted["provider_session_id"] == payload["session_id"]


@pytest.mark.parametrize("harness, hooks_file", [("claude", "hooks/hooks.json"), ("codex", "hooks/codex-hooks.json")])
def test_every_hook_of_an_installed_release_whose_archive_is_gone_lets_its_harness_through(release, harness,
                                                                                           hooks_file, base_env,
                                                                                           tmp_path):
    installed = tmp_path / "cache" / "lich"
    shutil.copytree(release, installed)
    (installed / "lichhook.pyz").unlink()
    for groups in load(installed / hooks_file)["hooks"].values():
        for h in groups[0]["hooks"]:
            command = h["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(installed))
            result = subprocess.run(["sh", "-c", command], input=b"{}", env=base_env, capture_output=True, timeout=30)
            assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), command


def test_codex_mcp_server_starts_from_the_plugin_folder(release, base_env, tmp_path):
    installed = tmp_path / "lich"
    shutil.copytree(release, installed)
    server = load(installed / ".codex-mcp.json")["mcpServers"]["lichhook"]
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    result = subprocess.run([server["command"], *server["args"]], cwd=str(installed / server["cwd"]),
                            input=(json.dumps(request) + "\n").encode(), env=base_env, capture_output=True, timeout=30)
    answer = json.loads(result.stdout.decode().splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]


def test_scripts_lich_installer_copies_find_the_archive_in_the_data_folder(release, base_env, standin, tmp_path, home):
    # lich's installer copies only hooks/*.sh (Antigravity, Crush), not the archive: the
    # runner then finds it at <data dir>/release/lichhook.pyz.
    copied = tmp_path / "plugins" / "lich" / "hooks"
    copied.mkdir(parents=True)
    for script in (release / "hooks").glob("*.sh"):
        shutil.copy(script, copied / script.name)
    env = dict(base_env, **lich_env(standin))
    payload = json.dumps({"session_id": "crush-1", "tool_name": "bash", "tool_input": {"command": "ls"}}).encode()
    nothing = subprocess.run(["sh", str(copied / "report-session-start.sh"), "crush"], input=payload, env=env,
                             capture_output=True, timeout=30)
    assert nothing.returncode == 0 and standin.wait_for(0, timeout=1) == []
    data = Path(env["XDG_DATA_HOME"]) / "lichhook" / "release"
    data.mkdir(parents=True)
    shutil.copy(release / "lichhook.pyz", data / "lichhook.pyz")
    found = subprocess.run(["sh", str(copied / "report-session-start.sh"), "crush"], input=payload, env=env,
                           capture_output=True, timeout=30)
    assert found.returncode == 0, found.stderr
    reports = standin.wait_for(1, timeout=10)
    assert reports and reports[0].accepted["provider"] == "crush"


@pytest.mark.parametrize("kind", ["opencode", "omp"])
def test_modules_parse_as_es_modules_and_find_their_interpreter_per_os(release, kind, tmp_path):
    text = (release / kind / "lich.js").read_text()
    assert 'process.platform === "win32" ? "py" : "python3"' in text
    assert "LICHHOOK_ARCHIVE" in text and "lichhook" in text
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    copy = tmp_path / "lich.mjs"
    copy.write_text(text)
    result = subprocess.run([node, "--check", str(copy)], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode()


def test_antigravity_hooks_run_the_runner_relative_to_the_plugin_folder(release):
    hooks = load(release / "hooks.json")["lichhook"]
    commands = [h["command"] for handlers in hooks.values() for item in handlers
                for h in (item["hooks"] if "hooks" in item else [item])]
    wanted = [f"sh hooks/report-state.sh {' '.join(r.words)}" for r in registrations(BY_PROVIDER["antigravity"])]
    assert commands == wanted
    assert os.access(release / "hooks" / "report-state.sh", os.X_OK)
    assert sys.platform == "win32" or (release / "hooks" / "report-state.sh").stat().st_mode & 0o111
