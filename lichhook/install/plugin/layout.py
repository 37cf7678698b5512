"""lichhook in lich-plugin's layout: the files a harness's plugin manager (and lich's own
installer) take as lich-plugin.

Two uses, one set of shapes:

- ``marketplace(harness, target)``: the local marketplace ``install`` writes in lichhook's
  data folder for Claude Code or Codex, whose hooks are exactly the entries ``install``
  would write in the harness's config (the absolute Python, the per-Python copy).
- the release folder the build writes beside the archive (``dist/lich-plugin/``,
  ``lichhook.install.harnesses.release``), made of these shapes and every harness's part.

Every folder holds ``lichplugin.OURS_FILE``, so lichhook (and ``doctor``) can tell its
own plugin from lich-plugin wherever a harness copies it.

Versions. lich reads the ``version`` of the installed plugin, checks it against the
range it accepts and keys more on it (``internal/agentplugin``), so each manifest says
the release lichhook claims for that harness (``lichhook.install.plugin.claim``: for the lich of
this machine at install, for an unknown lich in the release folder). Each carries ``+lichhook.<hash of the plugin's files>`` as build metadata, which lich's
version reading drops and the harnesses keep: a changed plugin is a new version to
them, so ``plugin update`` / ``plugin add`` take it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable, Dict, List

from lichhook.descriptor import Registration
from lichhook.install.plugin import claudemods, lichplugin, skills
from lichhook.install.harness import descriptor_rows
from lichhook.install.copies.target import Target

DESCRIPTION = "lichhook: tells lich what coding agents do (in lich-plugin's layout)"
OWNER = {"name": "lichhook"}
ARCHIVE = "lichhook.pyz"
CLAUDE_HOOKS = "hooks/hooks.json"
CODEX_HOOKS = "hooks/codex-hooks.json"
CLAUDE_MCP = ".mcp.json"
CODEX_MCP = ".codex-mcp.json"
ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"


def json_bytes(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=True) + "\n").encode("utf-8")


def hooks_file(name: str, handler: Callable[[Registration], dict]) -> dict:
    """``{"hooks": {event: [{matcher?, hooks: [...]}]}}`` for harness ``name``: one group per
    event (with the descriptor's matcher), one handler per registration, in its order."""
    events: Dict[str, List[dict]] = {}
    for r in descriptor_rows(name):
        groups = events.setdefault(r.event, [])
        if not groups:
            groups.append({"matcher": r.matcher, "hooks": []} if r.matcher is not None else {"hooks": []})
        groups[0]["hooks"].append(handler(r))
    return {"hooks": events}


def timeout_of(r: Registration) -> dict:
    return {} if r.timeout is None else {"timeout": r.timeout}


def with_hash(version: str, files: Dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8") + b"\0" + files[path] + b"\0")
    return f"{version}+lichhook.{digest.hexdigest()[:12]}"


def claude_files(hooks: dict, mcp: dict, claim: str, run: str) -> Dict[str, bytes]:
    # Claude Code loads the mods the hooks file names (claudemods); its hooks run as before.
    # The skills, which run lichhook as `run`, are found under skills/ (plugin "lich": /lich:theme).
    return {CLAUDE_HOOKS: json_bytes({"modules": [claudemods.ENTRY], **hooks}),
            CLAUDE_MCP: json_bytes({"mcpServers": {"lichhook": mcp}}), **claudemods.files(claim), **skills.files(run)}


def codex_files(hooks: dict, mcp: dict, run: str) -> Dict[str, bytes]:
    return {CODEX_HOOKS: json_bytes(hooks), CODEX_MCP: json_bytes({"mcpServers": {"lichhook": mcp}}), **skills.files(run)}


def claude_manifests(body: Dict[str, bytes], claim: str) -> Dict[str, bytes]:
    version = with_hash(claim, body)
    return {
        ".claude-plugin/marketplace.json": json_bytes({"name": lichplugin.MARKETPLACE, "owner": OWNER, "plugins": [
            {"name": lichplugin.PLUGIN, "source": "./", "description": DESCRIPTION}]}),
        ".claude-plugin/plugin.json": json_bytes({"name": lichplugin.PLUGIN, "version": version,
                                             "description": DESCRIPTION, "author": OWNER}),
    }


def codex_manifests(body: Dict[str, bytes], claim: str) -> Dict[str, bytes]:
    version = with_hash(claim, body)
    return {
        ".agents/plugins/marketplace.json": json_bytes({"name": lichplugin.MARKETPLACE, "plugins": [
            {"name": lichplugin.PLUGIN, "source": {"source": "local", "path": "./"},
             "policy": {"installation": "AVAILABLE"}}]}),
        ".codex-plugin/plugin.json": json_bytes({"name": lichplugin.PLUGIN, "version": version,
                                            "description": DESCRIPTION, "hooks": f"./{CODEX_HOOKS}",
                                            "mcpServers": f"./{CODEX_MCP}", "skills": f"./{skills.FOLDER}/"}),
    }


def ours(kind: str) -> Dict[str, bytes]:
    return {lichplugin.OURS_FILE: f"lichhook {kind}: this folder is lichhook in lich-plugin's layout.\n".encode()}


# -- the local marketplace install registers ---------------------------------------------


def marketplace(name: str, target: Target, handler: Callable[[Registration], dict], server: dict,
                claim: str) -> Dict[str, bytes]:
    """The files of lichhook's local marketplace for ``name`` ("claude" or "codex"): its
    hooks are ``handler(registration)``, its MCP server ``server``, as install writes
    them into the harness's config; its version ``claim``."""
    hooks, run = hooks_file(name, handler), skills.command(target)
    if name == "claude":
        body = claude_files(hooks, server, claim, run)
        return {**body, **claude_manifests(body, claim), **ours("install")}
    body = codex_files(hooks, server, run)
    return {**body, **codex_manifests(body, claim), **ours("install")}


def version_of(files: Dict[str, bytes], name: str) -> str:
    manifest = ".claude-plugin/plugin.json" if name == "claude" else ".codex-plugin/plugin.json"
    value: str = json.loads(files[manifest])["version"]
    return value
