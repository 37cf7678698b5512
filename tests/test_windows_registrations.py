"""What install writes and says for Windows, and how doctor reads it back, rendered on
this machine: each harness is given a Windows target, files land in a temporary home,
and the notes and doctor's findings are checked. The quoting rules themselves are
checked in test_install_quoting.py."""

from __future__ import annotations

import io
import json

import pytest

from lichhook.install import doctor
from lichhook.install.disk import files
from lichhook.install.harnesses.antigravity import Antigravity
from lichhook.install.harnesses.codex import Codex
from lichhook.install.harness import Env
from lichhook.install.copies.target import Target, launcher
from testkit.archive import hook_line, hook_options


def windows_env(tmp_path) -> Env:
    home = tmp_path / "home"
    home.mkdir()
    return Env({"USERPROFILE": str(home), "PATH": ""}, windows=True)


def installed(harness, target) -> None:
    for edit in harness.install(target):
        files.apply(edit)


def existing(tmp_path, *parts: str) -> str:
    """A file at tmp_path/parts that exists, so doctor finds what an entry names."""
    path = tmp_path.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return str(path)


# -- Codex: the quoted archive is called out, once ---------------------------------------


def test_codex_says_when_its_windows_line_needs_quotes(tmp_path):
    env = windows_env(tmp_path)
    archive = "D:\\Profiles\\Zoë O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz"
    target = Target("C:\\Python312\\python.exe", archive, windows=True, short_path=lambda p: None)
    codex = Codex(env)
    installed(codex, target)
    codex.install(target)  # planned twice, as doctor does: still one note
    entry = json.loads((tmp_path / "home" / ".codex" / "hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]
    assert entry["commandWindows"] == f'C:\\Python312\\python.exe -I -S "{archive}" codex'
    warnings = [n for n in codex.notes(target) if n.startswith("Codex on Windows:")]
    assert len(warnings) == 1 and archive in warnings[0] and "cmd.exe" in warnings[0]


def test_codex_says_nothing_when_the_line_needs_no_quotes(tmp_path):
    env = windows_env(tmp_path)
    target = Target("C:\\Python312\\python.exe", "C:\\Users\\zoe\\AppData\\Local\\lichhook\\lichhook.pyz",
                    windows=True, short_path=lambda p: None)
    codex = Codex(env)
    installed(codex, target)
    assert not [n for n in codex.notes(target) if n.startswith("Codex on Windows:")]


# -- Antigravity: quoted paths are reported to break there, so say so --------------------


@pytest.mark.parametrize("python,archive,shorts,quoted", [
    ("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\zoe\\AppData\\Local\\lichhook\\lichhook.pyz",
     {}, ["C:/Program Files/Python312/python.exe"]),
    ("C:\\Python312\\python.exe", "C:\\Users\\Zoë O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz",
     {}, ["C:/Users/Zoë O'Brien/AppData/Local/lichhook/lichhook.pyz"]),
    ("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\zoe\\AppData\\Local\\lichhook\\lichhook.pyz",
     {"C:\\Program Files\\Python312\\python.exe": "C:\\PROGRA~1\\PYTHON~1\\python.exe"}, []),
])
def test_antigravity_on_windows_warns_about_quoted_paths(tmp_path, python, archive, shorts, quoted):
    env = windows_env(tmp_path)
    target = Target(python, archive, windows=True, short_path=shorts.get)
    agy = Antigravity(env)
    installed(agy, target)
    hooks = json.loads((tmp_path / "home" / ".gemini" / "config" / "plugins" / "lichhook" / "hooks.json").read_text())
    command = hooks["lichhook"]["PreInvocation"][0]["command"]
    warnings = [n for n in agy.notes(target) if n.startswith("Antigravity on Windows:")]
    if quoted:
        assert "'" in command
        assert len(warnings) == 1 and all(p in warnings[0] for p in quoted)
        assert "reported to break" in warnings[0]
    else:
        assert "'" not in command and warnings == []


def test_antigravity_elsewhere_gets_no_windows_warning(tmp_path):
    env = Env({"HOME": str(tmp_path), "PATH": ""}, windows=False)
    target = Target("/opt/my python/bin/python3", "/home/zoe/.local/share/lichhook/lichhook.pyz", windows=False)
    assert not [n for n in Antigravity(env).notes(target) if "Windows" in n]


# -- doctor reads every form back ---------------------------------------------------------


@pytest.mark.parametrize("folder", ["O\u2019Brien Programs", "O'Brien Programs", "\u2018quoted\u2019 $x `y`"])
def test_doctor_reads_a_powershell_line_with_any_quote_back(tmp_path, folder):
    """A Python path no bare or short form exists for gets the PowerShell form, with each
    of PowerShell's five single quotes doubled; doctor must find that Python again."""
    env = windows_env(tmp_path)
    python = existing(tmp_path, folder, "python.exe")
    archive = existing(tmp_path, "data", "lichhook.pyz")
    target = Target(python, archive, windows=True, short_path=lambda p: None)
    installed(Codex(env), target)
    line = json.loads((tmp_path / "home" / ".codex" / "hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]["commandWindows"]
    assert line.startswith("& ")
    problems: list = []
    out = io.StringIO()
    doctor._check(Codex(env), target, env, out, problems)
    assert [p for p in problems if "Codex does not run" not in p[1]] == [], out.getvalue()  # nobody trusted it
    assert f"python:  {python} (exists)" in out.getvalue()


def test_doctor_reads_a_dual_line_with_an_apostrophe_in_its_quotes_back(tmp_path):
    """The Windows line for an archive in D:\\Profiles\\Zoë O'Brien: the program bare, the
    archive in double quotes with the apostrophe inside them."""
    env = windows_env(tmp_path)
    archive = "D:\\Profiles\\Zoë O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz"
    target = Target("C:\\Program Files\\Python312\\python.exe", archive, windows=True,
                    short_path={"C:\\Program Files\\Python312\\python.exe": "C:\\PROGRA~1\\PYTHON~1\\python.exe"}.get)
    installed(Codex(env), target)
    found, _waits = [f for f in Codex(env).registrations(target) if f.label == "SessionStart"]
    assert (found.python, found.archive) == ("C:\\PROGRA~1\\PYTHON~1\\python.exe", archive)


# -- every event, in each harness's Windows form -------------------------------------------------


def rows(provider: str) -> dict:
    from lichhook.adapters import BY_PROVIDER
    from lichhook.descriptor import registrations

    out: dict = {}
    for r in registrations(BY_PROVIDER[provider]):
        out.setdefault(r.event, []).append(r)
    return out


def test_every_codex_hook_gets_its_windows_line_and_the_quotes_are_said_once(tmp_path):
    env = windows_env(tmp_path)
    archive = "D:\\Profiles\\Zoë O'Brien\\AppData\\Local\\lichhook\\hooks.pyz"
    target = Target("C:\\Python312\\python.exe", archive, windows=True, short_path=lambda p: None)
    codex = Codex(env)
    installed(codex, target)
    hooks = json.loads((tmp_path / "home" / ".codex" / "hooks.json").read_text())["hooks"]
    assert list(hooks) == list(rows("codex"))
    for event, regs in rows("codex").items():
        handlers = [h for g in hooks[event] for h in g["hooks"]]
        assert [h["commandWindows"] for h in handlers] == [
            f'C:\\Python312\\python.exe -I -S -c "{launcher()}" "{archive}" {" ".join(r.words)}' for r in regs]
        assert [h["timeout"] for h in handlers] == [r.timeout for r in regs]
    assert len([n for n in codex.notes(target) if n.startswith("Codex on Windows:")]) == 1


def test_every_claude_hook_is_in_the_exec_form_and_doctor_finds_it_complete(tmp_path):
    from lichhook.install.harnesses.claude import Claude

    env = windows_env(tmp_path)
    python = existing(tmp_path, "Program Files", "Python312", "python.exe")
    archive = existing(tmp_path, "data", "py3.12", "hooks.pyz")
    target = Target(python, archive, windows=True, short_path=lambda p: None)
    installed(Claude(env), target)
    hooks = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())["hooks"]
    for event, regs in rows("claude").items():
        (group,) = hooks[event]
        assert group.get("matcher") == regs[0].matcher
        assert group["hooks"] == [{"type": "command", "command": python, "args": [*hook_options(*r.words), archive, *r.words],
                                   "timeout": r.timeout} for r in regs]
    problems: list = []
    out = io.StringIO()
    doctor._check(Claude(env), target, env, out, problems)
    total = sum(len(regs) for regs in rows("claude").values())
    assert f"hooks:      {total} of {total} registered" in out.getvalue()
    assert [p for p in problems if "incomplete" in p[1]] == [], out.getvalue()


@pytest.mark.parametrize("provider", ["antigravity", "crush"])
def test_antigravity_and_crush_write_every_hook_as_one_posix_line_with_forward_slashes(tmp_path, provider):
    from lichhook.install.harnesses.crush import Crush

    env = windows_env(tmp_path)
    python = "C:\\Python312\\python.exe"
    archive = "C:\\Users\\zoe\\AppData\\Local\\lichhook\\py3.12\\hooks.pyz"
    target = Target(python, archive, windows=True, short_path=lambda p: None)
    harness = Antigravity(env) if provider == "antigravity" else Crush(env)
    installed(harness, target)
    home = tmp_path / "home"
    if provider == "antigravity":
        table = json.loads((home / ".gemini/config/plugins/lichhook/hooks.json").read_text())["lichhook"]
        commands = {e: [h["command"] for item in items for h in (item.get("hooks") or [item])]
                    for e, items in table.items()}
    else:
        table = json.loads((home / ".config/crush/crush.json").read_text())["hooks"]
        commands = {e: [h["command"] for h in items] for e, items in table.items()}
    assert commands == {event: [hook_line("C:/Python312/python.exe", "C:/Users/zoe/AppData/Local/lichhook/py3.12/hooks.pyz",
                                          *r.words) for r in regs] for event, regs in rows(provider).items()}
