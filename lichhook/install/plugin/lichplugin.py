"""lich's companion plugin, lich-plugin: where lich puts it, how lich reads it, and whose it is.

lichhook sends the same reports as lich-plugin, so the two installed in one harness send
every report twice. lich (``internal/agentplugin``) records lich-plugin in each harness's
own state, and this module reads the same places the same way:

- Claude Code: ``<config dir>/plugins/installed_plugins.json``, key ``lich@lich-plugin``
  (the ``user`` scope first), its ``version`` and ``installPath``;
- Codex: ``codex plugin list --json``, the ``installed[]`` entry with that ``pluginId``
  and ``installed: true``;
- opencode: ``<config home>/opencode/plugin/lich.js``, and omp: ``<agent
  dir>/extensions/lich.js``, whose first line starts ``// lich-plugin v<version>``;
- Crush: the block between ``# >>> lich-plugin v<version> >>>`` and ``# <<< lich-plugin
  <<<`` in ``crushrc``;
- Antigravity: ``~/.gemini/config/plugins/lich/plugin.json`` with a ``version``.

A folder lichhook writes in lich-plugin's layout (the release the build writes, the
marketplace ``install`` registers) carries ``OURS_FILE`` at its root; the harnesses copy
it with the plugin, so an install found here is lichhook's own when its folder holds it.
"""

from __future__ import annotations

import os
from typing import Callable, Dict, List, NamedTuple, Optional

from lichhook.install.plugin import harnesscli
from lichhook.install.config import jsontext
from lichhook.install.disk import files
from lichhook.install.harness import Harness
from lichhook.install.errors import ConfigError
from lichhook.install.quoting import sh_quote

MARKETPLACE = "lich-plugin"
PLUGIN = "lich"
KEY = f"{PLUGIN}@{MARKETPLACE}"
UPSTREAM = "omartelo/lich-plugin"
OURS_FILE = "lichhook-plugin.txt"
JS_MARKER = "// lich-plugin v"
CRUSH_OPEN = "# >>> lich-plugin v"
CRUSH_CLOSE = "# <<< lich-plugin <<<"
# What lichhook writes in the places lich reads its plugin from (``lichtools``), telling its
# own marker from lich-plugin's (a module holding "lichhook" is lichhook's).
LICHHOOK_CRUSH_NOTE = "# lichhook's: lich's MCP server for Crush ('lichhook uninstall crush' removes this block)"
LICHHOOK_SIGNATURE = "(added by 'lichhook install antigravity')."


class Sighting(NamedTuple):
    """lich-plugin (or lichhook in its layout, ``ours``) installed in one harness.
    ``where``: the file or command it was read from; ``remove``: the command that takes
    it out; ``restore``: the command that puts lich-plugin back; ``path``: the file or
    folder that is the install (the harnesses without a plugin CLI)."""

    harness: str
    where: str
    version: str
    ours: bool
    remove: str
    restore: str
    path: Optional[str] = None

    def describe(self) -> str:
        who = "lichhook, where lich reads lich-plugin" if self.ours else "lich-plugin"
        return f"{who} {self.version} ({self.where})"


def is_ours(folder: Optional[str]) -> bool:
    return bool(folder) and os.path.isfile(os.path.join(folder, OURS_FILE))  # type: ignore[arg-type]


def ours_version(version: str) -> bool:
    """Whether a recorded version is one lichhook's manifests carry (``0.14.0+lichhook.<hash>``;
    Claude Code names its folder ``0.14.0-lichhook.<hash>``): a record that stays lichhook's
    when the folder that held ``OURS_FILE`` is gone."""
    return "+lichhook." in version or "-lichhook." in version


# The commands that take lich@lich-plugin and its marketplace out of a harness.
REMOVE = {
    "claude": f"claude plugin uninstall {KEY} && claude plugin marketplace remove {MARKETPLACE}",
    "codex": f"codex plugin remove {KEY} && codex plugin marketplace remove {MARKETPLACE}",
}


def find(h: Harness) -> List[Sighting]:
    """Every install of lich-plugin (or of lichhook in its layout) lich would read in
    harness ``h``. Raises ConfigError when a record that could hold one cannot be read."""
    finder = _FINDERS.get(h.name)
    return finder(h) if finder else []


def foreign(h: Harness) -> List[Sighting]:
    """The installs of lich-plugin itself (not lichhook's) in ``h``."""
    return [s for s in find(h) if not s.ours]


# -- Claude Code ------------------------------------------------------------------------


def claude_records(h: Harness) -> str:
    return os.path.join(h.config_dir(), "plugins", "installed_plugins.json")


def claude_entry(h: Harness) -> Optional[dict]:
    """The ``lich@lich-plugin`` record lich reads (scope ``user`` first), or None: a dict
    of its ``scope``, ``version`` (never empty) and ``installPath`` (None unless a string)."""
    rows = _at(_read_json(claude_records(h), "Claude Code's record of installed plugins"), "plugins", KEY)
    found = [{"scope": _text(row, "scope"), "version": _text(row, "version"), "installPath": _text(row, "installPath")}
             for row in (rows.items() if rows else [])]
    found = [r for r in found if r["version"]]
    user = [r for r in found if r["scope"] == "user"]
    return (user or found)[0] if found else None


def claude_marketplace_source(h: Harness) -> Optional[str]:
    """Where Claude Code's ``lich-plugin`` marketplace comes from (a folder or a
    repository), or None when none is known."""
    path = os.path.join(h.config_dir(), "plugins", "known_marketplaces.json")
    source = _at(_read_json(path, "Claude Code's record of marketplaces"), MARKETPLACE, "source")
    for key in ("path", "repo", "url"):
        if _text(source, key) is not None:
            return _text(source, key)
    return None


def _claude(h: Harness) -> List[Sighting]:
    entry = claude_entry(h)
    if entry is None:
        return []
    source = claude_marketplace_source(h) or UPSTREAM
    return [Sighting(
        h.name, f"{claude_records(h)}: {KEY}", entry["version"],
        is_ours(entry.get("installPath")) or ours_version(entry["version"]), remove=REMOVE["claude"],
        restore=f"claude plugin marketplace add {source} && claude plugin install {KEY}")]


# -- Codex ------------------------------------------------------------------------------


def codex_listing(h: Harness) -> Optional[dict]:
    """lich-plugin's entry in ``codex plugin list --json`` as lich reads it, or None (no
    codex on PATH, or not installed): a dict of its ``version`` and marketplace
    ``source`` (None unless a string). Raises ConfigError when codex hangs, or names a
    version that is not a folder name (lichhook would look in a folder named by it)."""
    program = h.env.which("codex")
    if not program:
        return None
    result = harnesscli.run(program, ["plugin", "list", "--json"], h.env.environ)
    if not result.ok:
        return None
    text = result.output
    start = text.find("{")
    if start < 0:
        return None
    try:
        doc = jsontext.Node(text, start, jsontext.value_end(text, start))
    except jsontext.JsonTextError:
        return None
    rows = doc.get("installed")
    for row in rows.items() if rows else []:
        version, installed = _text(row, "version"), row.get("installed")
        if _text(row, "pluginId") == KEY and installed is not None and installed.raw == "true" and version:
            if version in (".", "..") or any(c in version for c in "/\\\0"):
                raise ConfigError(f"`codex plugin list --json` says {KEY} {version!r} is installed, which is not a "
                                  "version; reinstall it (codex plugin remove, then codex plugin add) and run again")
            return {"version": version, "source": _text(_at(row, "marketplaceSource"), "source")}
    return None


def codex_plugin_root(h: Harness, version: str) -> str:
    return os.path.join(h.config_dir(), "plugins", "cache", MARKETPLACE, PLUGIN, version)


def _codex(h: Harness) -> List[Sighting]:
    row = codex_listing(h)
    if row is None:
        return []
    source = row["source"] or UPSTREAM
    ours = is_ours(codex_plugin_root(h, row["version"])) or ours_version(row["version"])
    return [Sighting(
        h.name, f"codex plugin list --json: {KEY}", row["version"], ours, remove=REMOVE["codex"],
        restore=f"codex plugin marketplace add {source} && codex plugin add {KEY}")]


# -- opencode and omp: a module with lich's marker line ---------------------------------


def marker_version(raw: bytes, prefix: str) -> Optional[str]:
    """The version on lich's marker line (``<prefix><version> ...``), as lich finds it:
    any line that starts with the marker once trimmed."""
    for line in raw.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith(prefix):
            version = line[len(prefix):].split(" ", 1)[0]
            if version:
                return version
    return None


def _module(h: Harness) -> List[Sighting]:
    path = h.module_path()  # type: ignore[attr-defined]
    raw = files.read(path)
    version = marker_version(raw, JS_MARKER) if raw is not None else None
    if version is None:
        return []
    ours = b"lichhook" in raw  # type: ignore[operator]
    return [Sighting(h.name, path, version, ours, remove=f"rm {sh_quote(path)}", restore="", path=path)]


# -- Crush and Antigravity: the files lich's installer writes ---------------------------


def crush_block(text: str) -> Optional[tuple]:
    """(start, end, version) of lich's block in a crushrc, or None."""
    start = text.find(CRUSH_OPEN)
    if start < 0:
        return None
    version = text[start + len(CRUSH_OPEN):].split(" ", 1)[0].split("\n", 1)[0]
    close = text.find(CRUSH_CLOSE, start)
    end = len(text) if close < 0 else close + len(CRUSH_CLOSE)
    if text[end:end + 1] == "\n":
        end += 1
    return start, end, version


def _crush(h: Harness) -> List[Sighting]:
    path = h.rc_path()  # type: ignore[attr-defined]
    raw = files.read(path)
    found = crush_block(raw.decode("utf-8", "replace")) if raw is not None else None
    if found is None or not found[2]:
        return []
    ours = LICHHOOK_CRUSH_NOTE in raw.decode("utf-8", "replace")[found[0]:found[1]]  # type: ignore[union-attr]
    return [Sighting(h.name, path, found[2], ours,
                     remove=f"delete the lines from '{CRUSH_OPEN}{found[2]} >>>' to '{CRUSH_CLOSE}' in {path}",
                     restore="", path=path)]


def _antigravity(h: Harness) -> List[Sighting]:
    manifest = h.marker_manifest()  # type: ignore[attr-defined]
    folder = os.path.dirname(manifest)
    data = _read_json(manifest, "Antigravity's plugin manifest")
    version = _text(data, "version")
    if not version:
        return []
    description = _text(data, "description")
    ours = is_ours(folder) or (description is not None and description.endswith(LICHHOOK_SIGNATURE))
    return [Sighting(h.name, manifest, version, ours, remove=f"rm -r {sh_quote(folder)}", restore="",
                     path=folder)]


_FINDERS: Dict[str, Callable[[Harness], List[Sighting]]] = {
    "claude": _claude, "codex": _codex, "opencode": _module, "omp": _module,
    "crush": _crush, "antigravity": _antigravity,
}


# -- reading ----------------------------------------------------------------------------


def _read_json(path: str, what: str) -> Optional[jsontext.Node]:
    """The JSON value of a harness's record, or None when absent or blank. Read lazily and
    at any depth (a record nested deeper than Python's json recurses is still read), so
    only what lich reads of it is looked at, whatever the rest holds. A record that is not
    JSON is a ConfigError naming it: nobody can then say whether lich-plugin is installed."""
    raw = files.read(path)
    if raw is None:
        return None
    try:
        return jsontext.parse(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, jsontext.JsonTextError) as exc:
        raise ConfigError(f"{path} ({what}) is not valid JSON ({exc}), so lichhook cannot tell whether "
                          f"lich-plugin is installed; the harness rewrites it: fix or move it, then run again") from None


def _at(node: Optional[jsontext.Node], *keys: str) -> Optional[jsontext.Node]:
    """The value at ``keys`` under ``node``; None where any step is missing or not an object."""
    for key in keys:
        node = node.get(key) if node is not None else None
    return node


def _text(node: Optional[jsontext.Node], key: str) -> Optional[str]:
    """The string at ``key`` of ``node``, or None when it is missing or not a string."""
    value = _at(node, key)
    return value.string() if value is not None else None
