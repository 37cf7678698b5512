"""lich's reading of its companion plugin and of its own MCP registrations, done as lich's
Go code does it, for tests to judge what lichhook writes by.

From omartelo/lich ``internal/agentplugin``: ``versionOf`` (fetch.go @1f421ec: any line,
trimmed, starting ``<comment> lich-plugin v``; the version runs to the first space),
``opencodeInstalledVersion`` / ``ompInstalledVersion`` (opencode.go, omp.go @1f421ec),
``crushInstalledVersion`` (crush.go @1f421ec: ``versionOf(data, "# >>>")``), Antigravity's
``plugin.json`` ``version`` (antigravity.go @db3a715b), ``HasTools`` (agentplugin.go
@1f421ec: ``toolsMinVersion`` 0.9.0; omp, Crush and Antigravity also need lich's own
binary), and ``RepairRegistrations`` (repair.go @50b30e65: ``documentCommand`` and the
``mcp add lich`` line inside lich's crushrc block).

And lich's reading of Claude Code's and Codex's plugin: ``parseInstalledVersion``
(claude.go @54883649, TestParseInstalledVersion @845e5f89: ``plugins["lich@lich-plugin"]``,
the ``user`` scope's non-empty ``version`` first, else any non-empty one),
``parseCodexPluginList`` (TestParseCodexPluginList @845e5f89: the JSON after any banner,
``installed[]`` with that ``pluginId`` and ``installed: true``), the status row
(``Compatible``, ``newestCompatible`` over the published tags, ``UpdateAvailable``:
TestComputeStatus) and the Claude Code gates (``ClaudeRunsSubagentCards``,
``ClaudeNestsSubagentCards``, ``ModAnswers``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple, Optional, Tuple

from lichhook.contracts import release

TOOLS_MIN_VERSION = "0.9.0"
REGISTERS_SERVER = ("omp", "crush", "antigravity")


def version_of(data: bytes, prefix: str) -> Optional[str]:
    marker = prefix + " lich-plugin v"
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith(marker):
            version = line[len(marker):].split(" ", 1)[0]
            if version:
                return version
    return None


def plugin_file(provider: str, home: Path, config_home: Path, agent_dir: Path, crush_dir: Path) -> Path:
    return {"opencode": config_home / "opencode" / "plugin" / "lich.js",
            "omp": agent_dir / "extensions" / "lich.js",
            "crush": crush_dir / "crushrc",
            "antigravity": home / ".gemini" / "config" / "plugins" / "lich" / "plugin.json"}[provider]


def installed_version(provider: str, path: Path) -> Optional[str]:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if provider == "antigravity":
        try:
            version = json.loads(data).get("version")
        except (ValueError, AttributeError):
            return None
        return version if isinstance(version, str) and version else None
    return version_of(data, "# >>>" if provider == "crush" else "//")


def has_tools(provider: str, path: Path, lich_bin: str) -> bool:
    """HasTools for a harness whose CLI lich finds on PATH (``available``)."""
    if provider in REGISTERS_SERVER and not lich_bin:
        return False
    version = installed_version(provider, path)
    return version is not None and not release.less(version, TOOLS_MIN_VERSION)


def document_command(path: Path) -> Optional[str]:
    """``documentCommand``: the command of a live ``mcpServers.lich``, or None."""
    try:
        servers = json.loads(path.read_bytes()).get("mcpServers") or {}
    except (OSError, ValueError, AttributeError):
        return None
    entry = servers.get("lich") if isinstance(servers, dict) else None
    if not isinstance(entry, dict) or entry.get("disabled") or not entry.get("command"):
        return None
    return entry["command"]


def repair_document(path: Path, lich_bin: str) -> bool:
    """``RepairRegistrations`` on an ``mcpServers`` document: a live lich entry naming
    another binary is rewritten as ``writeMCPDocument`` does (the document re-encoded,
    every other key kept). Whether it rewrote."""
    command = document_command(path)
    if command is None or command == lich_bin:
        return False
    doc = json.loads(path.read_bytes())
    doc["mcpServers"]["lich"] = {"command": lich_bin, "args": ["mcp"]}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return True


def crush_command(crushrc: Path) -> Tuple[Optional[str], str]:
    """``crushRegisteredCommand``: (the ``--command`` of ``mcp add lich`` in lich's block,
    the block's text)."""
    try:
        text = crushrc.read_text("utf-8")
    except OSError:
        return None, ""
    start = text.find("# >>> lich-plugin v")
    if start < 0:
        return None, ""
    block = text[start:]
    end = block.find("# <<< lich-plugin <<<")
    block = block[:end] if end >= 0 else block
    for line in block.splitlines(keepends=True):
        if not line.startswith("mcp add lich "):
            continue
        if " --command " not in line:
            return None, block
        quoted = line.split(" --command ", 1)[1].split(" --args ", 1)[0]
        if len(quoted) < 2:
            return None, block
        return quoted[1:-1].replace("'\\''", "'"), block
    return None, block


KEY = "lich@lich-plugin"


def parse_installed_version(data: bytes) -> Optional[str]:
    """``parseInstalledVersion`` of Claude Code's installed_plugins.json."""
    try:
        rows = json.loads(data).get("plugins", {}).get(KEY)
    except (ValueError, AttributeError):
        return None
    rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("version"), str) and r["version"]] \
        if isinstance(rows, list) else []
    user = [r for r in rows if r.get("scope") == "user"]
    return (user or rows)[0]["version"] if rows else None


def parse_codex_plugin_list(output: str) -> Optional[str]:
    """``parseCodexPluginList`` of ``codex plugin list --json`` (a banner before it tolerated)."""
    start = output.find("{")
    if start < 0:
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(output[start:])
    except ValueError:
        return None
    for row in doc.get("installed") or [] if isinstance(doc, dict) else []:
        if isinstance(row, dict) and row.get("pluginId") == KEY and row.get("installed") is True \
                and isinstance(row.get("version"), str) and row["version"]:
            return row["version"]
    return None


class Status(NamedTuple):
    """lich's plugin status row, and what its Claude Code gates say of the version."""

    installed: str
    latest: str
    update_available: bool
    compatible: bool
    subagent_cards: bool
    nested_cards: bool


def status(installed: str, lich: str, tags: Tuple[str, ...] = tuple(release.RELEASES)) -> Status:
    """The row lich ``lich`` (a release in ``release.RANGES``) shows for ``installed``, fed
    the published ``tags`` as lich's releases URL lists them."""
    bounds = release.range_of(lich)
    assert bounds is not None, f"no range measured for lich {lich}"
    latest = release.newest_within(tags, bounds)
    return Status(installed, latest, release.update_offered(installed, latest, bounds),
                  release.within(installed, bounds), not release.less(installed, release.SUBAGENT_CARDS),
                  not release.less(installed, release.NESTED_CARDS))


def mod_answers(header: Optional[str], attached: bool) -> bool:
    """``ModAnswers``: the mod polled lately and the session's header is 0.17.0 or later."""
    return attached and not release.less(header, release.MOD_ANSWERS)
