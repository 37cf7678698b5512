"""The theme skill (lichhook/install/md/theme/SKILL.md) as each harness gets it, the built
archive installing into temp homes: in Claude Code's and Codex's plugin (their CLIs the
stand-ins of test_plugin_route_faults, which copy the plugin as the real ones do) and in
Antigravity's plugin folder; byte for byte the skill with the command that runs the
installed lichhook written in, and that command, run by a shell as a model would, checks
a theme. Uninstall takes out only what lichhook wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import build_zipapp
from lichhook.install.plugin import skills
from test_plugin_route_faults import Home

SOURCE = Path(__file__).resolve().parent.parent / "lichhook" / "install" / "md" / "theme" / "SKILL.md"
THEME = Path(__file__).resolve().parent / "fixtures" / "themes" / "harbour-night.json"


def command_in(skill: bytes) -> str:
    """The command the skill tells the model to run lichhook with: the installed skill is
    the source with that command, and nothing else, in place of its mark."""
    head, tail = SOURCE.read_bytes().split(skills.COMMAND_MARK, 1)
    assert skill.startswith(head)
    command = skill[len(head):skill.index(tail[:40])].decode()
    assert skill == SOURCE.read_bytes().replace(skills.COMMAND_MARK, command.encode())
    return command


def checks_a_theme(command: str, env: dict) -> None:
    done = subprocess.run(["sh", "-c", f"{command} theme check {THEME}"], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout.decode() == f"{THEME}: ok for lich 0.53.0\n", done


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_the_plugin_carries_the_skill_with_the_installed_lichhook_and_uninstall_takes_it(pyz, tmp_path, name):
    box = Home(tmp_path / name, pyz, name)
    assert box.lichhook("install", name).returncode == 0
    (root,) = box.plugin_roots()  # the harness's own copy of the plugin
    skill = (root / "skills" / "theme" / "SKILL.md").read_bytes()
    command = command_in(skill)
    assert str(box.home) in command and "lichhook.pyz" in command and "hooks.pyz" not in command
    checks_a_theme(command, box.run.env)
    if name == "codex":
        assert json.loads((root / ".codex-plugin" / "plugin.json").read_text())["skills"] == "./skills/"
    market = box.home / ".local" / "share" / "lichhook" / "marketplace" / name
    assert (market / "skills" / "theme" / "SKILL.md").read_bytes() == skill
    doctor = box.lichhook("doctor", "--verbose").stdout.decode()
    assert f"skills: theme, in {root / 'skills'}" in doctor and "theme skill is missing" not in doctor, doctor
    (root / "skills" / "theme" / "SKILL.md").write_bytes(skill.replace(b"lich", b"lych"))
    doctor = box.lichhook("doctor").stdout.decode()
    assert f"problem: {name}: the theme skill is missing or changed" in doctor, doctor
    assert f"Fix: run uninstall {name}, then install {name}" in doctor, doctor
    assert box.lichhook("uninstall", name).returncode == 0 and box.lichhook("install", name).returncode == 0
    assert (box.plugin_roots()[0] / "skills" / "theme" / "SKILL.md").read_bytes() == skill

    (root,) = box.plugin_roots()
    mine = market / "skills" / "mine" / "SKILL.md"  # the user's own, beside lichhook's
    mine.parent.mkdir()
    mine.write_text("---\nname: mine\ndescription: mine\n---\n")
    gone = box.lichhook("uninstall", name)
    assert gone.returncode == 0, gone.stderr.decode()
    assert box.plugin_roots() == []
    assert sorted(str(p.relative_to(market)) for p in market.rglob("*")) == ["skills", "skills/mine",
                                                                              "skills/mine/SKILL.md"]


def test_antigravitys_plugin_folder_carries_the_skill_and_keeps_the_users(run, home, base_env):
    folder = home / ".gemini" / "config" / "plugins" / "lichhook"
    skill = folder / "skills" / "theme" / "SKILL.md"
    assert run("install", "antigravity").returncode == 0
    command = command_in(skill.read_bytes())
    assert "lichhook.pyz" in command and "hooks.pyz" not in command
    checks_a_theme(command, base_env)
    before = skill.read_bytes()
    assert run("install", "antigravity").returncode == 0 and skill.read_bytes() == before
    assert f"skills: theme, in {skill.parent.parent}" in run("doctor", "--verbose").stdout.decode()
    skill.unlink()
    assert "problem: antigravity: the theme skill is missing or changed. Fix: run install antigravity again" in \
        run("doctor").stdout.decode()
    assert run("install", "antigravity").returncode == 0 and skill.read_bytes() == before

    other = folder / "skills" / "other" / "SKILL.md"
    other.parent.mkdir()
    other.write_text("---\nname: other\ndescription: the user's\n---\n")
    assert run("uninstall", "antigravity").returncode == 0
    assert not skill.parent.exists() and other.exists()
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == ["skills", "skills/other",
                                                                              "skills/other/SKILL.md"]


def test_a_theme_skill_of_the_users_own_is_never_replaced_or_deleted(run, home):
    skill = home / ".gemini" / "config" / "plugins" / "lichhook" / "skills" / "theme" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_bytes(b"---\nname: theme\ndescription: my own\n---\nmine\n")
    refused = run("install", "antigravity")
    assert refused.returncode == 1 and f"{skill} exists and was not written by lichhook" in refused.stderr.decode()
    assert run("uninstall", "antigravity").returncode == 0
    assert skill.read_bytes() == b"---\nname: theme\ndescription: my own\n---\nmine\n"


def test_the_release_carries_the_skill_running_the_archive_beside_it(pyz):
    release = build_zipapp.release_dir(pyz)
    skill = (release / "skills" / "theme" / "SKILL.md").read_bytes()
    assert command_in(skill) == skills.RELEASE_COMMAND
    assert json.loads((release / ".codex-plugin" / "plugin.json").read_text())["skills"] == "./skills/"
    assert skill.startswith(b"---\nname: theme\ndescription: ")
