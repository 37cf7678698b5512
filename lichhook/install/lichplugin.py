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

import json
import os
from typing import Callable, Dict, List, Optional

from lichhook.install import files, harnesscli
from lichhook.install.harness import Harness
from lichhook.install.jsonmerge import ConfigError
from lichhook.install.quoting import sh_quote

MARKETPLACE = "lich-plugin"
PLUGIN = "lich"
KEY = f"{PLUGIN}@{MARKETPLACE}"
UPSTREAM = "omartelo/lich-plugin"
OURS_FILE = "lichhook-plugin.txt"
JS_MARKER = "// lich-plugin v"
JS_FILE = "lich.js"
CRUSH_OPEN = "# >>> lich-plugin v"
CRUSH_CLOSE = "# <<< lich-plugin <<<"
# What lichhook writes in the places lich reads its plugin from (``lichtools``), telling its
# own marker from lich-plugin's (a module holding "lichhook" is lichhook's).
LICHHOOK_CRUSH_NOTE = "# lichhook's: lich's MCP server for Crush ('lichhook uninstall crush' removes this block)"
LICHHOOK_SIGNATURE = "(added by 'lichhook install antigravity')."


class Sighting:
    """lich-plugin (or lichhook in its layout, ``ours``) installed in one harness.
    ``where``: the file or command it was read from; ``remove``: the command that takes
    it out; ``restore``: the command that puts lich-plugin back; ``path``: the file or
    folder that is the install (the harnesses without a plugin CLI)."""

    def __init__(self, harness: str, where: str, version: str, ours: bool, remove: str, restore: str,
                 path: Optional[str] = None) -> None:
        self.harness = harness
        self.where = where
        self.version = version
        self.ours = ours
        self.remove = remove
        self.restore = restore
        self.path = path

    def describe(self) -> str:
        who = "lichhook, where lich reads lich-plugin" if self.ours else "lich-plugin"
        return f"{who} {self.version} ({self.where})"


def is_ours(folder: Optional[str]) -> bool:
    return bool(folder) and os.path.isfile(os.path.join(folder, OURS_FILE))  # type: ignore[arg-type]


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
    return os.path.join(h.config_dir(), "plugins", "installed_plugins.json")  # type: ignore[attr-defined]


def claude_entry(h: Harness) -> Optional[dict]:
    """The ``lich@lich-plugin`` record lich reads (scope ``user`` first), or None."""
    path = claude_records(h)
    data = _read_json(path, "Claude Code's record of installed plugins")
    if data is None:
        return None
    plugins = data.get("plugins") if isinstance(data, dict) else None
    rows = plugins.get(KEY) if isinstance(plugins, dict) else None
    if not isinstance(rows, list):
        return None
    rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("version"), str) and r["version"]]
    user = [r for r in rows if r.get("scope") == "user"]
    return (user or rows or [None])[0]


def claude_marketplace_source(h: Harness) -> Optional[str]:
    """Where Claude Code's ``lich-plugin`` marketplace comes from (a folder or a
    repository), or None when none is known."""
    path = os.path.join(h.config_dir(), "plugins", "known_marketplaces.json")  # type: ignore[attr-defined]
    data = _read_json(path, "Claude Code's record of marketplaces")
    entry = data.get(MARKETPLACE) if isinstance(data, dict) else None
    source = entry.get("source") if isinstance(entry, dict) else None
    if not isinstance(source, dict):
        return None
    for key in ("path", "repo", "url"):
        if isinstance(source.get(key), str):
            return source[key]
    return None


def _claude(h: Harness) -> List[Sighting]:
    entry = claude_entry(h)
    if entry is None:
        return []
    source = claude_marketplace_source(h) or UPSTREAM
    return [Sighting(
        h.name, f"{claude_records(h)}: {KEY}", entry["version"], is_ours(entry.get("installPath")),
        remove=f"claude plugin uninstall {KEY} && claude plugin marketplace remove {MARKETPLACE}",
        restore=f"claude plugin marketplace add {source} && claude plugin install {KEY}")]


# -- Codex ------------------------------------------------------------------------------


def codex_listing(h: Harness) -> Optional[dict]:
    """lich-plugin's entry in ``codex plugin list --json`` as lich reads it, or None
    (no codex on PATH, or not installed). Raises ConfigError when codex hangs."""
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
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    for row in doc.get("installed") or [] if isinstance(doc, dict) else []:
        if (isinstance(row, dict) and row.get("pluginId") == KEY and row.get("installed") is True
                and isinstance(row.get("version"), str) and row["version"]):
            return row
    return None


def codex_plugin_root(h: Harness, version: str) -> str:
    return os.path.join(h.home_dir(), "plugins", "cache", MARKETPLACE, PLUGIN, version)  # type: ignore[attr-defined]


def _codex(h: Harness) -> List[Sighting]:
    row = codex_listing(h)
    if row is None:
        return []
    market = row.get("marketplaceSource")
    source = market.get("source") if isinstance(market, dict) and isinstance(market.get("source"), str) else UPSTREAM
    ours = is_ours(codex_plugin_root(h, row["version"]))
    return [Sighting(
        h.name, f"codex plugin list --json: {KEY}", row["version"], ours,
        remove=f"codex plugin remove {KEY} && codex plugin marketplace remove {MARKETPLACE}",
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


def js_module(h: Harness) -> str:
    if h.name == "opencode":
        return os.path.join(h.config_dir(), "plugin", JS_FILE)  # type: ignore[attr-defined]
    return os.path.join(h.agent_dir(), "extensions", JS_FILE)  # type: ignore[attr-defined]


def _module(h: Harness) -> List[Sighting]:
    path = js_module(h)
    raw = _read(path)
    version = marker_version(raw, JS_MARKER) if raw is not None else None
    if version is None:
        return []
    ours = b"lichhook" in raw  # type: ignore[operator]
    return [Sighting(h.name, path, version, ours, remove=f"rm {_q(path)}", restore="", path=path)]


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
    raw = _read(path)
    found = crush_block(raw.decode("utf-8", "replace")) if raw is not None else None
    if found is None or not found[2]:
        return []
    ours = LICHHOOK_CRUSH_NOTE in raw.decode("utf-8", "replace")[found[0]:found[1]]  # type: ignore[union-attr]
    return [Sighting(h.name, path, found[2], ours,
                     remove=f"delete the lines from '{CRUSH_OPEN}{found[2]} >>>' to '{CRUSH_CLOSE}' in {path}",
                     restore="", path=path)]


def antigravity_folder(h: Harness) -> str:
    return os.path.join(h.gemini_dir(), "config", "plugins", PLUGIN)  # type: ignore[attr-defined]


def _antigravity(h: Harness) -> List[Sighting]:
    folder = antigravity_folder(h)
    manifest = os.path.join(folder, "plugin.json")
    data = _read_json(manifest, "Antigravity's plugin manifest")
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or not version:
        return []
    description = data.get("description") if isinstance(data, dict) else None
    ours = is_ours(folder) or (isinstance(description, str) and description.endswith(LICHHOOK_SIGNATURE))
    return [Sighting(h.name, manifest, version, ours, remove=f"rm -r {_q(folder)}", restore="",
                     path=folder)]


_FINDERS: Dict[str, Callable[[Harness], List[Sighting]]] = {
    "claude": _claude, "codex": _codex, "opencode": _module, "omp": _module,
    "crush": _crush, "antigravity": _antigravity,
}


# -- reading ----------------------------------------------------------------------------


def _read(path: str) -> Optional[bytes]:
    return files.read(path)


def _read_json(path: str, what: str) -> object:
    """The parsed file, or None when absent. A file that is there but is not JSON is a
    ConfigError naming it: nobody can then say whether lich-plugin is installed."""
    raw = _read(path)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except ValueError as exc:
        raise ConfigError(f"{path} ({what}) is not valid JSON ({exc}), so lichhook cannot tell whether "
                          f"lich-plugin is installed; the harness rewrites it: fix or move it, then run again") from None


def _q(path: str) -> str:
    return sh_quote(path)
