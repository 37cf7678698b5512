"""lichhook in lich-plugin's layout: the files a harness's plugin manager (and lich's own
installer) take as lich-plugin.

Two uses, one set of shapes:

- ``release(archive)``: the folder the build writes beside the archive
  (``dist/lich-plugin/``), portable: its command lines name ``python3`` (``py -3`` where
  the harness has a Windows form) and the archive inside the installed plugin.
- ``marketplace(harness, target)``: the local marketplace ``install`` writes in lichhook's
  data folder for Claude Code or Codex, whose hooks are exactly the entries ``install``
  would write in the harness's config (the absolute Python, the per-Python copy).

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
import os
from typing import Callable, Dict, List, Optional

from lichhook.contracts import release as releases
from lichhook.descriptor import Registration
from lichhook.install.plugin import claudemods, lichplugin, skills
from lichhook.install.harnesses.antigravity import FLAT_EVENTS, TABLE
from lichhook.install.harness import descriptor_rows
from lichhook.install.harnesses.modules import module_source
from lichhook.install.quoting import sh_quote
from lichhook.install.copies.target import Target, hook_verdict, launcher

DESCRIPTION = "lichhook: tells lich what coding agents do (in lich-plugin's layout)"
OWNER = {"name": "lichhook"}
ARCHIVE = "lichhook.pyz"
CLAUDE_HOOKS = "hooks/hooks.json"
CODEX_HOOKS = "hooks/codex-hooks.json"
CLAUDE_MCP = ".mcp.json"
CODEX_MCP = ".codex-mcp.json"
ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=True) + "\n").encode("utf-8")


def _rows(name: str) -> List[Registration]:
    return descriptor_rows(name)


def hooks_file(name: str, handler: Callable[[Registration], dict], flat: bool = False) -> dict:
    """``{"hooks": {event: [{matcher?, hooks: [...]}]}}`` for harness ``name``: one group per
    event (with the descriptor's matcher), one handler per registration, in its order."""
    events: Dict[str, List[dict]] = {}
    for r in _rows(name):
        groups = events.setdefault(r.event, [])
        if not groups:
            groups.append({"matcher": r.matcher, "hooks": []} if r.matcher is not None else {"hooks": []})
        groups[0]["hooks"].append(handler(r))
    return {"hooks": events}


def _timeout(r: Registration) -> dict:
    return {} if r.timeout is None else {"timeout": r.timeout}


def _portable_line(words: tuple, windows: bool = False) -> str:
    # through the launcher, as install's entries run (lichhook.install.copies.target): a release
    # whose archive is gone lets its harness through
    code = launcher(hook_verdict(words))
    if windows:
        # The Python launcher: python.org's installer puts `py` on PATH; `python3` there is
        # often the Microsoft Store stub. Works the same under PowerShell and cmd.
        return f'py -3 -I -S -c "{code}" "{ROOT_VAR}\\{ARCHIVE}" ' + " ".join(words)
    return f'python3 -I -S -c {sh_quote(code)} "{ROOT_VAR}/{ARCHIVE}" ' + " ".join(words)


def with_hash(version: str, files: Dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode("utf-8") + b"\0" + files[path] + b"\0")
    return f"{version}+lichhook.{digest.hexdigest()[:12]}"


def _claude_files(hooks: dict, mcp: dict, claim: str, run: str) -> Dict[str, bytes]:
    # Claude Code loads the mods the hooks file names (claudemods); its hooks run as before.
    # The skills, which run lichhook as `run`, are found under skills/ (plugin "lich": /lich:theme).
    return {CLAUDE_HOOKS: _json({"modules": [claudemods.ENTRY], **hooks}),
            CLAUDE_MCP: _json({"mcpServers": {"lichhook": mcp}}), **claudemods.files(claim), **skills.files(run)}


def _codex_files(hooks: dict, mcp: dict, run: str) -> Dict[str, bytes]:
    return {CODEX_HOOKS: _json(hooks), CODEX_MCP: _json({"mcpServers": {"lichhook": mcp}}), **skills.files(run)}


def _claude_manifests(body: Dict[str, bytes], claim: str) -> Dict[str, bytes]:
    version = with_hash(claim, body)
    return {
        ".claude-plugin/marketplace.json": _json({"name": lichplugin.MARKETPLACE, "owner": OWNER, "plugins": [
            {"name": lichplugin.PLUGIN, "source": "./", "description": DESCRIPTION}]}),
        ".claude-plugin/plugin.json": _json({"name": lichplugin.PLUGIN, "version": version,
                                             "description": DESCRIPTION, "author": OWNER}),
    }


def _codex_manifests(body: Dict[str, bytes], claim: str) -> Dict[str, bytes]:
    version = with_hash(claim, body)
    return {
        ".agents/plugins/marketplace.json": _json({"name": lichplugin.MARKETPLACE, "plugins": [
            {"name": lichplugin.PLUGIN, "source": {"source": "local", "path": "./"},
             "policy": {"installation": "AVAILABLE"}}]}),
        ".codex-plugin/plugin.json": _json({"name": lichplugin.PLUGIN, "version": version,
                                            "description": DESCRIPTION, "hooks": f"./{CODEX_HOOKS}",
                                            "mcpServers": f"./{CODEX_MCP}", "skills": f"./{skills.FOLDER}/"}),
    }


def _ours(kind: str) -> Dict[str, bytes]:
    return {lichplugin.OURS_FILE: f"lichhook {kind}: this folder is lichhook in lich-plugin's layout.\n".encode()}


# -- the local marketplace install registers ---------------------------------------------


def marketplace(name: str, target: Target, handler: Callable[[Registration], dict], server: dict,
                claim: str) -> Dict[str, bytes]:
    """The files of lichhook's local marketplace for ``name`` ("claude" or "codex"): its
    hooks are ``handler(registration)``, its MCP server ``server``, as install writes
    them into the harness's config; its version ``claim``."""
    hooks, run = hooks_file(name, handler), skills.command(target)
    if name == "claude":
        body = _claude_files(hooks, server, claim, run)
        return {**body, **_claude_manifests(body, claim), **_ours("install")}
    body = _codex_files(hooks, server, run)
    return {**body, **_codex_manifests(body, claim), **_ours("install")}


def version_of(files: Dict[str, bytes], name: str) -> str:
    manifest = ".claude-plugin/plugin.json" if name == "claude" else ".codex-plugin/plugin.json"
    value: str = json.loads(files[manifest])["version"]
    return value


# -- the release the build writes ----------------------------------------------------------


def release(archive: bytes) -> Dict[str, bytes]:
    """Every file of the release folder, relative path -> bytes (deterministic)."""
    files: Dict[str, bytes] = {ARCHIVE: archive}

    def claude(r: Registration) -> dict:
        return {"type": "command", "command": _portable_line(r.words), **_timeout(r)}

    def codex(r: Registration) -> dict:
        return {"type": "command", "command": _portable_line(r.words),
                "commandWindows": _portable_line(r.words, windows=True), **_timeout(r)}

    # the release is for any lich: it claims what every lich measured accepts
    claude_claim, codex_claim = releases.claim(None, "claude"), releases.claim(None, "codex")
    claude_body = _claude_files(hooks_file("claude", claude), {
        "type": "stdio", "command": "python3", "args": ["-I", "-S", f"{ROOT_VAR}/{ARCHIVE}", "mcp"]},
        claude_claim, skills.RELEASE_COMMAND)
    # Codex substitutes the plugin root in hook commands but not in an MCP server's args:
    # a path relative to the plugin folder, run from there, works.
    codex_body = _codex_files(hooks_file("codex", codex), {
        "command": "python3", "args": ["-I", "-S", f"./{ARCHIVE}", "mcp"], "cwd": "./"}, skills.RELEASE_COMMAND)
    files.update(claude_body)
    files.update(_claude_manifests({**claude_body, ARCHIVE: archive}, claude_claim))
    files.update(codex_body)
    files.update(_codex_manifests({**codex_body, ARCHIVE: archive}, codex_claim))
    files.update(_file_shipped())
    files.update(_ours("release"))
    return files


# Antigravity and Crush run shell scripts lich's installer copies from the release by
# these names (internal/agentplugin: antigravity.go, crush.go); each runs lichhook.
SCRIPT_NAMES = ("report-session-start.sh", "report-state.sh", "report-title.sh", "report-tool.sh",
                "report-touched.sh")
RUNNER = "hooks/report-state.sh"


def _runner() -> bytes:
    # Finds the archive: beside the release's hooks/ folder, else $LICHHOOK_ARCHIVE, else
    # <data dir>/release/lichhook.pyz (where the release's README says to put it when
    # only these scripts are copied, as lich's installer does).
    return (
        "#!/bin/sh\n"
        "# lichhook in lich-plugin's layout: runs `lichhook <words>` with the hook's stdin.\n"
        "here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
        "for archive in \"$here/../lichhook.pyz\" \"${LICHHOOK_ARCHIVE:-}\" "
        "\"${XDG_DATA_HOME:-$HOME/.local/share}/lichhook/release/lichhook.pyz\" "
        "\"$HOME/Library/Application Support/lichhook/release/lichhook.pyz\"; do\n"
        "  [ -n \"$archive\" ] && [ -f \"$archive\" ] && break\n"
        "  archive=\n"
        "done\n"
        "# Not found: a hook must not fail its harness; it reports nothing.\n"
        "[ -n \"$archive\" ] || { cat >/dev/null; exit 0; }\n"
        "for python in python3 python; do\n"
        "  command -v \"$python\" >/dev/null 2>&1 && exec \"$python\" -I -S \"$archive\" \"$@\"\n"
        "done\n"
        "cat >/dev/null\n"
        "exit 0\n"
    ).encode("utf-8")


def _wrapper(words: str) -> bytes:
    return (f"#!/bin/sh\nexec sh \"$(dirname \"$0\")/report-state.sh\" {words}\n").encode("utf-8")


def _file_shipped() -> Dict[str, bytes]:
    files: Dict[str, bytes] = {RUNNER: _runner()}
    crush = _rows("crush")[0]
    for name in SCRIPT_NAMES:
        if name == "report-state.sh":
            continue
        # Crush's lines run report-session-start.sh with the argument `crush`, and
        # report-touched.sh with none: both become lichhook's one Crush registration.
        words = " ".join(crush.words) if name in ("report-session-start.sh", "report-touched.sh") else '"$@"'
        files[f"hooks/{name}"] = _wrapper(words)
    files["hooks/detail.jq"] = b".\n"
    files["hooks.json"] = _json(_antigravity_hooks())
    files["crush/crushrc"] = _crushrc()
    for kind in ("opencode", "omp"):
        files[f"{kind}/lich.js"] = _module(kind)
    return files


def _antigravity_hooks() -> dict:
    events: Dict[str, list] = {}
    for r in _rows("antigravity"):
        handler = {"type": "command", "command": f"sh {RUNNER} " + " ".join(r.words), **_timeout(r)}
        if r.event in FLAT_EVENTS:
            events.setdefault(r.event, []).append(handler)
        else:
            groups = events.setdefault(r.event, [])
            if not groups:
                groups.append({"matcher": r.matcher or "", "hooks": []})
            groups[0]["hooks"].append(handler)
    return {TABLE[0]: events}


def _crushrc() -> bytes:
    lines = ["# lichhook for Crush, in lich-plugin's layout: add these lines to your crushrc",
             "# (`crush dirs` names its folder), with the release folder's path for RELEASE."]
    for r in _rows("crush"):
        command = "sh RELEASE/hooks/report-state.sh " + " ".join(r.words)
        lines.append(f"hook add {r.event} --name lichhook --command '{command}'"
                     + (f" --timeout {r.timeout}" if r.timeout else ""))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _module(kind: str) -> bytes:
    """lichhook's own module for ``kind``, finding its interpreter and archive when it
    runs instead of having them written in: ``py -3`` on Windows, ``python3`` elsewhere;
    ``$LICHHOOK_ARCHIVE``, else ``<data dir>/release/lichhook.pyz``."""
    text = module_source(kind, Target("python3", "@ARCHIVE@", windows=False)).decode("utf-8")
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("const PYTHON = "):
            line = 'const PYTHON = process.platform === "win32" ? "py" : "python3";\n'
        elif line.startswith("const ARCHIVE = "):
            line = ("const ARCHIVE = process.env.LICHHOOK_ARCHIVE || join(process.platform === \"win32\"\n"
                    "  ? (process.env.LOCALAPPDATA || \"\") + \"\\\\lichhook\"\n"
                    "  : process.platform === \"darwin\"\n"
                    "    ? (process.env.HOME || \"\") + \"/Library/Application Support/lichhook\"\n"
                    "    : (process.env.XDG_DATA_HOME || (process.env.HOME || \"\") + \"/.local/share\") + \"/lichhook\",\n"
                    "  \"release\", \"lichhook.pyz\");\n")
        elif line.startswith("const FLAGS = "):
            line = 'const FLAGS = process.platform === "win32" ? ["-3", "-I", "-S"] : ["-I", "-S"];\n'
        lines.append(line)
    return "".join(lines).encode("utf-8")


def write(folder: str, files: Dict[str, bytes]) -> None:
    """Write ``files`` under ``folder`` (build time: a folder the build owns)."""
    for rel, data in sorted(files.items()):
        path = os.path.join(folder, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755 if rel.endswith((".sh", ".pyz")) else 0o644)
    for made, _, _ in os.walk(folder):  # folders as files: the same modes whatever the builder's umask
        os.chmod(made, 0o755)

