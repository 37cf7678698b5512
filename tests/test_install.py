"""install, uninstall and doctor, run from the built archive into a fake home."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lichhook.adapters import BY_PROVIDER
from lichhook.descriptor import registrations
from lichhook.install.copies.target import launcher
from testkit.archive import absolute, hook_line, hook_options, installed_copy, installed_hooks, same_copy
from testkit.constants import ROOT
from testkit.environment import lich_env

PY = os.path.abspath(sys.executable)


def toml_loads(text: str) -> dict:
    """TOML read by the standard library's reader (3.11+), else by tomlkit (lichhook's own
    dependency), as plain values."""
    try:
        import tomllib
    except ImportError:
        import tomlkit

        return tomlkit.parse(text).unwrap()
    return tomllib.loads(text)


def stable(home: Path) -> Path:
    return installed_copy(home)


def sh(home: Path, *args: str) -> str:
    return hook_line(PY, str(installed_hooks(home)), *args)


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def mcp_args(home: Path) -> list:
    return ["-I", "-S", str(stable(home)), "mcp"]


def snapshot(folder: Path) -> dict:
    """path -> (bytes, mtime_ns) of every file under ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- command line ---------------------------------------------------------------------


def test_install_without_harness_is_a_usage_error_listing_them(run):
    result = run("install")
    assert result.returncode == 2
    err = result.stderr.decode()
    for name in ("claude", "codex", "antigravity", "crush", "opencode", "omp"):
        assert name in err


def test_unknown_harness_is_refused(run):
    result = run("install", "vim")
    assert result.returncode == 2 and "vim" in result.stderr.decode()


def test_install_from_source_without_its_packages_says_what_to_do(base_env, home):
    # -S: no site-packages, so neither lichhook's metadata nor pluggy is there to
    # assemble the archive from (tests/test_distribution.py has the case that works).
    env = dict(base_env, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-S", "-m", "lichhook", "install", "claude"], env=env, cwd=str(home),
                            capture_output=True, timeout=30)
    assert result.returncode == 1
    said = result.stderr.decode()
    assert "cannot assemble the archive" in said and "pip install or pipx install" in said
    assert "python3 build_zipapp.py" in said
    assert not (home / ".claude").exists()


def test_install_refuses_a_relative_home(run, base_env):
    result = run("install", "claude", env={"HOME": "relative/home"})
    assert result.returncode == 1 and "HOME" in result.stderr.decode()


# -- Claude Code ----------------------------------------------------------------------

USER_SETTINGS = (
    '{\n'
    '    "model": "opus",\n'
    '    "hooks": {\n'
    '        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],\n'
    '        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]\n'
    '    },\n'
    '    "env": {"Zoë": "☃"}\n'
    '}\n'
)


def rows(provider: str) -> dict:
    """event -> [(words, matcher, timeout)] of the provider's descriptor registrations."""
    out: dict = {}
    for r in registrations(BY_PROVIDER[provider]):
        out.setdefault(r.event, []).append((r.words, r.matcher, r.timeout))
    return out


def grouped(home: Path, provider: str, extra: dict = {}) -> dict:
    """The hooks table of a Claude-style config: per event, one matcher group of
    lichhook's holding a handler per registration."""
    out = {}
    for event, regs in rows(provider).items():
        matcher = regs[0][1]
        group = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [dict({"type": "command", "command": sh(home, *words)}, **extra, timeout=timeout)
                          for words, _, timeout in regs]
        out[event] = [group]
    return out


def claude_hooks(home: Path) -> dict:
    return grouped(home, "claude")


def test_claude_hooks_are_every_event_of_the_descriptor(home):
    """What the tests below expect, spelled out once: Claude Code's hooks."""
    hooks = claude_hooks(home)
    assert list(hooks) == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop",
                           "StopFailure", "PreCompact", "PostCompact", "SessionEnd"]
    assert [h["command"] for h in hooks["SessionStart"][0]["hooks"]] == [sh(home, "claude"),
                                                                         sh(home, "claude-code", "session-start")]
    assert [h["command"] for h in hooks["Stop"][0]["hooks"]] == [sh(home, "claude", "Stop"),
                                                                 sh(home, "claude-code", "stop")]
    assert hooks["PreToolUse"] == [{"hooks": [{"type": "command", "command": sh(home, "claude", "PreToolUse"),
                                               "timeout": 10}]}]


def test_claude_install_merges_and_uninstall_restores(run, home, pyz):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    original = load(settings)

    out = absolute(ok(run("install", "claude")).stdout.decode(), home)
    assert str(settings) in out
    assert same_copy(stable(home).read_bytes(), pyz.read_bytes())

    data = load(settings)
    assert list(data) == ["model", "hooks", "env"]  # key order kept
    assert data["env"] == {"Zoë": "☃"} and "☃" in settings.read_text(encoding="utf-8")
    assert settings.read_text(encoding="utf-8").startswith('{\n    "model"')  # 4-space indent kept
    want = claude_hooks(home)
    assert data["hooks"]["Stop"] == original["hooks"]["Stop"] + want["Stop"]
    assert data["hooks"]["SessionStart"] == original["hooks"]["SessionStart"] + want["SessionStart"]
    # every other event after the user's, in the descriptor's order
    assert list(data["hooks"]) == ["Stop", "SessionStart"] + [e for e in want if e not in ("Stop", "SessionStart")]
    assert data["hooks"] == {event: original["hooks"].get(event, []) + groups for event, groups in want.items()}
    backup = Path(str(settings) + ".lichhook-backup")
    assert backup.read_text(encoding="utf-8") == USER_SETTINGS

    mcp = load(home / ".claude.json")
    assert mcp == {"mcpServers": {"lichhook": {"type": "stdio", "command": PY, "args": mcp_args(home)}}}
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600

    before = snapshot(home)
    out = ok(run("install", "claude")).stdout.decode()
    assert snapshot(home) == before  # byte-identical, not even rewritten
    assert "unchanged" in out

    ok(run("uninstall", "claude"))
    assert load(settings) == original
    assert backup.read_text(encoding="utf-8") == USER_SETTINGS  # the first backup is kept
    assert not (home / ".claude.json").exists()  # lichhook created it, so it goes
    assert not stable(home).exists()  # nothing runs the archive any more
    assert not stable(home).parent.exists()  # nor its folder, which install made for it


def test_claude_mcp_merges_into_an_existing_claude_json(run, home):
    path = home / ".claude.json"
    path.write_text('{"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}', encoding="utf-8")
    ok(run("install", "claude"))
    data = load(path)
    assert list(data["mcpServers"]) == ["other", "lichhook"] and data["numStartups"] == 3
    assert "\n" not in path.read_text(encoding="utf-8").strip()  # a one-line file stays one line
    ok(run("uninstall", "claude"))
    assert load(path) == {"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}


def test_claude_config_dir_override(run, home, tmp_path):
    conf = tmp_path / "claude conf"
    ok(run("install", "claude", env={"CLAUDE_CONFIG_DIR": str(conf)}))
    assert load(conf / "settings.json")["hooks"] == claude_hooks(home)
    assert "lichhook" in load(conf / ".claude.json")["mcpServers"]
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()


def test_a_replaced_registration_does_not_pile_up(run, home, tmp_path):
    """Installing again with another Python replaces lichhook's entries in place."""
    ok(run("install", "claude"))
    other = tmp_path / "bin" / "python3"
    other.parent.mkdir()
    other.symlink_to(sys.executable)
    ok(run("install", "claude", python=str(other)))
    hooks = load(home / ".claude" / "settings.json")["hooks"]
    assert len(hooks["SessionStart"]) == 1 and len(hooks["Stop"]) == 1
    assert hooks["Stop"][0]["hooks"][0]["command"].startswith(str(other) + " ")


def test_uninstall_keeps_hooks_of_other_lichhook_archives(run, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "python3 /src/lichhook/dist/lichhook.pyz claude"}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [mine]}}), encoding="utf-8")
    ok(run("install", "claude"))
    ok(run("uninstall", "claude"))
    assert load(settings) == {"hooks": {"SessionStart": [mine]}}


# -- refusing what does not parse --------------------------------------------------------


@pytest.mark.parametrize("harness,relpath,content", [
    ("claude", ".claude/settings.json", b'{"hooks": ['),
    ("claude", ".claude/settings.json", b'{"hooks": ["not", "an object"]}'),
    ("claude", ".claude.json", b"[]"),
    ("codex", ".codex/hooks.json", b"{,}"),
    ("codex", ".codex/config.toml", b"[mcp_servers\nbroken = "),
    ("crush", ".config/crush/crush.json", b"// a comment\n{}"),
    ("omp", ".omp/agent/mcp.json", b"\xff\xfe"),
    ("opencode", ".config/opencode/plugin/lich.js", b"export default {} // someone else's\n"),
])
def test_a_config_that_does_not_parse_is_refused_untouched(run, home, harness, relpath, content):
    path = home / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    before = snapshot(home)
    result = run("install", harness)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert str(path) in err and "Nothing was changed" in err
    assert snapshot(home) == before  # that file, and every other one, untouched
    assert not stable(home).exists()


def test_dry_run_prints_diffs_and_changes_nothing(run, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    (home / ".codex").mkdir()
    before = snapshot(home)
    out = ok(run("install", "--all", "--dry-run")).stdout.decode()
    assert snapshot(home) == before
    assert f"would change {settings}" in out and f"+++ {settings}" in out
    # appended in the style of its neighbours: the user's groups are one-line objects
    assert any(line.startswith("    +") and f'"command": "{sh(home, "claude-code", "stop")}"' in line
               for line in out.splitlines())
    assert "would create" in out and "Dry run: nothing was changed." in out
    assert "Codex CLI (codex)" in out and "Crush (crush)" not in out  # only detected harnesses


# -- --all and detection ---------------------------------------------------------------


def test_all_installs_every_detected_harness_only(run, home, tmp_path, base_env):
    (home / ".codex").mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    crush = bindir / "crush"
    crush.write_text("#!/bin/sh\n")
    crush.chmod(0o755)
    ok(run("install", "--all", env={"PATH": f"{bindir}{os.pathsep}{base_env['PATH']}"}))
    assert (home / ".codex" / "hooks.json").exists()
    assert (home / ".config" / "crush" / "crush.json").exists()
    assert not (home / ".claude").exists()
    assert not (home / ".gemini").exists() and not (home / ".omp").exists()
    assert not (home / ".config" / "opencode").exists()


def test_all_with_nothing_detected_says_so(run, home):
    result = ok(run("install", "--all"))
    assert "No harness detected" in result.stdout.decode()
    assert not stable(home).exists()


# -- Codex -----------------------------------------------------------------------------

USER_TOML = 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--stdio"]\n'


def test_codex_hooks_and_mcp_block(run, home):
    codex = home / ".codex"
    codex.mkdir()
    user_hook = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo start"}]}
    (codex / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [user_hook]}}, indent="\t"))
    (codex / "config.toml").write_text(USER_TOML)
    out = ok(run("install", "codex")).stdout.decode()
    assert "/hooks" in out and "Trust all and continue" in out  # the trust note

    hooks = load(codex / "hooks.json")["hooks"]["SessionStart"]
    assert hooks == [user_hook, {"hooks": [{"type": "command", "command": sh(home, "codex"), "timeout": 5},
                                           {"type": "command", "command": sh(home, "codex-waits", "session-start"),
                                            "timeout": 5}]}]
    assert (codex / "hooks.json").read_text().startswith('{\n\t"hooks"')  # tabs kept

    toml = toml_loads((codex / "config.toml").read_text())
    assert toml["model"] == "o3" and toml["mcp_servers"]["docs"]["command"] == "docs-server"
    assert toml["mcp_servers"]["lichhook"] == {"command": PY, "args": mcp_args(home)}
    assert (codex / "config.toml").read_text().startswith(USER_TOML)

    before = snapshot(home)
    ok(run("install", "codex"))
    assert snapshot(home) == before

    ok(run("uninstall", "codex"))
    assert (codex / "config.toml").read_text() == USER_TOML
    assert load(codex / "hooks.json")["hooks"]["SessionStart"] == [user_hook]


def test_codex_leaves_a_users_own_lichhook_table_alone(run, home):
    codex = home / ".codex"
    codex.mkdir()
    text = '[mcp_servers.lichhook]\ncommand = "mine"\n'
    (codex / "config.toml").write_text(text)
    out = ok(run("install", "codex")).stdout.decode()
    assert (codex / "config.toml").read_text() == text
    assert "already has an MCP server named lichhook that does not run" in out
    assert (codex / "hooks.json").exists()
    ok(run("uninstall", "codex"))
    assert (codex / "config.toml").read_text() == text  # not lichhook's: uninstall leaves it too


def test_codex_home_override(run, home, tmp_path):
    codex_home = tmp_path / "codexhome"
    ok(run("install", "codex", env={"CODEX_HOME": str(codex_home)}))
    assert (codex_home / "hooks.json").exists() and (codex_home / "config.toml").exists()
    assert not (home / ".codex").exists()


# -- Antigravity ------------------------------------------------------------------------


def test_antigravity_plugin_folder(run, home):
    folder = home / ".gemini" / "config" / "plugins" / "lichhook"
    ok(run("install", "antigravity"))
    manifest = load(folder / "plugin.json")
    assert set(manifest) == {"name", "description"} and manifest["name"] == "lichhook"
    handler = lambda *words: {"type": "command", "command": sh(home, "antigravity", *words), "timeout": 5}  # noqa: E731
    assert load(folder / "hooks.json") == {"lichhook": {
        "PreInvocation": [handler("PreInvocation")],
        "PreToolUse": [{"matcher": "", "hooks": [handler("PreToolUse")]}],
        "PostToolUse": [{"matcher": "propose_code|file_change|edit_notebook|write_blob|delete_directory|run_command",
                         "hooks": [handler("PostToolUse")]}],
        "Stop": [handler("Stop")],
    }}
    assert "printf" not in (folder / "hooks.json").read_text()
    before = snapshot(home)
    ok(run("install", "antigravity"))
    assert snapshot(home) == before
    (folder.parent / "someone-else").mkdir()
    ok(run("uninstall", "antigravity"))
    assert not folder.exists() and (folder.parent / "someone-else").exists()


def test_an_antigravity_plugin_of_the_users_own_is_never_taken_or_deleted(run, home):
    """A file that merely names lichhook is not lichhook's: only what lichhook wrote,
    provably, is replaced or deleted."""
    folder = home / ".gemini" / "config" / "plugins" / "lichhook"
    folder.mkdir(parents=True)
    mine = {"plugin.json": b'{"name": "lichhook", "description": "my own reporter"}\n',
            "hooks.json": b'{"lichhook": {"Stop": [{"type": "command", "command": "./mine.sh"}]}}\n'}
    for name, data in mine.items():
        (folder / name).write_bytes(data)
    result = run("install", "antigravity")
    assert result.returncode == 1 and "was not written by lichhook" in result.stderr.decode()
    for command in ("uninstall",):
        result = run(command, "antigravity")
        assert "Traceback" not in result.stderr.decode()
    assert {name: (folder / name).read_bytes() for name in mine} == mine
    # lichhook's own files, with an entry the user added to its hooks.json: only lichhook's go
    for name in mine:
        (folder / name).unlink()
    ok(run("install", "antigravity"))
    hooks = load(folder / "hooks.json")
    hooks["lichhook"]["Stop"].append({"type": "command", "command": "./mine.sh"})
    (folder / "hooks.json").write_text(json.dumps(hooks))
    ok(run("uninstall", "antigravity"))
    assert load(folder / "hooks.json") == {"lichhook": {"Stop": [{"type": "command", "command": "./mine.sh"}]}}


# -- Crush ------------------------------------------------------------------------------


def test_crush_json(run, home, tmp_path):
    conf = tmp_path / "crush conf"
    conf.mkdir()
    (conf / "crush.json").write_text(json.dumps({
        "$schema": "https://charm.land/crush.json",
        "hooks": {"PreToolUse": [{"name": "guard", "matcher": "^bash$", "command": "./guard.sh"}]},
    }, indent=2))
    ok(run("install", "crush", env={"CRUSH_GLOBAL_CONFIG": str(conf)}))
    data = load(conf / "crush.json")
    assert data["hooks"]["PreToolUse"] == [
        {"name": "guard", "matcher": "^bash$", "command": "./guard.sh"},
        {"name": "lichhook", "command": sh(home, "crush", "PreToolUse"), "timeout": 5},
    ]
    assert data["mcp"]["lichhook"] == {"type": "stdio", "command": PY, "args": mcp_args(home)}
    ok(run("uninstall", "crush", env={"CRUSH_GLOBAL_CONFIG": str(conf)}))
    assert load(conf / "crush.json") == {
        "$schema": "https://charm.land/crush.json",
        "hooks": {"PreToolUse": [{"name": "guard", "matcher": "^bash$", "command": "./guard.sh"}]},
    }


RC = 'provider add local --type openai-compat --base-url http://127.0.0.1:1/v1\nhook add PreToolUse --name mine --command ./mine.sh\n'


def crushrc_command(text: str) -> str:
    line = next(l for l in text.splitlines() if l.startswith("hook add PreToolUse --name lichhook"))
    words = shlex.split(line)
    assert words[words.index("--timeout") + 1] == "5"
    return words[words.index("--command") + 1]


def test_crushrc_block_when_the_user_writes_crushrc(run, home):
    conf = home / ".config" / "crush"
    conf.mkdir(parents=True)
    (conf / "crushrc").write_text(RC)
    ok(run("install", "crush"))
    text = (conf / "crushrc").read_text()
    assert text.startswith(RC) and "# >>> lichhook" in text and text.rstrip().endswith("# <<< lichhook <<<")
    assert crushrc_command(text) == sh(home, "crush", "PreToolUse")
    assert not (conf / "crush.json").exists()
    before = snapshot(home)
    ok(run("install", "crush"))
    assert snapshot(home) == before
    ok(run("uninstall", "crush"))
    assert (conf / "crushrc").read_text() == RC


# -- opencode and omp files --------------------------------------------------------------


def test_js_modules_installed_with_baked_paths(run, home, tmp_path):
    agent = tmp_path / "agent dir"
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    ok(run("install", "opencode", "omp", env=env))
    for module in (home / ".config" / "opencode" / "plugin" / "lich.js", agent / "extensions" / "lich.js"):
        text = module.read_text()
        assert f"const PYTHON = {json.dumps(PY)};" in text
        assert f"const ARCHIVE = {json.dumps(str(installed_hooks(home)))};" in text
        # the options of every hook registration: the launcher spares the start runpy's imports
        assert f"const FLAGS = {json.dumps(['-I', '-S', '-c', launcher()])};" in text
        assert "spawn(PYTHON, [...FLAGS, ARCHIVE, " in text
    assert load(agent / "mcp.json") == {"mcpServers": {"lichhook": {"command": PY, "args": mcp_args(home)}}}
    ok(run("uninstall", "opencode", "omp", env=env))
    assert not (home / ".config" / "opencode" / "plugin" / "lich.js").exists()
    assert not (agent / "extensions" / "lich.js").exists() and not (agent / "mcp.json").exists()


def test_omp_profile_and_pi_dir(run, home, tmp_path):
    ok(run("install", "omp", env={"OMP_PROFILE": "work"}))
    assert (home / ".omp" / "profiles" / "work" / "agent" / "extensions" / "lich.js").exists()
    ok(run("install", "omp", env={"PI_CODING_AGENT_DIR": str(tmp_path / "pi")}))
    assert (tmp_path / "pi" / "extensions" / "lich.js").exists()


# -- the registered commands run, from the harness's shell, and report ------------------

PAYLOADS = {
    "claude": {"session_id": "0b3f5c1e-claude", "hook_event_name": "SessionStart", "source": "startup", "cwd": "/tmp"},
    "codex": {"session_id": "019d036d-c7fa-72d2-b6fd-78878bfe34e4", "hook_event_name": "SessionStart", "source": "startup"},
    "antigravity": {"conversationId": "2bb3613b-f2a2-4573-9282-e389ac224bda", "invocationNum": 0},
    "crush": {"event": "PreToolUse", "session_id": "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0", "tool_name": "bash"},
}


def registered_commands(home: Path) -> dict:
    """provider -> (command line, folder it runs in), read back from the written files."""
    settings = load(home / ".claude" / "settings.json")["hooks"]
    codex = load(home / ".codex" / "hooks.json")["hooks"]
    plugin = home / ".gemini" / "config" / "plugins" / "lichhook"
    crush = load(home / ".config" / "crush" / "crush.json")["hooks"]
    return {
        "claude": (settings["SessionStart"][-1]["hooks"][0]["command"], None),
        "codex": (codex["SessionStart"][-1]["hooks"][0]["command"], None),
        "antigravity": (load(plugin / "hooks.json")["lichhook"]["PreInvocation"][0]["command"], plugin),
        "crush": (crush["PreToolUse"][-1]["command"], None),
    }


# How many reports each payload above gives: the start, and Antigravity's first model call
# of a turn says busy, Crush's bash tool call touched.
REPORTS = {"claude": 1, "codex": 1, "antigravity": 2, "crush": 2}


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_registered_commands_report_from_the_harness_shell(run, home, base_env, standin, shell, tmp_path):
    ok(run("install", "claude", "codex", "antigravity", "crush"))
    env = dict(base_env, **lich_env(standin))
    commands = registered_commands(home)
    total = 0
    for provider, (command, cwd) in sorted(commands.items()):
        result = subprocess.run([shell, "-c", command], input=json.dumps(PAYLOADS[provider]).encode(),
                                env=env, cwd=str(cwd or tmp_path), capture_output=True, timeout=30)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (b"{}" if provider == "antigravity" else b"")
        total += REPORTS[provider]
        reports = standin.wait_for(total, timeout=10)
        assert len(reports) == total
        mine = reports[total - REPORTS[provider]:]
        assert [r.verdict for r in mine] == ["accepted"] * len(mine)
        (start,) = [r for r in mine if r.contract == "session-start"]
        assert start.accepted["provider"] == provider
        sid = PAYLOADS[provider].get("session_id") or PAYLOADS[provider]["conversationId"]
        assert start.accepted["provider_session_id"] == sid


def test_registered_commands_run_from_a_home_with_spaces_and_quotes(tmp_path, pyz, base_env, standin):
    home = tmp_path / "Jo's home (R&D) ü"
    home.mkdir()
    env = dict(base_env, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_STATE_HOME=str(home / ".local" / "state"))
    ok(subprocess.run([sys.executable, str(pyz), "install", "claude", "crush"], env=env, capture_output=True, timeout=60))
    command = load(home / ".claude" / "settings.json")["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "'" in command  # it needed quoting
    for cmd in (command, load(home / ".config" / "crush" / "crush.json")["hooks"]["PreToolUse"][0]["command"]):
        result = subprocess.run(["sh", "-c", cmd], input=json.dumps(PAYLOADS["crush"]).encode(),
                                env=dict(env, **lich_env(standin)), capture_output=True, timeout=30)
        assert result.returncode == 0, result.stderr
    reports = standin.wait_for(1 + REPORTS["crush"], timeout=10)
    assert [r.verdict for r in reports] == ["accepted"] * (1 + REPORTS["crush"])


def test_crushrc_command_reports(run, home, base_env, standin):
    conf = home / ".config" / "crush"
    conf.mkdir(parents=True)
    (conf / "crushrc").write_text(RC)
    ok(run("install", "crush"))
    command = crushrc_command((conf / "crushrc").read_text())
    result = subprocess.run(["sh", "-c", command], input=json.dumps(PAYLOADS["crush"]).encode(),
                            env=dict(base_env, **lich_env(standin)), capture_output=True, timeout=30)
    assert result.returncode == 0
    assert standin.wait_for(1, timeout=10)[0].accepted["provider"] == "crush"


def test_claude_code_hooks_run_as_registered(run, home, base_env):
    ok(run("install", "claude"))
    hooks = load(home / ".claude" / "settings.json")["hooks"]
    payload = json.dumps({"session_id": "0b3f5c1e-aaaa", "hook_event_name": "SessionStart", "source": "startup"})
    start = subprocess.run(["bash", "-c", hooks["SessionStart"][0]["hooks"][1]["command"]], input=payload.encode(),
                           env=base_env, capture_output=True, timeout=30)
    assert start.returncode == 0
    assert "0b3f5c1e-aaaa" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    stop = subprocess.run(["bash", "-c", hooks["Stop"][0]["hooks"][0]["command"]],
                          input=b'{"session_id": "0b3f5c1e-aaaa", "stop_hook_active": false}',
                          env=base_env, capture_output=True, timeout=30)
    assert stop.returncode == 0 and b"block" not in stop.stdout


# -- doctor ------------------------------------------------------------------------------


def test_doctor_reports_and_finds_problems(run, home, standin):
    ok(run("install", "claude"))
    result = run("doctor", "--verbose", env=lich_env(standin))
    out = result.stdout.decode()
    assert result.returncode == 0, out
    assert "registered: yes" in out and sh(home, "claude-code", "stop") in out
    assert f"archive: {stable(home)} (exists)" in out
    assert "inside lich:        yes" in out and standin.token not in out
    assert "waits folder:" in out and "verdict: no problem found" in out

    stable(home).unlink()
    result = run("doctor", "--verbose")
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "inside lich:        no" in out
    problems = [l for l in out.splitlines() if l.startswith("problem: claude:")]
    assert problems and all("Fix:" in l for l in problems)
    assert any("archive that is missing" in l and "install claude" in l for l in problems)


def test_doctor_flags_a_detected_harness_without_lichhook(run, home):
    (home / ".codex").mkdir()
    result = run("doctor", "--verbose")
    assert result.returncode == 1
    assert "problem: codex: detected but lichhook is not registered. Fix:" in result.stdout.decode()


def test_doctor_flags_an_incomplete_registration(run, home):
    ok(run("install", "claude"))
    settings = home / ".claude" / "settings.json"
    data = load(settings)
    del data["hooks"]["Stop"]
    settings.write_text(json.dumps(data))
    result = run("doctor", "--verbose")
    assert result.returncode == 1
    assert "incomplete or out of date" in result.stdout.decode()


# -- Windows spellings, rendered on this machine ------------------------------------------


def test_windows_registrations_use_exec_form_and_dual_lines(tmp_path):
    from lichhook.install.disk import files
    from lichhook.install.harnesses.claude import Claude
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target

    home = tmp_path / "home"
    home.mkdir()
    env = Env({"USERPROFILE": str(home), "PATH": ""}, windows=True)
    python = "C:\\Users\\Zoë\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"
    archive = "C:\\Users\\Zoë\\AppData\\Local\\lichhook\\lichhook.pyz"
    target = Target(python, archive, windows=True, short_path=lambda p: None)
    for edit in Claude(env).install(target) + Codex(env).install(target):
        files.apply(edit)
    hooks = load(home / ".claude" / "settings.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][1] == {"type": "command", "command": python,
                                            "args": ["-I", "-S", archive, "claude-code", "stop"], "timeout": 10}
    # every registration in the exec form, none with a shell line
    for event, regs in rows("claude").items():
        assert [h for g in hooks[event] for h in g["hooks"]] == [
            {"type": "command", "command": python, "args": ["-I", "-S", archive, *words], "timeout": timeout}
            for words, _, timeout in regs], event
    codex = load(home / ".codex" / "hooks.json")["hooks"]["SessionStart"][0]["hooks"][0]
    assert codex["commandWindows"] == f"{python} -I -S {archive} codex"
    assert codex["command"] == "C:/Users/Zoë/AppData/Local/Programs/Python/Python312/python.exe -I -S " \
                               "C:/Users/Zoë/AppData/Local/lichhook/lichhook.pyz codex"
    codex_hooks = load(home / ".codex" / "hooks.json")["hooks"]
    for event, regs in rows("codex").items():
        assert [h for g in codex_hooks[event] for h in g["hooks"]] == [
            {"type": "command",
             "command": "C:/Users/Zoë/AppData/Local/Programs/Python/Python312/python.exe -I -S "
                        f"C:/Users/Zoë/AppData/Local/lichhook/lichhook.pyz {' '.join(words)}",
             "commandWindows": f"{python} -I -S {archive} {' '.join(words)}", "timeout": timeout}
            for words, _, timeout in regs], event
    # uninstall recognises what it wrote
    for edit in Claude(env).uninstall(target) + Codex(env).uninstall(target):
        files.apply(edit)
    assert not (home / ".claude" / "settings.json").exists() and not (home / ".codex" / "hooks.json").exists()


# -- Pythons without tomllib (3.9, 3.10): the archive's tomli reads values -------------------

OLD_PYTHONS = [p for p in (os.path.expanduser(f"~/.pyenv/versions/{v}/bin/python3") for v in ("3.9.18", "3.10.13"))
               if os.path.exists(p)]


@pytest.mark.skipif(not OLD_PYTHONS, reason="no Python 3.9 or 3.10 here")
@pytest.mark.parametrize("user_toml,added", [
    (USER_TOML, True),
    ('[mcp_servers.lichhook]\ncommand = "mine"\n', False),
    ('mcp_servers = { other = { command = "x" } }\n', False),
])
def test_codex_toml_without_tomllib(run, home, user_toml, added):

    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(user_toml)
    ok(run("install", "codex", python=OLD_PYTHONS[0]))
    text = (codex / "config.toml").read_text()
    if added:
        assert text.startswith(user_toml) and "lichhook" in toml_loads(text)["mcp_servers"]
    else:
        assert text == user_toml
    ok(run("uninstall", "codex", python=OLD_PYTHONS[0]))
    assert (codex / "config.toml").read_text() == user_toml


def test_doctor_reports_a_config_that_does_not_parse(run, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{oops")
    result = run("doctor", "--verbose")
    out = result.stdout.decode()
    assert result.returncode == 1
    assert f"problem: claude: {settings} is not valid JSON" in out and "Fix:" in out
    assert settings.read_text() == "{oops"


@pytest.mark.parametrize("harness", ["claude", "codex", "antigravity", "crush", "opencode", "omp"])
def test_every_harness_second_install_is_byte_identical(run, home, harness):
    ok(run("install", harness))
    before = snapshot(home)
    assert before
    result = ok(run("install", harness))
    assert snapshot(home) == before
    [line] = [line for line in result.stdout.decode().splitlines() if line.startswith(f"{harness}: ")]
    assert line.startswith(f"{harness}: unchanged ") and ";" not in line, line
    ok(run("uninstall", harness))
    assert not [p for p in home.rglob("*") if p.is_file() and "lichhook" in p.read_text(errors="replace")]


DAMAGED = {"deep": "[" * 100000 + "]" * 100000, "list": "[1]", "number": "5"}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
@pytest.mark.parametrize("harness", ["codex", "opencode"])
def test_doctor_names_a_registration_damaged_by_hand(run, home, harness, damage):
    """A value lichhook wrote, since edited into another type or nested too deeply for
    the parser, is a problem naming the file, never a traceback."""
    value = DAMAGED[damage]
    ok(run("install", harness))
    if harness == "codex":
        path = home / ".codex" / "config.toml"
        prefix = "command = "
    else:
        path = home / ".config" / "opencode" / "plugin" / "lich.js"
        prefix = "const PYTHON = "
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = [prefix + value + (";" if harness == "opencode" else "") + "\n" if l.startswith(prefix) else l
             for l in lines]
    path.write_text("".join(lines), encoding="utf-8")
    result = run("doctor", "--verbose")
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in err, err
    if harness == "codex" and damage == "deep":  # deeper than the TOML reader goes: the file is named
        assert f"problem: codex: {path} is not valid TOML (TOML value nested more than 100 levels deep" in out
        return
    assert f"problem: {harness}: " in out and f"in {path} holds a command lichhook cannot read back" in out
    ok(run("uninstall", harness))
    assert "lichhook" not in (path.read_text() if path.exists() else "")


def test_doctor_finds_no_problem_in_a_windows_registration_that_names_python_twice(tmp_path):
    """On Windows the Codex hook names Python by its short form and the MCP block by its
    long one; doctor must not call that registration out of date."""
    import io

    from lichhook.install import doctor
    from lichhook.install.disk import files
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target

    home = tmp_path / "home"
    home.mkdir()
    python, short = tmp_path / "Program Files" / "python.exe", tmp_path / "PROGRA~1" / "python.exe"
    archive = tmp_path / "data" / "lichhook.pyz"
    for path in (python, short, archive):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"")
    env = Env({"USERPROFILE": str(home), "PATH": ""}, windows=True)
    target = Target(str(python), str(archive), windows=True, short_path={str(python): str(short)}.get)
    for edit in Codex(env).install(target):
        files.apply(edit)
    assert str(short) in load(home / ".codex" / "hooks.json")["hooks"]["SessionStart"][0]["hooks"][0]["commandWindows"]
    problems: list = []
    doctor._check(Codex(env), target, env, io.StringIO(), problems)
    assert [p for p in problems if "Codex does not run" not in p[1]] == []  # trust aside: nobody trusted it


# -- opencode's own npm install --------------------------------------------------------------


def test_opencode_says_when_it_will_install_its_plugin_package_first(run, home):
    out = absolute(ok(run("install", "opencode")).stdout.decode(), home)
    folder = home / ".config" / "opencode"
    assert (f"note: opencode: opencode installs @opencode-ai/plugin into {folder} before it loads any plugin, and that "
            "folder has no node_modules") in out and "every start waits about 70 s" in out
    assert f"note: opencode installs @opencode-ai/plugin into {folder}" in run("doctor", "--verbose").stdout.decode()
    # what opencode leaves once its install succeeded: node_modules, and a lock naming the package
    (folder / "node_modules").mkdir()
    (folder / "package.json").write_text('{"dependencies": {"@opencode-ai/plugin": "1.18.33", "zod": "4"}}')
    (folder / "package-lock.json").write_text('{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}}')
    assert "has no package-lock.json entry for zod" in run("doctor", "--verbose").stdout.decode()
    (folder / "package-lock.json").write_text(
        '{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33", "zod": "4"}}}}')
    doctor = run("doctor", "--verbose")
    assert "@opencode-ai/plugin" not in doctor.stdout.decode()
    assert "problem: opencode" not in doctor.stdout.decode()  # a note, never a problem


def test_opencode_counts_a_lock_nested_too_deep_to_read_as_listing_nothing(run, home):
    """A package-lock.json nested deeper than Python's JSON reader goes (a broken or
    hostile file) lists no package: install and doctor say so instead of crashing."""
    folder = home / ".config" / "opencode"
    (folder / "node_modules").mkdir(parents=True)
    (folder / "package-lock.json").write_text("[" * 100000)
    said = "that folder has no package-lock.json entry for @opencode-ai/plugin"
    assert said in ok(run("install", "opencode")).stdout.decode()
    assert said in run("doctor", "--verbose").stdout.decode()


BEGIN_LINE = ("# >>> lichhook: session reporter (added by 'lichhook install crush'; "
              "'lichhook uninstall crush' removes it) >>>")


@pytest.mark.parametrize("original", [
    # the start marker copied on its own (no end marker), the user's lines after it
    RC + BEGIN_LINE + "\nhook add PreToolUse --name notes --command ./notes.sh\nprovider add other\n",
    # the markers inside a heredoc the user's own script writes
    RC + "cat > /tmp/example <<'EOF'\n" + BEGIN_LINE + "\nmy own text\n# <<< lichhook <<<\nEOF\n",
    # no final newline
    RC.rstrip("\n"),
    "hook add PreToolUse --name mine --command ./mine.sh",
], ids=["lone-start-marker", "heredoc", "no-final-newline", "one-line-no-newline"])
def test_crushrc_uninstall_gives_back_every_user_line(run, home, original):
    """Only a block lichhook provably wrote is lichhook's: its two markers with nothing
    but its own hook lines between them; and a file without a final newline keeps none."""
    rc = home / ".config" / "crush" / "crushrc"
    rc.parent.mkdir(parents=True)
    rc.write_bytes(original.encode())
    ok(run("install", "crush"))
    assert crushrc_command(rc.read_text()) == sh(home, "crush", "PreToolUse")
    assert rc.read_text().startswith(original)
    ok(run("install", "crush"))
    ok(run("uninstall", "crush"))
    assert rc.read_bytes() == original.encode()


def test_crushrc_of_mixed_line_endings_is_given_back_byte_for_byte(run, home):
    """CRLF lines, then a last line ending in LF: the blank line install adds before its
    block ends as that last line does, so uninstall finds it and takes it away."""
    original = b"hook add PreToolUse --name mine --command ./mine.sh\r\nprovider add other\n"
    rc = home / ".config" / "crush" / "crushrc"
    rc.parent.mkdir(parents=True)
    rc.write_bytes(original)
    ok(run("install", "crush"))
    assert rc.read_bytes().startswith(original + b"\n# >>> lichhook")
    ok(run("uninstall", "crush"))
    assert rc.read_bytes() == original


def test_uninstall_takes_away_the_folders_install_made_and_only_those(run, home):
    """Folders install created (and nothing else put anything in) go with uninstall; a
    folder that was there before, or that holds anything, stays."""
    (home / ".codex").mkdir()  # the user's, made before lichhook came
    ok(run("install", "claude", "codex"))
    assert (home / ".claude").is_dir() and (home / ".local" / "share" / "lichhook").is_dir()
    ok(run("uninstall", "claude", "codex"))
    assert sorted(p.name for p in home.iterdir()) == [".codex"], sorted(home.rglob("*"))
    assert list((home / ".codex").iterdir()) == []
    # a made folder something else wrote into stays
    ok(run("install", "claude"))
    (home / ".claude" / "projects").mkdir()
    ok(run("uninstall", "claude"))
    assert (home / ".claude" / "projects").is_dir() and not (home / ".local").exists()


# -- the copy: its two archives together or not at all -----------------------------------


@pytest.mark.parametrize("unreachable", ["hooks.pyz", "lichhook.pyz"])
def test_a_copy_is_replaced_whole_or_not_at_all(run, home, unreachable):
    ok(run("install", "claude"))
    hooks = installed_hooks(home)
    for name in ("hooks.pyz", "lichhook.pyz"):
        path = hooks.with_name(name)
        path.unlink()
        if name == unreachable:
            path.mkdir()  # a folder where the archive goes: no write replaces it
            (path / "keep").write_text("")
            stuck = path
        else:
            path.write_bytes(b"an archive of an earlier release")
    before = {k: v[0] for k, v in snapshot(home).items()}
    result = run("install", "claude")
    assert result.returncode == 1
    assert str(stuck) in result.stderr.decode()
    # whichever went first was put back, or never written: the pair is as it was
    assert {k: v[0] for k, v in snapshot(home).items()} == before


def test_doctor_names_a_hooks_archive_from_another_release(run, home):
    ok(run("install", "claude"))
    hooks = installed_hooks(home)
    data = bytearray(hooks.read_bytes())
    hooks.write_bytes(bytes(data[:-1]) + bytes([data[-1] ^ 1]))  # any other bytes
    shown = run("doctor", "--verbose")
    assert shown.returncode == 1
    out = shown.stdout.decode()
    assert f"{hooks} does not belong with {stable(home)}" in out, out
    ok(run("install", "claude"))
    assert "does not belong" not in run("doctor", "--verbose").stdout.decode()


def test_a_printed_fix_on_windows_is_a_powershell_line_with_the_python_that_runs(monkeypatch):
    from lichhook.install import doctor, quoting
    from lichhook.install.copies.target import current_python
    from testkit.windows import ps_read_verbatim

    monkeypatch.setattr(sys, "platform", "win32")
    line = doctor._install_hint("claude")
    assert line.startswith("& ")
    words, rest = [], line[2:]
    while rest:
        word, rest = ps_read_verbatim(rest)
        words.append(word)
        rest = rest.lstrip(" ")
    assert words[0] == current_python() and words[2:] == ["install", "claude"]
    assert doctor._install_hint("codex", "C:\\Py thon\\python.exe").startswith(quoting.ps_quote("C:\\Py thon\\python.exe"), 2)
