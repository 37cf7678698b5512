"""Codex CLI: the SessionStart hook in hooks.json, the MCP server in config.toml.

- ``$CODEX_HOME/hooks.json``, else ``~/.codex/hooks.json``: ``SessionStart`` runs the
  ``codex`` report, timeout 5 s. Codex runs ``command`` with ``$SHELL -lc`` on Unix; on
  Windows it runs ``commandWindows`` with the session shell (PowerShell, by every report)
  or ``%COMSPEC% /C``, so that line must mean the same to both.
- ``config.toml``: the ``[mcp_servers.lichhook]`` table, owned by its key (``tomlconfig``).
"""

from __future__ import annotations

import os

from lichhook.install import entries, files, harness, jsonmerge, tomlconfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional

    from lichhook.install.target import Target

TIMEOUT = 5
EVENTS = ("SessionStart",)


class Codex(harness.Harness):
    name = "codex"
    title = "Codex CLI"
    programs = ("codex",)

    def __init__(self, env: harness.Env) -> None:
        super().__init__(env)
        self._notes: list = []

    def home_dir(self) -> str:
        return self.env.get("CODEX_HOME") or os.path.join(self.env.home(), ".codex")

    def config_dirs(self) -> List[str]:
        return [self.home_dir()]

    def hooks_path(self) -> str:
        return os.path.join(self.home_dir(), "hooks.json")

    def toml_path(self) -> str:
        return os.path.join(self.home_dir(), "config.toml")

    def handler(self, target: Target) -> entries.Wanted:
        entry: dict = {"type": "command", "command": target.sh_line("codex")}
        fields: Dict[str, entries.Field] = {"command": entries.Line("sh")}
        if target.windows:
            line, warning = target.windows_line("codex")
            entry["commandWindows"] = line
            fields["commandWindows"] = entries.Line("windows")
            if warning and f"Codex on Windows: {warning}." not in self._notes:
                self._notes.append(f"Codex on Windows: {warning}.")
        entry["timeout"] = TIMEOUT
        return entries.Wanted(("codex",), entry, fields)

    def install(self, target: Target) -> List[files.Edit]:
        hooks_path, toml_path = self.hooks_path(), self.toml_path()
        wanted = [self.handler(target)]

        def add_hooks(doc, notes):
            entries.install_hooks(doc, hooks_path, ("hooks",), "SessionStart", wanted, {}, target, notes)

        return [files.Edit(hooks_path, harness.json_edit(hooks_path, add_hooks)),
                files.Edit(toml_path, lambda raw, notes: tomlconfig.add(raw, toml_path, target, notes), mode=0o600)]

    def uninstall(self, target: Target) -> List[files.Edit]:
        hooks_path, toml_path = self.hooks_path(), self.toml_path()

        def remove_mcp(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            return tomlconfig.remove(raw, toml_path, target, self._created_by_lichhook(toml_path, target))

        return [
            files.Edit(hooks_path, harness.removal(hooks_path, lambda doc, keep: entries.remove_hooks(
                doc, ("hooks",), EVENTS, target, keep))),
            files.Edit(toml_path, remove_mcp),
        ]

    @staticmethod
    def _created_by_lichhook(path: str, target: Target) -> bool:
        """No backup of a user's original beside it (or one of lichhook's own table)."""
        if os.path.islink(path):
            return False
        try:
            backup = files.read(path + files.BACKUP_SUFFIX)
        except jsonmerge.ConfigError:
            return False
        if backup is None:
            return True
        if not backup.strip():
            return False  # it was there, blank, before lichhook: it stays
        try:
            left = tomlconfig.remove(backup, path, target, True)
        except jsonmerge.ConfigError:
            return False
        return left is None or not left.strip()

    def notes(self, target: Target) -> List[str]:
        return self._notes + [
            "Codex runs a new or changed hook only after you trust it: start codex and review it "
            "with /hooks (until then it is skipped without a word)."
        ]

    def registrations(self, target: Target) -> List[harness.Found]:
        found = harness.found_in_json(self.hooks_path(), target, wanted={"SessionStart": [self.handler(target)]})
        raw = files.read(self.toml_path())
        if raw is not None:
            seen = tomlconfig.registration(raw, self.toml_path(), target)
            if seen is not None:
                text, python, archive, ours, additions = seen
                found.append(harness.Found(self.toml_path(), "mcp_servers.lichhook", text, python, archive,
                                           ours, additions))
        return found
