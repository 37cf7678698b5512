"""lich's own tools in the harnesses lich cannot hand its MCP server at spawn, and the
marker by which lich reads its companion plugin installed there.

lich (``internal/agentplugin``) offers its tools to a session (its relayed messages name
``reply_to_session``, ``wait_for_answer``, ... instead of its command line) when
``HasTools(provider)``: for opencode, omp, Crush and Antigravity, its plugin installed at
0.9.0 or later, read off a marker; for omp, Crush and Antigravity lich's installer also
registers lich's MCP server, ``<lich> mcp``, by absolute path. lichhook does the same:

- the marker says the release lichhook claims for the lich of this machine
  (``lichhook.install.plugin.claim``; lich's ``toolsMinVersion`` is 0.9.0, below every claim);
- the server: ``{"command": <lich>, "args": ["mcp"]}`` as ``mcpServers.lich`` in omp's
  ``mcp.json`` and Antigravity's ``~/.gemini/config/mcp_config.json`` (what ``agy mcp add
  lich <lich> mcp`` keeps), and ``mcp add lich --type stdio --command '<lich>' --args mcp
  --timeout 10`` in a crushrc block opened by lich's own marker;
- the binary: ``$LICH_BIN`` (lich sets it in every session), else ``lich`` on PATH, else
  where lich's packages put it (``LOCATIONS``). None found: no server and no marker, so lich
  goes on reading the plugin as not installed and names its command line, which works.

An entry named ``lich`` that was there before is lich's own: lichhook neither changes nor
removes it. lich's ``RepairRegistrations`` points a ``lich`` entry naming another binary at
the running lich, at every start; it reads the ``command`` of ``mcpServers.lich`` and the
``--command`` of the ``mcp add lich`` line in lich's crushrc block, both as written here.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Callable, List, Optional, Tuple

from lichhook.install.config import entries
from lichhook.install.disk import files
from lichhook.install.config.jsonedit import Doc
from lichhook.install.errors import ConfigError
from lichhook.install.plugin.lichplugin import CRUSH_CLOSE, CRUSH_OPEN, JS_MARKER, LICHHOOK_CRUSH_NOTE
from lichhook.install.quoting import sh_quote

NAME = "lich"  # lich's relay.MCPServerName


def js_marker(version: str) -> str:
    return (f"{JS_MARKER}{version} — lichhook's module: lich reads this line as its plugin installed, "
            "with lich's tools; `lichhook uninstall` removes the file")


def crush_open(version: str) -> str:
    return f"{CRUSH_OPEN}{version} >>>"


# Where lich's own packages install it (omartelo/lich build/: nfpm.yaml, darwin/bundle.sh, windows/lich.iss).
LOCATIONS = {"linux": "/usr/local/bin/lich", "darwin": "/Applications/lich.app/Contents/MacOS/lich"}


def find_lich(environ: dict, windows: bool) -> Tuple[Optional[str], str]:
    """(lich's binary, how it was found), or (None, where it was looked for)."""
    given = environ.get("LICH_BIN", "").strip()
    if given and os.path.isabs(given) and os.path.isfile(given):
        return given, "from LICH_BIN"
    on_path = shutil.which("lich", path=environ.get("PATH", os.defpath))
    if on_path:
        return os.path.abspath(on_path), "on PATH"
    if windows:
        folder = environ.get("ProgramFiles") or environ.get("PROGRAMFILES") or r"C:\Program Files"
        where = folder.rstrip("\\") + r"\lich\lich.exe"
    else:
        where = LOCATIONS["darwin" if sys.platform == "darwin" else "linux"]
    if os.path.isfile(where):
        return where, "at lich's install location"
    return None, f"not in LICH_BIN, not on PATH, not at {where}"


def server(lich: str) -> dict:
    return {"command": lich, "args": ["mcp"]}


WHERE = ("mcpServers", NAME)


def _servers(path: str) -> dict:
    """The ``mcpServers`` of the JSON document at ``path``: {} when it has none or is not
    JSON (the edit itself refuses such a file, naming it). Raises ConfigError when unreadable."""
    raw = files.read(path)
    try:
        doc = json.loads(raw.decode("utf-8-sig")) if raw else {}
    except (ValueError, RecursionError):
        return {}
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    return servers if isinstance(servers, dict) else {}


def has_server(path: str) -> bool:
    """Whether the JSON document at ``path`` has a ``mcpServers.lich`` entry."""
    return NAME in _servers(path)


def registered(path: str) -> Optional[str]:
    """The ``command`` of ``mcpServers.lich`` in the JSON document at ``path``, or None
    (no such entry, no command lich's repair could run, or a file that cannot be read)."""
    try:
        entry = _servers(path).get(NAME)
    except ConfigError:
        return None
    command = entry.get("command") if isinstance(entry, dict) else None
    return command if isinstance(command, str) and command else None


def put_server(doc: Doc, path: str, lich: str) -> None:
    if doc.at(WHERE) is None:
        entries.add_at(doc, WHERE[:1], NAME, server(lich), path)
    else:
        doc.replace(WHERE, server(lich))


def take_server(doc: Doc, keep: Callable[[tuple], Optional[str]]) -> None:
    if doc.at(WHERE) is not None:
        entries.remove_pruning(doc, WHERE, keep)


def crush_block(lich: str, version: str, newline: str = "\n") -> str:
    line = f"mcp add {NAME} --type stdio --command {sh_quote(lich)} --args mcp --timeout 10"
    return newline.join([crush_open(version), LICHHOOK_CRUSH_NOTE, line, CRUSH_CLOSE]) + newline


def crush_command(block: str) -> Optional[str]:
    """The ``--command`` of the ``mcp add lich`` line, read as lich's repair reads it."""
    for line in block.splitlines():
        if line.startswith(f"mcp add {NAME} ") and " --command " in line:
            quoted = line.split(" --command ", 1)[1].split(" --args ", 1)[0]
            return quoted[1:-1].replace("'\\''", "'") if len(quoted) >= 2 else None
    return None


def update_note(whole: bool) -> str:
    """What lich's own install or update of its plugin does to what lichhook wrote here:
    rewrites the file whole (opencode's, omp's ``lich.js``), or only the marked part."""
    if whole:
        return ("lich's own install or update of its plugin rewrites this lich.js whole with lich-plugin's: "
                "lich-plugin then reports here, lichhook no longer does")
    return ("lich's own install or update of its plugin replaces lichhook's marked part with lich-plugin's, "
            "beside lichhook's own hooks: every report twice until install --replace")


def notes(harness: str, version: str, lich: Optional[str], how: str, whole: bool = False) -> List[str]:
    if lich is None:
        return [f"{harness}: lich's tools not registered: lich's binary is {how}. Set LICH_BIN to it (or put it on "
                "PATH) and run install again; until then lich names its command line in this harness, which works."]
    return [f"{harness}: lich's tools registered: `{lich} mcp` ({how}); lich reads its plugin installed, "
            f"at {version}. {update_note(whole).capitalize()}."]


def check(harness: str, version: str, registered: Optional[str], environ: dict, windows: bool,
          whole: bool = False) -> tuple:
    """doctor's (line, problem, fix) about lich's tools in ``harness``: the server
    lichhook registered (``registered``, lich's binary it names), or why there is none."""
    if registered is None:
        lich, how = find_lich(environ, windows)
        why = f"lich's binary is {how}" if lich is None else f"lich found {how} ({lich}); install again to register it"
        return f"lich's tools: none registered by lichhook ({why}); lich names its command line here", None, None
    line = f"lich's tools: `{registered} mcp`, lich's marker at {version} ({update_note(whole)})"
    if not os.path.isfile(registered):
        return (line, f"it names {registered}, which is not there",
                f"start lich (it repoints the entry at itself) or run: lichhook install {harness}")
    return line, None, None
