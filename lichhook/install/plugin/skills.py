"""The skills lichhook's plugins carry: ``theme`` (``lichhook/install/md/theme/SKILL.md``),
which Claude Code lists as ``/lich:theme``. Claude Code and Codex load a plugin's skills
from its ``skills/<name>/SKILL.md`` (Codex where the manifest names ``"skills"``),
Antigravity from ``skills/`` in its plugin folder. A skill runs lichhook by the command
written into it here: the installed copy's Python and archive, or in the portable
release the archive inside the plugin, which Claude Code names ``${CLAUDE_PLUGIN_ROOT}``.
"""

from __future__ import annotations

import os
import pkgutil
from typing import Dict

from lichhook.install.disk.files import read
from lichhook.install.errors import ConfigError
from lichhook.install.copies.target import Target

FOLDER = "skills"
NAMES = ("theme/SKILL.md",)
COMMAND_MARK = b"@LICHHOOK@"
RELEASE_COMMAND = 'python3 "${CLAUDE_PLUGIN_ROOT}/lichhook.pyz"'
# A line only lichhook's skills hold: the proof a skill file is lichhook's to replace or remove.
SIGNATURE = b"<!-- lichhook's skill: lichhook's install writes this file and its uninstall removes it. -->"


def command(target: Target) -> str:
    """The shell command that runs the complete archive of ``target``."""
    return target.server().sh_line()


def files(run: str) -> Dict[str, bytes]:
    """Plugin-relative path -> bytes of every skill, running lichhook as ``run``."""
    try:
        command = run.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"cannot write lichhook's skills: the command they name, {run!r}, holds an undecodable "
                          "byte (not UTF-8), which a skill's text cannot hold; install from a home folder whose "
                          "path is UTF-8 (or set XDG_DATA_HOME to one)") from None
    out = {}
    for name in NAMES:
        # read beside this module: a hooks archive's own loader, for the package, holds no data
        found = pkgutil.get_data("lichhook.install", f"md/{name}")
        if found is None:
            raise ConfigError(f"lichhook's skill {name} is missing from this lichhook; rebuild the archive")
        out[f"{FOLDER}/{name}"] = found.replace(b"\r\n", b"\n").replace(COMMAND_MARK, command)
    return out


def ours(raw: bytes) -> bool:
    return SIGNATURE in raw


def check(root: str, run: str, fix: str) -> tuple:
    """doctor's (line, problem, fix) about the skills in the plugin folder ``root``."""
    changed = [rel for rel, data in sorted(files(run).items()) if read(os.path.join(root, *rel.split("/"))) != data]
    if not changed:
        return f"skills: theme, in {os.path.join(root, FOLDER)}", None, None
    return (f"skills: {', '.join(changed)} in {root} is missing or not what lichhook writes",
            "the theme skill is missing or changed", fix)
