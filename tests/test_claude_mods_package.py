"""lichhook's Claude Code mods as its plugin carries them (lichhook.install.plugin.claudemods): the
release the build writes and the marketplace install writes both name the entry module in
hooks/hooks.json and carry every mod beside it (and the files of lichhook/js/common they
import, at the same relative paths), with the contract release written in; the archive
carries the JavaScript. (Install and uninstall through the plugin route:
tests/test_plugin_route_faults.py.)"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import build_zipapp
from lichhook.contracts import RELEASE
from lichhook.install.plugin import claudemods

SOURCE = Path(__file__).resolve().parent.parent / "lichhook" / "js" / "claude"
NODE = shutil.which("node")

# Imports the entry module as Claude Code does (an ES module) and registers it with an `on`
# that keeps each registration: what Claude Code would hook.
REGISTER = r"""
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[2]).href);
const seen = [];
mod.register((event, matcher, hook) => { seen.push([event, typeof matcher === "function" ? null : matcher]); return { catch() {} }; });
console.log(JSON.stringify(seen));
"""


@pytest.fixture(scope="module")
def release(pyz) -> Path:
    return build_zipapp.release_dir(pyz)


def test_claudemods_names_every_mod_in_the_folder_and_every_file_they_import_from_beside_it():
    imported = {name for p in SOURCE.glob("*.js") for name in re.findall(r'from "\.\./([^"]+)"', p.read_text())}
    assert imported  # client.js: common/lich.js and common/text.js
    assert sorted(claudemods.NAMES) == sorted([f"claude/{p.name}" for p in SOURCE.glob("*.js")] + list(imported))


def test_the_release_names_the_entry_module_and_carries_every_mod_with_the_release_in(release):
    hooks = json.loads((release / "hooks" / "hooks.json").read_text())
    assert hooks["modules"] == ["./claude/lich.js"]
    assert "SessionStart" in hooks["hooks"]  # the command hooks stay beside the mods
    carried = release / "hooks"
    assert sorted(p.relative_to(carried).as_posix() for p in carried.rglob("*.js")) == sorted(claudemods.NAMES)
    for name in claudemods.NAMES:
        text = (carried / name).read_text()
        if name == "claude/release.js":
            assert f'export const RELEASE = "{RELEASE}";' in text
        else:
            assert text == (SOURCE.parent / name).read_text()
        assert "@RELEASE@" not in text


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_carried_entry_module_loads_and_registers_each_event_once(release, tmp_path):
    script = tmp_path / "register.mjs"
    script.write_text(REGISTER)
    done = subprocess.run([NODE, str(script), str(release / "hooks" / "claude" / "lich.js")], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout)
    events = [event for event, _ in seen]
    # Claude Code refuses a plugin's second hook on one event with the same matcher
    assert len({json.dumps(s) for s in seen}) == len(seen)
    assert ["session.start", {"isInteractive": True}] in seen
    assert ["ui.render", {"component": "SessionMode"}] in seen  # the footer line, among the mode labels
    assert {"session.end", "turn.start", "turn.step", "turn.complete", "session.measure",
            "classic.Stop", "tool.call"} <= set(events)


def test_the_archive_carries_the_mods(pyz):
    with zipfile.ZipFile(pyz) as archive:
        members = set(archive.namelist())
    assert {f"lichhook/js/{name}" for name in claudemods.NAMES} <= members
