"""Antigravity: a plugin folder, ``~/.gemini/config/plugins/lichhook/``.

It holds ``plugin.json`` (the manifest: ``name`` and ``description`` only, as the
manifest schema allows no other key) and ``hooks.json``, whose top-level key names the
integration and whose ``PreInvocation`` is a flat list of ``{type, command, timeout}``.
Antigravity runs the command with ``sh -c`` from the plugin folder, before every model
call; the ``{}`` verdict comes from the ``antigravity`` adapter itself. Quoted paths are
reported to break on Windows, so paths there use forward slashes and, when they hold
spaces, their short (8.3) form.
"""

from __future__ import annotations

import json
import os

from lichhook.install import harness, owned

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

    from lichhook.install.files import Edit
    from lichhook.install.target import Target

TIMEOUT = 5  # an integer: one float timeout makes Antigravity drop the whole file
MARKER = b'"lichhook"'


class Antigravity(harness.Harness):
    name = "antigravity"
    title = "Antigravity"
    programs = ("agy", "antigravity")

    def gemini_dir(self) -> str:
        return os.path.join(self.env.home(), ".gemini")

    def config_dirs(self) -> List[str]:
        return [os.path.join(self.gemini_dir(), "config"), os.path.join(self.gemini_dir(), "antigravity-cli")]

    def plugin_dir(self) -> str:
        return os.path.join(self.gemini_dir(), "config", "plugins", "lichhook")

    def manifest(self) -> bytes:
        data = {"name": "lichhook",
                "description": "Reports each Antigravity conversation to lich (added by 'lichhook install antigravity')."}
        return (json.dumps(data, indent=2) + "\n").encode("utf-8")

    def hooks(self, target: Target) -> bytes:
        data = {"lichhook": {"PreInvocation": [
            {"type": "command", "command": target.sh_line("antigravity"), "timeout": TIMEOUT},
        ]}}
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def install(self, target: Target) -> List[Edit]:
        folder = self.plugin_dir()
        return [
            owned.write_owned(os.path.join(folder, "plugin.json"), self.manifest(), MARKER),
            owned.write_owned(os.path.join(folder, "hooks.json"), self.hooks(target), MARKER),
        ]

    def uninstall(self, target: Target) -> List[Edit]:
        folder = self.plugin_dir()
        return [
            owned.remove_owned(os.path.join(folder, "hooks.json"), MARKER),
            owned.remove_owned(os.path.join(folder, "plugin.json"), MARKER, prune_dirs=[folder]),
        ]

    def registrations(self, target: Target) -> List[harness.Found]:
        found: List[harness.Found] = []
        path = os.path.join(self.plugin_dir(), "hooks.json")
        data = harness.read_json_quietly(path)
        if isinstance(data, dict):
            for integration in data.values():
                for event, handler in harness.all_handlers(integration):
                    harness.found_entry(found, path, event, handler, target)
        return found

    def notes(self, target: Target) -> List[str]:
        return ["Antigravity: run 'agy plugin list' (or /hooks in agy) to see the lichhook plugin loaded."]
