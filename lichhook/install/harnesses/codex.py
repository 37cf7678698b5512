"""Codex CLI: command hooks in hooks.json, the MCP server in config.toml.

- ``$CODEX_HOME/hooks.json``, else ``~/.codex/hooks.json``: one command hook per row of
  Codex's descriptor registrations (``lichhook.adapters``), under its event with the
  row's timeout: ``SessionStart`` runs the ``codex`` report and the
  ``codex-waits session-start`` hook (which tells the model its session id for the waits
  tool); every other event runs ``codex <event>``. Codex runs ``command`` with
  ``$SHELL -lc`` on Unix; on Windows it runs ``commandWindows`` with the session shell
  (PowerShell, by every report) or ``%COMSPEC% /C``, so that line must mean the same to both.
- ``config.toml``: the ``[mcp_servers.lichhook]`` table, owned by its key (``tomlconfig``),
  and Codex's own trust records (``codextrust``), which lichhook reads for each of its
  hooks and never writes; ``uninstall`` takes out the records of the hooks it removes.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence

from lichhook.coldstart.quickjson import json_or_none
from lichhook.descriptor import Registration
from lichhook.install import harness, quoting
from lichhook.install.harnesses import codextrust
from lichhook.install.plugin import layout, route
from lichhook.install.config import entries, textblock, tomlconfig
from lichhook.install.disk import files
from lichhook.install.copies.target import Target
from lichhook.install.errors import ConfigError

TRUST_FIX = ("start codex; when it says \"Hooks need review\", choose \"Trust all and continue\" (or review "
             "them with /hooks and press t on each). Trusting is your decision: lichhook never does it for you")


class Codex(route.PluginRouted):
    name = "codex"
    title = "Codex CLI"
    programs = ("codex",)

    def __init__(self, env: harness.Env) -> None:
        super().__init__(env)
        self._notes: list = []

    def config_dir(self) -> str:
        return self.env.get("CODEX_HOME") or os.path.join(self.env.home(), ".codex")

    def hooks_path(self) -> str:
        return os.path.join(self.config_dir(), "hooks.json")

    def toml_path(self) -> str:
        return os.path.join(self.config_dir(), "config.toml")

    def config_values(self) -> dict:
        """config.toml as values ({} when absent). Raises ConfigError when unreadable."""
        path = self.toml_path()
        raw = files.read(path)
        if raw is None:
            return {}
        value = tomlconfig.read_value(textblock.decode(raw, path)[1], path)  # values only: the fast reader
        return value if isinstance(value, dict) else {}

    def handler(self, target: Target, r: Registration, earlier: Sequence[tuple] = ()) -> entries.Wanted:
        sub = r.words
        entry: dict = {"type": "command", "command": target.sh_line(*sub)}
        fields: Dict[str, entries.Field] = {"command": entries.Line("sh")}
        if target.windows:
            line, warning = target.windows_line(*sub)
            entry["commandWindows"] = line
            fields["commandWindows"] = entries.Line("windows")
            if warning and f"Codex on Windows: {warning}." not in self._notes:
                self._notes.append(f"Codex on Windows: {warning}.")
        entry.update(layout.timeout_of(r))
        return entries.Wanted(sub, entry, fields, earlier)

    def config_install(self, target: Target) -> List[files.Edit]:
        # lichhook's group goes after the others and its handlers at the end of it
        # (``entries.install_hooks``), so no hook of the user's moves to another
        # (positional) trust key
        toml_path = self.toml_path()
        return self.json_edits(target) + [
            files.Edit(toml_path, lambda raw, notes: tomlconfig.add(raw, toml_path, target, notes), mode=0o600)]

    def config_uninstall(self, target: Target) -> List[files.Edit]:
        toml_path = self.toml_path()
        # The keys of the hooks this removes, read before hooks.json changes: their trust
        # records go with them (a record left behind would trust whatever comes to stand
        # at that position with the same command).
        records = [key for _, key, _, _ in self.trust(target)]

        def remove_mcp(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            return tomlconfig.remove(raw, toml_path, target, self._created_by_lichhook(toml_path, target), records)

        return self.json_edits(target, install=False) + [files.Edit(toml_path, remove_mcp)]

    @staticmethod
    def _created_by_lichhook(path: str, target: Target) -> bool:
        """No backup of a user's original beside it (or one of lichhook's own table)."""
        if os.path.islink(path):
            return False
        try:
            backup = files.read(path + files.BACKUP_SUFFIX)
        except ConfigError:
            return False
        if backup is None:
            return True
        if not backup.strip():
            return False  # it was there, blank, before lichhook: it stays
        try:
            left = tomlconfig.remove(backup, path, target, True)
        except ConfigError:
            return False
        return left is None or not left.strip()

    def notes(self, target: Target) -> List[str]:
        return list(self._notes)

    def registrations(self, target: Target) -> List[harness.Registered]:
        found = super().registrations(target)
        raw = files.read(self.toml_path())
        if raw is not None:
            seen = tomlconfig.registration(raw, self.toml_path(), target)
            if seen is not None:
                text, python, archive, ours, additions = seen
                found.append(harness.Registered(self.toml_path(), "mcp_servers.lichhook", text, python, archive,
                                           ours, additions))

        return found + route.registrations(self, target)

    # -- trust ----------------------------------------------------------------------------

    def trust(self, target: Target) -> List[tuple]:
        """(label, key, status, enabled) of each of lichhook's hooks in hooks.json, status
        being codextrust.TRUSTED, MODIFIED or UNTRUSTED, or None when Codex could not run
        the hook as written. Empty when hooks.json is absent or unreadable (the
        registrations say why). Raises ConfigError when config.toml cannot be read."""
        raw = files.read(self.hooks_path())
        doc = json_or_none(raw) if raw is not None else None
        hooks = doc.get("hooks") if isinstance(doc, dict) else None
        if not isinstance(hooks, dict):
            return []
        records = codextrust.records(self.config_values())
        # Codex names hooks.json by its folder's real path.
        source = os.path.join(os.path.realpath(self.config_dir()), "hooks.json")
        found = []
        for event in (name for name in hooks if name in codextrust.LABELS):
            groups = hooks.get(event)
            for gi, group in enumerate(groups if isinstance(groups, list) else []):
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                    if not isinstance(handler, dict) or not target.owns(entries.command_strings(handler)):
                        continue
                    key = codextrust.key(source, event, gi, hi)
                    current = codextrust.hook_hash(event, group, handler, target.windows)
                    record = records.get(key)
                    status = codextrust.status(current, record) if current is not None else None
                    found.append((f"{event} hook '{_subcommand(handler, target)}'", key, status,
                                  codextrust.enabled(record)))
        return found

    def checks(self, target: Target) -> List[tuple]:
        out: List[tuple] = route.checks(self, target)
        if route.installed_root(self):
            out.append(("trust: the hooks of lichhook's plugin lich@lich-plugin need your trust like those of "
                        "hooks.json (Codex skips them until you trust them); doctor does not read that record for "
                        f"plugin hooks. To trust them: {TRUST_FIX}", None, None))
        for label, key, status, enabled in self.trust(target):
            if status == codextrust.TRUSTED and enabled:
                out.append((f"trust: {label}: trusted by Codex", None, None))
                continue
            said = {
                codextrust.TRUSTED: "trusted",
                codextrust.UNTRUSTED: "not trusted yet",
                codextrust.MODIFIED: "changed since you trusted it",
                None: "written in a way Codex cannot run",
            }[status]
            # hooks in one state, with one fix, are one line in doctor and install (face)
            cause = "hooks " + said.replace(" it", " them")
            if not enabled:
                said = f"turned off in Codex's /hooks ({said})"
                cause = "hooks turned off in Codex's /hooks"
                fix = "start codex, open /hooks and turn it on" + ("" if status == codextrust.TRUSTED else
                                                                   ", then trust it (press t on it)")
            elif status is None:
                fix = "remove that entry from hooks.json and install codex again"
            else:
                fix = TRUST_FIX
            said += ", so Codex skips it without a word"
            out.append((f"trust: {label}: {said} (Codex's key {key})",
                        f"Codex does not run lichhook's {label} in {self.hooks_path()}: it is {said}", fix, cause))
        return out


def _subcommand(handler: dict, target: Target) -> str:
    """lichhook's words after the archive in a handler's command, for naming it."""
    command = handler.get("command")
    words = (quoting.split_words(command) if isinstance(command, str) else None) or []
    for i, word in enumerate(words):
        if target.archive_of(word):
            return " ".join(words[i + 1:]) or "?"
    return "?"
