"""Fail open, always: every command lichhook registers exits 0 with its harness's allow
verdict even when what it names is gone (the hooks archive, the copy's folder, the data
folder). Run through real subprocesses, as each harness runs them: ``sh -c`` for the
POSIX lines, and the Windows forms split as PowerShell and the C runtime split them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from lichhook.adapters import BY_PROVIDER
from lichhook.contracts import RELEASE
from lichhook.install import quoting
from lichhook.install.plugin import layout
from lichhook.install.harness import Env
from lichhook.install.harnesses import make_all
from lichhook.install.copies.target import Target, foreign_options, launcher
from testkit.archive import installed_copy, installed_hooks

PAYLOAD = b'{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash"}'
HARNESSES = ("claude", "codex", "antigravity", "crush")


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def verdict(words: List[str]) -> str:
    """What the hook ``words`` (``antigravity PreToolUse``) prints as its allow."""
    d = BY_PROVIDER.get(words[0])
    return d.verdict(words[1] if len(words) > 1 else None) if d else ""


def registered(home: Path) -> List[Tuple[str, List[str]]]:
    """(POSIX command line, its subcommand words) of every hook install wrote in ``home``."""
    hooks_archive = str(installed_hooks(home))
    lines: List[str] = []
    for config in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json",
                   home / ".gemini" / "config" / "plugins" / "lichhook" / "hooks.json",
                   home / ".config" / "crush" / "crush.json"):
        doc = json.loads(config.read_text())
        events = doc.get("hooks") or doc["lichhook"]  # Antigravity's table is named for the integration
        for handlers in events.values():
            for item in handlers:
                for h in item.get("hooks", [item]):
                    lines.append(h["command"])
    out = []
    for line in lines:
        words = quoting.split_words(line) or []
        out.append((line, words[words.index(hooks_archive) + 1:]))
    assert {w[0] for _, w in out} >= {"claude", "claude-code", "codex", "codex-waits", "antigravity", "crush"}
    return out


def run_sh(line: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", line], input=PAYLOAD, capture_output=True, env=env, timeout=60)


@pytest.fixture
def installed(run, home):
    for folder in (".claude", ".codex", ".gemini/config", ".config/crush"):
        (home / folder).mkdir(parents=True)
    ok(run("install", *HARNESSES))
    return home


# What each case deletes, in the home install wrote to.
GONE = {
    "the hooks archive": lambda home: installed_hooks(home).unlink(),
    "the copy's folder": lambda home: shutil.rmtree(installed_copy(home).parent),
    "the data folder": lambda home: shutil.rmtree(installed_copy(home).parent.parent),
}


@pytest.mark.parametrize("gone", list(GONE))
def test_every_registered_hook_exits_0_with_its_allow_verdict_when_what_it_runs_is_gone(installed, base_env, gone):
    hooks = registered(installed)
    GONE[gone](installed)
    for line, words in hooks:
        result = run_sh(line, base_env)
        assert result.returncode == 0, (line, result.stderr.decode())
        assert result.stdout.decode().strip() == verdict(words), line
        assert result.stderr == b"", line


def test_every_registered_hook_still_runs_lichhook_through_its_launcher(installed, base_env, standin):
    from testkit.environment import lich_env

    env = dict(base_env, **lich_env(standin))
    for line, words in registered(installed):
        result = ok(run_sh(line, env))
        if words[0] == "antigravity":  # printed by lichhook's adapter, not the launcher
            assert result.stdout.decode() == verdict(words), line
    assert standin.reports, "no hook reached the stand-in lich"


def _run_words(argv: List[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=PAYLOAD, capture_output=True, env=env, timeout=60)


def test_the_windows_forms_fail_open_too(installed, base_env):
    """Codex's commandWindows (the PowerShell-and-cmd line, and the PowerShell form),
    Claude Code's exec form, and the plugin route's hooks files, each read back as a
    Windows program gets its words, run with the hooks archive gone."""
    hooks = str(installed_hooks(installed))
    target = Target(sys.executable, hooks, windows=True, short_path=lambda p: None)
    env = Env(dict(base_env, HOME=str(installed)))
    runs: Dict[str, List[str]] = {}
    for h in make_all(env):
        if h.name not in ("claude", "codex"):
            continue
        for event, wanted in h.wanted(target).items():
            for w in wanted:
                entry = w.entry
                if "args" in entry:
                    runs[f"{h.name} {event} exec form"] = [entry["command"], *entry["args"]]
                if "commandWindows" in entry:
                    runs[f"{h.name} {event} commandWindows"] = quoting.split_dual(entry["commandWindows"])
                    runs[f"{h.name} {event} PowerShell form"] = quoting.split_ps(
                        quoting.ps_command(target.argv(*w.sub))) or []
        files = layout.marketplace(h.name, target, lambda r, h=h: h.handler(target, r).entry, {}, RELEASE)
        plugin = json.loads(files[layout.CLAUDE_HOOKS if h.name == "claude" else layout.CODEX_HOOKS])
        for event, groups in plugin["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    line = handler.get("commandWindows")
                    words = [handler["command"], *handler["args"]] if "args" in handler else quoting.split_dual(line)
                    runs[f"{h.name} plugin {event} {words[-1]}"] = words
    assert len(runs) > 10
    installed_hooks(installed).unlink()
    for name, argv in runs.items():
        assert not foreign_options(argv, 1), name
        result = _run_words(argv, base_env)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), name


def test_the_launcher_runs_the_archive_as_python_runs_it(pyz, base_env):
    """``-c <launcher> <archive> <words>`` gives the archive the argv ``python <archive>
    <words>`` would: the same output, the same exit status."""
    for words in (["--version"], ["adapters"], ["nosuchcommand"]):
        direct = _run_words([sys.executable, "-I", "-S", str(pyz), *words], base_env)
        launched = _run_words([sys.executable, "-I", "-S", "-c", launcher(), str(pyz), *words], base_env)
        assert (launched.returncode, launched.stdout) == (direct.returncode, direct.stdout), words


# -- paths lichhook registers are absolute --------------------------------------------------


def test_relative_xdg_folders_are_ignored_so_every_path_registered_or_written_is_absolute(pyz, home, base_env,
                                                                                          tmp_path):
    """A relative XDG_DATA_HOME at install and a relative XDG_STATE_HOME in a hook are
    invalid (the XDG spec): the defaults under the home are used, and nothing lands in the
    folder the program happens to run in (a session's project)."""
    project = tmp_path / "project"
    project.mkdir()
    for folder in (".claude", ".codex", ".gemini/config", ".config/crush"):
        (home / folder).mkdir(parents=True)
    env = dict(base_env, XDG_DATA_HOME="share", XDG_STATE_HOME="state")
    ok(subprocess.run([sys.executable, str(pyz), "install", *HARNESSES], env=env, cwd=project, capture_output=True))
    assert list(project.iterdir()) == []
    default = home / ".local" / "share" / "lichhook"
    lines = registered(home)
    for line, _ in lines:
        words = quoting.split_words(line) or []
        archive = words[words.index(str(installed_hooks(home)))]
        assert Path(archive).is_absolute() and Path(archive).parent.parent == default, line
    # a hook with a lich that is not there records a failure: in the state folder under the home
    dead = {"LICH_PORT": "9", "LICH_TOKEN": "t", "LICH_SESSION_ID": "s"}
    for line, _ in lines:
        ok(subprocess.run(["sh", "-c", line], input=PAYLOAD, env=dict(env, **dead), cwd=project,
                          capture_output=True, timeout=60))
    assert list(project.iterdir()) == []
    assert (home / ".local" / "state" / "lichhook" / "failures.jsonl").is_file()
