"""Codex CLI: the SessionStart hook in hooks.json, the MCP server in config.toml.

- ``$CODEX_HOME/hooks.json``, else ``~/.codex/hooks.json``: ``SessionStart`` runs the
  ``codex`` report, timeout 5 s. Codex runs ``command`` with ``$SHELL -lc`` on Unix; on
  Windows it runs ``commandWindows`` with the session shell (PowerShell, by every report)
  or ``%COMSPEC% /C``, so that line must mean the same to both.
- ``config.toml``: ``[mcp_servers.lichhook]``, appended as a delimited block, and only
  when no ``mcp_servers.lichhook`` exists yet: lichhook carries no TOML writer and never
  rewrites the user's TOML.
"""

from __future__ import annotations

import os

from lichhook.install import files, harness, jsonmerge, textblock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional

    from lichhook.install.target import Target

TIMEOUT = 5
BEGIN = "# >>> lichhook: MCP server (added by 'lichhook install codex'; 'lichhook uninstall codex' removes it) >>>"
END = "# <<< lichhook <<<"


def toml_string(text: str) -> str:
    """A TOML basic string. JSON's escapes are a subset of TOML's, so json.dumps fits."""
    import json

    return json.dumps(text, ensure_ascii=False)


def mcp_block(target: Target, newline: str = "\n") -> str:
    lines = [
        BEGIN,
        "[mcp_servers.lichhook]",
        f"command = {toml_string(target.python)}",
        f"args = [{toml_string(target.archive)}, \"mcp\"]",
        END,
    ]
    return newline.join(lines) + newline


def find_block(text: str) -> Optional[tuple]:
    return textblock.find(text, BEGIN, END)


def _toml_parses(text: str) -> Optional[bool]:
    """Whether ``text`` is valid TOML, or None where no TOML reader exists (< 3.11)."""
    try:
        import tomllib
    except ImportError:
        return None
    try:
        tomllib.loads(text)
        return True
    except tomllib.TOMLDecodeError:
        return False


def _mentions_table(text: str) -> bool:
    """A textual stand-in for parsing: does the user's TOML define mcp_servers.lichhook,
    or mcp_servers as an inline table (which a [mcp_servers.x] header would break)?"""
    import re

    return bool(re.search(r"(?m)^\s*\[\s*mcp_servers\s*\.\s*[\"']?lichhook[\"']?\s*[\].]", text)
                or re.search(r"(?m)^\s*mcp_servers\s*(\.\s*[\"']?lichhook[\"']?\s*)?=", text)
                or re.search(r"(?m)^\s*lichhook\s*=\s*\{", text))


def add_block(raw: Optional[bytes], path: str, target: Target) -> tuple:
    """(new bytes, note): the config with lichhook's block, or unchanged with a note
    saying why it was not added."""
    text = "" if raw is None else _decode(raw, path)
    block = mcp_block(target, textblock.newline_of(text))
    found = find_block(text)
    if found and text[found[0]:found[1]] == block:
        return raw, None
    rest = textblock.remove(text, BEGIN, END)
    if _toml_parses(rest) is False:
        raise jsonmerge.ConfigError(f"{path} is not valid TOML; fix it, then run again. It was left untouched.")
    candidate = textblock.put(text, block, BEGIN, END)
    verdict = _toml_parses(candidate)
    if verdict is False or (verdict is None and _mentions_table(rest)):
        return raw, (f"{path} already defines an MCP server table lichhook cannot add to safely; "
                     f"add [mcp_servers.lichhook] by hand (see docs/install.md)")
    return candidate.encode("utf-8"), None


def remove_block(raw: Optional[bytes], path: str) -> Optional[bytes]:
    if raw is None:
        return None
    text = _decode(raw, path)
    if not find_block(text):
        return raw
    remaining = textblock.remove(text, BEGIN, END)
    if not remaining.strip() and not os.path.exists(path + files.BACKUP_SUFFIX):
        return None
    return remaining.encode("utf-8")


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise jsonmerge.ConfigError(f"{path} is not UTF-8; fix it, then run again. It was left untouched.")


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

    def handler(self, target: Target) -> dict:
        entry: dict = {"type": "command", "command": target.sh_line("codex")}
        if target.windows:
            line, warning = target.windows_line("codex")
            entry["commandWindows"] = line
            if warning:
                self._notes.append(f"Codex on Windows: {warning}.")
        entry["timeout"] = TIMEOUT
        return entry

    def install(self, target: Target) -> List[files.Edit]:
        hooks_path, toml_path = self.hooks_path(), self.toml_path()
        wanted = [{"hooks": [self.handler(target)]}]

        def add_hooks(raw):
            def change(data):
                hooks = harness.hooks_table(data, hooks_path)
                harness.set_groups(hooks, "SessionStart", wanted, target.owns, hooks_path)
            return jsonmerge.edit(raw, hooks_path, change)

        def add_mcp(raw):
            new, note = add_block(raw, toml_path, target)
            if note and note not in self._notes:
                self._notes.append(note)
            return new

        return [files.Edit(hooks_path, add_hooks), files.Edit(toml_path, add_mcp, mode=0o600)]

    def uninstall(self, target: Target) -> List[files.Edit]:
        hooks_path, toml_path = self.hooks_path(), self.toml_path()
        return [
            files.Edit(hooks_path, harness.removal(hooks_path, lambda data: harness.drop_hooks(
                data, ("SessionStart",), target.owns, hooks_path))),
            files.Edit(toml_path, lambda raw: remove_block(raw, toml_path)),
        ]

    def notes(self, target: Target) -> List[str]:
        return self._notes + [
            "Codex runs a new or changed hook only after you trust it: start codex and review it "
            "with /hooks (until then it is skipped without a word)."
        ]

    def registrations(self, target: Target) -> List[harness.Found]:
        found = harness.found_in_json(self.hooks_path(), target)
        raw = None
        try:
            raw = files.read(self.toml_path())
        except jsonmerge.ConfigError:
            pass
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            span = find_block(text)
            if span:
                block = text[span[0]:span[1]]
                python, archive = _toml_value(block, "command"), _toml_first_arg(block)
                found.append(harness.Found(self.toml_path(), "mcp_servers.lichhook", f"{python} {archive} mcp",
                                           python, archive, archive == target.archive))
        return found


def _toml_value(block: str, key: str) -> Optional[str]:
    for line in block.splitlines():
        if line.startswith(key + " = "):
            return jsonmerge.string_literal(line[len(key) + 3:])
    return None


def _toml_first_arg(block: str) -> Optional[str]:
    for line in block.splitlines():
        if line.startswith("args = "):
            return jsonmerge.string_list_head(line[len("args = "):])
    return None
