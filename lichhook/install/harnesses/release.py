"""The release folder the build writes beside the archive (``dist/lich-plugin/``):
lichhook in lich-plugin's layout (``lichhook.install.plugin.layout``) for every harness,
portable: its command lines name ``python3`` (``py -3`` where the harness has a Windows
form) and the archive inside the installed plugin. It stands above the harnesses: it
holds a part of each (Antigravity's hooks file, Crush's lines, the opencode and omp
modules) beside the Claude Code and Codex plugin files."""

from __future__ import annotations

import os
from typing import Dict

from lichhook.contracts import release as releases
from lichhook.descriptor import Registration
from lichhook.install.harnesses.antigravity import FLAT_EVENTS, TABLE
from lichhook.install.harnesses.crush import Crush
from lichhook.install.harnesses.modules import module_source
from lichhook.install.plugin import layout, skills
from lichhook.install.harness import descriptor_rows
from lichhook.install.quoting import sh_quote
from lichhook.install.copies.target import Target, hook_verdict, launcher


def _portable_line(words: tuple, windows: bool = False) -> str:
    # through the launcher, as install's entries run (lichhook.install.copies.target): a release
    # whose archive is gone lets its harness through
    code = launcher(hook_verdict(words))
    if windows:
        # The Python launcher: python.org's installer puts `py` on PATH; `python3` there is
        # often the Microsoft Store stub. Works the same under PowerShell and cmd.
        return f'py -3 -I -S -c "{code}" "{layout.ROOT_VAR}\\{layout.ARCHIVE}" ' + " ".join(words)
    return f'python3 -I -S -c {sh_quote(code)} "{layout.ROOT_VAR}/{layout.ARCHIVE}" ' + " ".join(words)


def contents(archive: bytes) -> Dict[str, bytes]:
    """Every file of the release folder, relative path -> bytes (deterministic)."""
    files: Dict[str, bytes] = {layout.ARCHIVE: archive}

    def claude(r: Registration) -> dict:
        return {"type": "command", "command": _portable_line(r.words), **layout.timeout_of(r)}

    def codex(r: Registration) -> dict:
        return {"type": "command", "command": _portable_line(r.words),
                "commandWindows": _portable_line(r.words, windows=True), **layout.timeout_of(r)}

    # the release is for any lich: it claims what every lich measured accepts
    claude_claim, codex_claim = releases.claim(None, "claude"), releases.claim(None, "codex")
    claude_body = layout.claude_files(layout.hooks_file("claude", claude), {
        "type": "stdio", "command": "python3", "args": ["-I", "-S", f"{layout.ROOT_VAR}/{layout.ARCHIVE}", "mcp"]},
        claude_claim, skills.RELEASE_COMMAND)
    # Codex substitutes the plugin root in hook commands but not in an MCP server's args:
    # a path relative to the plugin folder, run from there, works.
    codex_body = layout.codex_files(layout.hooks_file("codex", codex), {
        "command": "python3", "args": ["-I", "-S", f"./{layout.ARCHIVE}", "mcp"], "cwd": "./"}, skills.RELEASE_COMMAND)
    files.update(claude_body)
    files.update(layout.claude_manifests({**claude_body, layout.ARCHIVE: archive}, claude_claim))
    files.update(codex_body)
    files.update(layout.codex_manifests({**codex_body, layout.ARCHIVE: archive}, codex_claim))
    files.update(_file_shipped())
    files.update(layout.ours("release"))
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
    crush = descriptor_rows("crush")[0]
    for name in SCRIPT_NAMES:
        if name == "report-state.sh":
            continue
        # Crush's lines run report-session-start.sh with the argument `crush`, and
        # report-touched.sh with none: both become lichhook's one Crush registration.
        words = " ".join(crush.words) if name in ("report-session-start.sh", "report-touched.sh") else '"$@"'
        files[f"hooks/{name}"] = _wrapper(words)
    files["hooks/detail.jq"] = b".\n"
    files["hooks.json"] = layout.json_bytes(_antigravity_hooks())
    files["crush/crushrc"] = _crushrc()
    for kind in ("opencode", "omp"):
        files[f"{kind}/lich.js"] = _module(kind)
    return files


def _antigravity_hooks() -> dict:
    events: Dict[str, list] = {}
    for r in descriptor_rows("antigravity"):
        handler = {"type": "command", "command": f"sh {RUNNER} " + " ".join(r.words), **layout.timeout_of(r)}
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
    for r in descriptor_rows("crush"):
        command = "sh RELEASE/hooks/report-state.sh " + " ".join(r.words)
        lines.append(Crush.rc_line(r.event, {"command": command, **layout.timeout_of(r)}))
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
