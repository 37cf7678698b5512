"""Antigravity: a plugin folder, ``~/.gemini/config/plugins/lichhook/``.

It holds ``plugin.json`` (the manifest: ``name`` and ``description`` only, as the
manifest schema allows no other key) and ``hooks.json``, whose top-level key names the
integration and which holds one entry per row of Antigravity's descriptor registrations
(``lichhook.adapters``): ``antigravity <event>`` with the row's timeout. ``PreInvocation``
and ``Stop`` take a flat list of ``{type, command, timeout}``; ``PreToolUse`` and
``PostToolUse`` take matcher groups ``{matcher, hooks: [...]}``, with the row's matcher
(``""``: every tool; the tools that change files after one). An earlier release wrote
the bare ``antigravity`` on ``PreInvocation``; a reinstall updates it in place.
Antigravity runs the command with ``sh -c`` from the plugin folder; each event's
verdict (``{}``, ``{"decision":"allow"}``, ...) comes from the ``antigravity`` adapter
itself. Quoted paths are reported to break on Windows, so paths there use forward
slashes and, when they hold spaces, their short (8.3) form.
"""

from __future__ import annotations

import json
import os
from typing import List, Optional, Sequence

from lichhook.coldstart.quickjson import json_or_none
from lichhook.descriptor import Registration
from lichhook.install import harness
from lichhook.install.plugin import layout, lichplugin, lichtools, skills
from lichhook.install.config import entries
from lichhook.install.disk import files
from lichhook.install.disk.files import Edit
from lichhook.install.plugin.claim import harness_claim
from lichhook.install.copies.target import Target
from lichhook.install.errors import ConfigError

TABLE = ("lichhook",)
# The manifest's description ends with this; no one else writes it (ownership proof).
SIGNATURE = lichplugin.LICHHOOK_SIGNATURE
# The events whose lists hold handlers themselves; the others hold matcher groups.
FLAT_EVENTS = frozenset({"PreInvocation", "PostInvocation", "Stop"})
MARKER = b'"lichhook"'


class Antigravity(harness.EntryHarness):
    name = "antigravity"
    title = "Antigravity"
    programs = ("agy", "antigravity")
    table = TABLE
    flat = FLAT_EVENTS

    def gemini_dir(self) -> str:
        return os.path.join(self.env.home(), ".gemini")

    def config_dirs(self) -> List[str]:
        return [os.path.join(self.gemini_dir(), "config"), os.path.join(self.gemini_dir(), "antigravity-cli")]

    def plugin_dir(self) -> str:
        return os.path.join(self.gemini_dir(), "config", "plugins", "lichhook")

    def hooks_path(self) -> str:
        return os.path.join(self.plugin_dir(), "hooks.json")

    def manifest(self) -> bytes:
        data = {"name": "lichhook", "description": f"Reports each Antigravity conversation to lich {SIGNATURE}"}
        return layout.json_bytes(data)

    def handler(self, target: Target, r: Registration, earlier: Sequence[tuple] = ()) -> entries.Wanted:
        """The entry of ``r``. Its timeout is an integer: one float timeout makes
        Antigravity drop the whole file."""
        entry: dict = {"type": "command", "command": target.sh_line(*r.words)}
        if r.timeout is not None:
            entry["timeout"] = int(r.timeout)
        return entries.Wanted(r.words, entry, {"command": entries.Line("sh")}, earlier)

    def hooks(self, target: Target) -> bytes:
        events: dict = {}
        for event, wanted in self.wanted(target).items():
            handlers = [w.entry for w in wanted]
            group = self.group(event)
            events[event] = handlers if group is None else [dict(group, hooks=handlers)]
        text = json.dumps({TABLE[0]: events}, indent=2, ensure_ascii=False) + "\n"
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"cannot write {self.hooks_path()}: the path {target.archive!r} it "
                "would name holds an undecodable byte (not UTF-8), which no JSON file can hold; install from a "
                "home folder whose path is UTF-8 (or set XDG_DATA_HOME to one). It was left untouched.") from None

    def install(self, target: Target) -> List[Edit]:
        folder, path = self.plugin_dir(), self.hooks_path()

        def hooks(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            if raw is None:
                return self.hooks(target)
            if MARKER not in raw:
                raise ConfigError(f"{path} exists and was not written by lichhook; move it away, then run "
                                            "again. It was left untouched.")
            # lichhook's file, but a timeout or an argument the user changed there stays
            return self.json_edits(target)[0].transform(raw, notes)

        return [
            files.write_owned(os.path.join(folder, "plugin.json"), self.manifest(), _our_manifest),
            files.Edit(path, hooks, backup=False),
        ] + self._skills(target, install=True) + self._lich_tools(install=True)

    def uninstall(self, target: Target) -> List[Edit]:
        """The manifest goes only when lichhook wrote it; ``hooks.json`` goes whole only
        when it holds nothing but lichhook's handlers, else only those are taken out."""
        folder, path = self.plugin_dir(), self.hooks_path()
        whole = files.remove_owned(path, lambda raw: _only_ours(raw, target))
        entries_only = self.json_edits(target, install=False)[0].transform

        def hooks(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            if raw is None or _only_ours(raw, target) or MARKER not in raw:
                return whole.transform(raw, notes)
            return entries_only(raw, notes)

        return self._skills(target, install=False) + [
            files.Edit(path, hooks, backup=False),
            files.remove_owned(os.path.join(folder, "plugin.json"), _our_manifest, prune_dirs=[folder]),
        ] + self._lich_tools(install=False)

    def _skills(self, target: Target, install: bool) -> List[Edit]:
        """lichhook's skills in the plugin folder's ``skills/``, where Antigravity loads them."""
        out = []
        for rel, data in sorted(skills.files(skills.command(target)).items()):
            path = os.path.join(self.plugin_dir(), *rel.split("/"))
            made = [os.path.dirname(path), os.path.dirname(os.path.dirname(path))]
            out.append(files.write_owned(path, data, skills.ours, prune_dirs=made) if install
                       else files.remove_owned(path, skills.ours, prune_dirs=made))
        return out

    # -- lich's own MCP server and lich's marker (``lichtools``) --------------------------------

    def marker_manifest(self) -> str:
        return os.path.join(self.gemini_dir(), "config", "plugins", lichtools.NAME, "plugin.json")

    def mcp_path(self) -> str:
        return os.path.join(self.gemini_dir(), "config", "mcp_config.json")

    def _marker(self, owns_server: bool) -> bytes:
        added = " lichhook added mcpServers.lich to mcp_config.json." if owns_server else ""
        data = {"name": lichtools.NAME, "version": harness_claim(self),
                "description": f"lich's marker: lich reads its plugin installed here, with lich's tools "
                               f"(the hooks are lichhook's own plugin).{added} {SIGNATURE}"}
        return layout.json_bytes(data)

    def owns_lich_server(self) -> bool:
        raw = files.read(self.marker_manifest())
        return raw is not None and _our_marker(raw) and b"added mcpServers.lich" in raw

    def _lich_tools(self, install: bool) -> List[Edit]:
        """With lich's binary found (on install): ``mcpServers.lich`` in mcp_config.json,
        as ``agy mcp add lich <lich> mcp`` keeps it (unless someone else's ``lich`` entry is
        there), and lich's marker, ``plugins/lich/plugin.json``. Otherwise both go, when ours."""
        lich = lichtools.find_lich(self.env.environ, self.env.windows)[0] if install else None
        path, manifest = self.mcp_path(), self.marker_manifest()
        owned_before = self.owns_lich_server()
        claim = lich is not None and (owned_before or not lichtools.has_server(path))

        def add(doc, notes: List[str]) -> None:
            if claim:
                lichtools.put_server(doc, path, lich)  # type: ignore[arg-type]

        def take(doc, keep) -> None:
            lichtools.take_server(doc, keep)

        folder = os.path.dirname(manifest)
        # with --replace, lich-plugin's folder is set aside before this is written
        edits = [files.write_owned(manifest, self._marker(claim), lambda raw: _our_marker(raw) or self.replacing,
                                   prune_dirs=[folder]) if lich
                 else files.remove_owned(manifest, _our_marker, prune_dirs=[folder])]
        if claim:
            edits.append(files.Edit(path, harness.json_edit(path, add)))
        elif owned_before:
            edits.append(files.Edit(path, harness.removal(path, take)))
        return edits

    def checks(self, target: Target) -> List[tuple]:
        if files.read(self.hooks_path()) is None:
            return []  # lichhook is not installed here
        raw = files.read(self.marker_manifest())
        registered = lichtools.registered(self.mcp_path()) if raw is not None and _our_marker(raw) else None
        return [lichtools.check(self.name, harness_claim(self), registered, self.env.environ, self.env.windows),
                skills.check(self.plugin_dir(), skills.command(target), f"run install {self.name} again")]

    def notes(self, target: Target) -> List[str]:
        notes = ["Antigravity: run 'agy plugin list' (or /hooks in agy) to see the lichhook plugin loaded."]
        notes += lichtools.notes(self.title, harness_claim(self), *lichtools.find_lich(self.env.environ, self.env.windows))
        quoted = target.sh_quoted() if target.windows else []
        if quoted:
            notes.insert(0, (
                f"Antigravity on Windows: the hook command puts {' and '.join(quoted)} in quotes (a space "
                "or a quote in it, and no short 8.3 name to spare them), and quoted paths are reported "
                "to break there, so the hook may not run. To avoid the quotes, register a Python from a "
                "folder without spaces or quotes (install with it), or give each such folder a short "
                "name (as administrator: fsutil file setshortname), then run install again."))
        return notes


def _our_manifest(raw: bytes) -> bool:
    """Whether ``raw`` is a manifest lichhook wrote: its two keys, its name, its signature."""
    data = json_or_none(raw)
    return (isinstance(data, dict) and set(data) == {"name", "description"} and data["name"] == "lichhook"
            and isinstance(data["description"], str) and data["description"].endswith(SIGNATURE))


def _our_marker(raw: bytes) -> bool:
    """Whether ``raw`` is the lich marker manifest lichhook wrote."""
    data = json_or_none(raw)
    return (isinstance(data, dict) and set(data) == {"name", "version", "description"}
            and isinstance(data["description"], str) and data["description"].endswith(SIGNATURE))


def _only_ours(raw: bytes, target: Target) -> bool:
    """Whether ``raw`` is a ``hooks.json`` holding lichhook's table alone, every handler in
    it one of lichhook's (a timeout the user changed still counts)."""
    data = json_or_none(raw)
    if not (isinstance(data, dict) and set(data) == set(TABLE) and isinstance(data[TABLE[0]], dict)):
        return False
    commands = []
    for event, items in data[TABLE[0]].items():
        if not isinstance(items, list):
            return False
        for item in items:
            handlers = item.get("hooks") if isinstance(item, dict) and event not in FLAT_EVENTS else [item]
            if not isinstance(handlers, list):
                return False
            for handler in handlers:
                command = handler.get("command") if isinstance(handler, dict) else None
                if not isinstance(command, str):
                    return False
                commands.append(command)
    return bool(commands) and all(target.owns(c) for c in commands)
