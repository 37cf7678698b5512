"""install registers every event of a harness's descriptor, and only lichhook's entries
change: run from the built archive into a fake home, for Claude Code, Codex, Antigravity
and Crush. Each config is read back into rows (event, command words, matcher, timeout)
and held to the descriptor's ``registrations``; a user's own hooks on the same events
come back byte for byte after uninstall; a config the previous release wrote (the
session-start and waits entries only) gains the other events without a duplicate; and
doctor names a config that lacks one."""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from lichhook.adapters import BY_PROVIDER
from lichhook.descriptor import registrations
from testkit.archive import hook_line, hook_options, installed_hooks

PY = os.path.abspath(sys.executable)
AGY_FLAT = {"PreInvocation", "PostInvocation", "Stop"}


def ok(result):
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def rows(provider: str) -> list:
    return [(r.event, r.words, r.matcher, r.timeout) for r in registrations(BY_PROVIDER[provider])]


def words_of(command: str, home: Path):
    """lichhook's words in a command line it wrote, or None for another command."""
    words = shlex.split(command)
    if words[:6] != [PY, *hook_options(*words[6:]), str(installed_hooks(home))]:
        return None
    return tuple(words[6:])


def read_back(provider: str, home: Path) -> list:
    """(event, words, matcher, timeout) of every lichhook entry in ``provider``'s config,
    in the order they stand."""
    out = []
    if provider in ("claude", "codex"):
        path = home / (".claude/settings.json" if provider == "claude" else ".codex/hooks.json")
        for event, groups in load(path)["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    words = words_of(handler["command"], home)
                    if words is not None:
                        out.append((event, words, group.get("matcher"), handler.get("timeout")))
    elif provider == "antigravity":
        table = load(home / ".gemini/config/plugins/lichhook/hooks.json")["lichhook"]
        for event, items in table.items():
            groups = [{"hooks": items}] if event in AGY_FLAT else items
            for group in groups:
                for handler in group["hooks"]:
                    out.append((event, words_of(handler["command"], home), group.get("matcher"), handler["timeout"]))
    else:
        for event, handlers in load(home / ".config/crush/crush.json")["hooks"].items():
            for handler in handlers:
                words = words_of(handler["command"], home)
                if words is not None:
                    out.append((event, words, handler.get("matcher"), handler.get("timeout")))
    return out


HARNESSES = ["claude", "codex", "antigravity", "crush"]


@pytest.mark.parametrize("provider", HARNESSES)
def test_install_writes_exactly_the_descriptor_registrations(run, home, provider):
    ok(run("install", provider))
    assert read_back(provider, home) == rows(provider)


# -- a user's own hooks on the same events --------------------------------------------------

CLAUDE_USER = (
    '{\n  "hooks": {\n'
    '    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 1.50}]}],\n'
    '    "Notification": [{"hooks": [{"type": "command", "command": "notify-send \\"\\u2603\\""}]}],\n'
    '    "Stop": []\n'
    '  },\n  "model": "opus"\n}'
)
CODEX_USER = (
    '{"hooks": {"PostToolUse": [{"matcher": "apply_patch", "hooks": [{"type": "command", "command": "fmt"}]}],\r\n'
    ' "SessionEnd": [{"hooks": [{"type": "command", "command": "bye", "timeout": 1e0}]}]}}\r\n'
)
CODEX_TOML = '# mine\nmodel = "o3"   # keep\n\n[projects."/p"]\ntrust_level = "trusted"\n'
CRUSH_USER = (
    '{\n\t"$schema": "https://charm.land/crush.json",\n'
    '\t"hooks": {"PreToolUse": [{"name": "guard", "matcher": "^bash$", "command": "./guard.sh", "timeout": 10}]},\n'
    '\t"options": {"debug": false}\n}\n'
)
USER_FILES = {
    "claude": {".claude/settings.json": CLAUDE_USER},
    "codex": {".codex/hooks.json": CODEX_USER, ".codex/config.toml": CODEX_TOML},
    "crush": {".config/crush/crush.json": CRUSH_USER},
    "crushrc": {".config/crush/crushrc": "hook add PreToolUse --name mine --command ./mine.sh\n"},
}


@pytest.mark.parametrize("case", sorted(USER_FILES))
def test_uninstall_gives_back_the_users_files_byte_for_byte(run, home, case):
    provider = "crush" if case == "crushrc" else case
    for rel, text in USER_FILES[case].items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(text.encode("utf-8"))
    ok(run("install", provider))
    if case != "crushrc":
        assert sorted(read_back(provider, home)) == sorted(rows(provider))  # every event, beside the user's
    for rel, text in USER_FILES[case].items():
        if rel.endswith(".json"):
            new = (home / rel).read_text(encoding="utf-8")
            # the user's entries stay, ahead of lichhook's on the same events
            for event, groups in json.loads(text)["hooks"].items():
                assert load(home / rel)["hooks"][event][:len(groups)] == groups
            assert new != text
    ok(run("uninstall", provider))
    for rel, text in USER_FILES[case].items():
        assert (home / rel).read_bytes() == text.encode("utf-8"), rel


def test_crushrc_gets_a_line_per_registration_and_loses_them_all(run, home):
    folder = home / ".config" / "crush"
    folder.mkdir(parents=True)
    (folder / "crushrc").write_text(USER_FILES["crushrc"][".config/crush/crushrc"])
    ok(run("install", "crush"))
    lines = [shlex.split(ln) for ln in (folder / "crushrc").read_text().splitlines() if "--name lichhook" in ln]
    got = []
    for words in lines:
        options = dict(zip(words[3::2], words[4::2]))
        got.append((words[2], words_of(options["--command"], home), options.get("--matcher"),
                    int(options["--timeout"])))
    assert got == rows("crush")


# -- the previous release's configs: the start and waits entries only -------------------------


def previous(home: Path, provider: str, *words: str, timeout: int) -> dict:
    """An entry as the previous release wrote it (already with ``-I -S``)."""
    return {"type": "command", "command": shlex.join([PY, "-I", "-S", str(installed_hooks(home)), *words]),
            "timeout": timeout}


def write_previous(home: Path, provider: str) -> None:
    if provider == "claude":
        data = {"hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear|compact|fork", "hooks": [
                previous(home, provider, "claude", timeout=10),
                previous(home, provider, "claude-code", "session-start", timeout=10)]}],
            "Stop": [{"hooks": [previous(home, provider, "claude-code", "stop", timeout=10)]}]}}
        path = home / ".claude" / "settings.json"
    elif provider == "codex":
        data = {"hooks": {"SessionStart": [{"hooks": [previous(home, provider, "codex", timeout=5),
                                                      previous(home, provider, "codex-waits", "session-start",
                                                               timeout=5)]}]}}
        path = home / ".codex" / "hooks.json"
    elif provider == "antigravity":
        data = {"lichhook": {"PreInvocation": [previous(home, provider, "antigravity", timeout=5)]}}
        path = home / ".gemini" / "config" / "plugins" / "lichhook" / "hooks.json"
    else:
        entry = previous(home, provider, "crush", timeout=5)
        del entry["type"]
        data = {"hooks": {"PreToolUse": [dict(name="lichhook", **entry)]}}
        path = home / ".config" / "crush" / "crush.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


@pytest.mark.parametrize("provider", HARNESSES)
def test_an_upgrade_adds_every_other_event_without_a_duplicate(run, home, pyz, provider):
    write_previous(home, provider)
    ok(run("install", provider))
    got = read_back(provider, home)
    assert sorted(got) == sorted(rows(provider))  # each once; none twice, none left in its old form
    if provider in ("claude", "codex"):
        # the entries already there keep their places: a new one of an event they share
        # goes after them, in lichhook's group
        table = load(home / (".claude/settings.json" if provider == "claude" else ".codex/hooks.json"))["hooks"]
        assert all(len(groups) == 1 for groups in table.values())
        first = [words_of(h["command"], home) for h in table["SessionStart"][0]["hooks"]]
        assert first == [r[1] for r in rows(provider) if r[0] == "SessionStart"]
    before = {p: p.read_bytes() for p in home.rglob("*.json")}
    ok(run("install", provider))
    assert {p: p.read_bytes() for p in home.rglob("*.json")} == before


def test_an_upgraded_crushrc_line_names_its_event(run, home):
    from lichhook.install.harnesses.crush import BEGIN, END

    folder = home / ".config" / "crush"
    folder.mkdir(parents=True)
    old = shlex.join([PY, "-I", "-S", str(installed_hooks(home)), "crush", "/my/extra"])
    (folder / "crushrc").write_text(f"{BEGIN}\nhook add PreToolUse --name lichhook --command {shlex.quote(old)} "
                                    f"--timeout 8\n{END}\n")
    ok(run("install", "crush"))
    (line,) = [ln for ln in (folder / "crushrc").read_text().splitlines() if ln.startswith("hook add")]
    words = shlex.split(line)
    # the event word goes in after lichhook's, before what the user added; the timeout stays theirs
    assert words[words.index("--command") + 1] == hook_line(PY, str(installed_hooks(home)), "crush", "PreToolUse") \
        + " /my/extra"
    assert words[words.index("--timeout") + 1] == "8"


# -- doctor --------------------------------------------------------------------------------


def config_path(home: Path, provider: str) -> Path:
    return home / {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                   "antigravity": ".gemini/config/plugins/lichhook/hooks.json",
                   "crush": ".config/crush/crush.json"}[provider]


def without(home: Path, provider: str, event: str, words: tuple) -> None:
    """Take lichhook's entry for ``words`` on ``event`` out of the config, by hand."""
    path = config_path(home, provider)
    data = load(path)
    table = data["lichhook"] if provider == "antigravity" else data["hooks"]
    flat = provider == "crush" or (provider == "antigravity" and event in AGY_FLAT)
    if flat:
        table[event] = [h for h in table[event] if words_of(h["command"], home) != words]
    else:
        for group in table[event]:
            group["hooks"] = [h for h in group["hooks"] if words_of(h["command"], home) != words]
        table[event] = [g for g in table[event] if g["hooks"]]
    if not table[event]:
        del table[event]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.parametrize("provider", HARNESSES)
def test_doctor_says_which_event_is_missing(run, home, provider):
    ok(run("install", provider))
    event, words = rows(provider)[-1][:2]
    without(home, provider, event, words)
    out = run("doctor", "--verbose").stdout.decode()
    lines = [ln for ln in out.splitlines() if ln.startswith(f"problem: {provider}: the registration is incomplete")]
    assert len(lines) == 1, out
    assert f"{event} ('{' '.join(words)}')" in lines[0] and f"install {provider}" in lines[0]
    total = len(rows(provider))
    assert f"hooks:      {total - 1} of {total} registered as this release writes them" in out
    ok(run("install", provider))
    assert read_back(provider, home) == rows(provider)
    assert "incomplete" not in run("doctor", "--verbose").stdout.decode()


@pytest.mark.parametrize("provider", HARNESSES)
def test_doctor_notices_each_event_missing(tmp_path, provider):
    """Every registration, one at a time: the config without it is incomplete."""
    from lichhook.install import doctor, harnesses
    from lichhook.install.disk import files
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target

    home = tmp_path / "home"
    home.mkdir()
    env = Env({"HOME": str(home), "PATH": ""}, windows=False)
    archive = home / ".local" / "share" / "lichhook" / "py3.11" / "hooks.pyz"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"")
    target = Target(PY, str(archive), windows=False)
    harness = harnesses.make(provider, env)
    for edit in harness.install(target):
        files.apply(edit)
    path = config_path(home, provider)
    complete = path.read_bytes()
    for event, words, _, _ in rows(provider):
        path.write_bytes(complete)
        data = load(path)
        table = data["lichhook"] if provider == "antigravity" else data["hooks"]
        flat = provider == "crush" or (provider == "antigravity" and event in AGY_FLAT)
        line = hook_line(PY, str(archive), *words)
        if flat:
            table[event] = [h for h in table[event] if h["command"] != line]
        else:
            for group in table[event]:
                group["hooks"] = [h for h in group["hooks"] if h["command"] != line]
        path.write_text(json.dumps(data), encoding="utf-8")
        problems: list = []
        doctor._check(harnesses.make(provider, env), target, env, io.StringIO(), problems)
        incomplete = [p for p in problems if "incomplete" in p[1]]
        assert len(incomplete) == 1 and f"{event} ('{' '.join(words)}')" in incomplete[0][1], (event, problems)


def test_uninstall_takes_lichhooks_entries_out_of_events_it_no_longer_registers(run, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    user = '{"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "echo compact"}]}]}}\n'
    settings.write_text(user)
    ok(run("install", "claude"))
    data = load(settings)
    # an entry of lichhook's on an event this release does not register (written by hand, say)
    data["hooks"]["PreCompact"][0]["hooks"].append(
        {"type": "command", "command": shlex.join([PY, "-I", "-S", str(installed_hooks(home)), "claude", "PreCompact"])})
    settings.write_text(json.dumps(data))
    ok(run("uninstall", "claude"))
    assert load(settings) == json.loads(user)
