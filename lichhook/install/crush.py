"""Crush: its global config folder, ``$CRUSH_GLOBAL_CONFIG`` (a folder, as Crush's own
tests set it), else ``$XDG_CONFIG_HOME/crush``, else ``~/.config/crush``.

- Where the user already writes ``crushrc`` (Crush 0.88+ reads it first), lichhook adds
  a delimited block to it: ``hook add PreToolUse --name lichhook --command '...' --timeout 5``.
  crushrc is itself read by Crush's POSIX shell interpreter, so the command is quoted
  once for the hook's shell and once more as the ``--command`` word. A reinstall
  updates only lichhook's words inside ``--command`` and keeps the rest of that line.
- Otherwise ``crush.json``: a flat ``PreToolUse`` entry ``{name, command, timeout}`` and
  ``mcp.lichhook`` (Crush's MCP table is ``mcp``, not ``mcpServers``).

Crush runs hook commands with its embedded POSIX interpreter (mvdan.cc/sh) on every OS,
so one POSIX-quoted line serves Linux, macOS and Windows.
"""

from __future__ import annotations

import os

from lichhook.install import entries, files, harness, jsonmerge, quoting, textblock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional

    from lichhook.install.target import Target

TIMEOUT = 5
NAME = "lichhook"
BEGIN = "# >>> lichhook: session reporter (added by 'lichhook install crush'; 'lichhook uninstall crush' removes it) >>>"
END = "# <<< lichhook <<<"


class Crush(harness.Harness):
    name = "crush"
    title = "Crush"
    programs = ("crush",)

    def config_dir(self) -> str:
        return self.env.get("CRUSH_GLOBAL_CONFIG") or os.path.join(self.env.config_home(), "crush")

    def config_dirs(self) -> List[str]:
        return [self.config_dir()]

    def json_path(self) -> str:
        return os.path.join(self.config_dir(), "crush.json")

    def rc_path(self) -> str:
        return os.path.join(self.config_dir(), "crushrc")

    def uses_crushrc(self) -> bool:
        return os.path.isfile(self.rc_path())

    def handler(self, target: Target) -> entries.Wanted:
        entry = {"name": NAME, "command": target.sh_line("crush"), "timeout": TIMEOUT}
        return entries.Wanted(("crush",), entry, {"command": entries.Line("sh")})

    def rc_line(self, command: str) -> str:
        return f"hook add PreToolUse --name {NAME} --command {quoting.sh_quote(command)} --timeout {TIMEOUT}"

    def rc_block(self, target: Target, newline: str = "\n") -> str:
        return newline.join([BEGIN, self.rc_line(target.sh_line("crush")), END]) + newline

    def install(self, target: Target) -> List[files.Edit]:
        if self.uses_crushrc():
            rc = self.rc_path()

            def add_block(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
                text = _decode(raw, rc)
                span = textblock.find(text, BEGIN, END)
                if span:
                    block = _updated_block(text[span[0]:span[1]], target, rc, notes)
                    new = text[:span[0]] + block + text[span[1]:]
                else:
                    new = textblock.put(text, self.rc_block(target, textblock.newline_of(text)), BEGIN, END)
                return raw if new == text else new.encode("utf-8")

            # a crush.json entry from an earlier install would run the hook twice
            return [files.Edit(rc, add_block)] + self._remove_json(target)
        path = self.json_path()

        def add(doc, notes):
            entries.install_hooks(doc, path, ("hooks",), "PreToolUse", [self.handler(target)], None, target, notes)
            entries.install_server(doc, path, ("mcp",), "lichhook", harness.server_entry(target), target, notes)

        return [files.Edit(path, harness.json_edit(path, add))]

    def _remove_json(self, target: Target) -> List[files.Edit]:
        path = self.json_path()

        def change(doc, keep) -> None:
            entries.remove_hooks(doc, ("hooks",), ("PreToolUse",), target, keep, flat=True)
            entries.remove_server(doc, ("mcp",), "lichhook", target, keep)

        return [files.Edit(path, harness.removal(path, change))]

    def uninstall(self, target: Target) -> List[files.Edit]:
        rc = self.rc_path()

        def remove_block(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            if raw is None:
                return None
            text = _decode(raw, rc)
            new = textblock.remove(text, BEGIN, END)
            return raw if new == text else new.encode("utf-8")

        return [files.Edit(rc, remove_block)] + self._remove_json(target)

    def registrations(self, target: Target) -> List[harness.Found]:
        found = harness.found_in_json(self.json_path(), target, wanted={"PreToolUse": [self.handler(target)]},
                                      flat=True, server=(("mcp",), "lichhook", harness.server_entry(target)))
        raw = files.read(self.rc_path())
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            span = textblock.find(text, BEGIN, END)
            if span:
                line = _hook_line(text[span[0]:span[1]])
                command = _command_word(line) if line is not None else None
                if command is None:
                    found.append(harness.Found(self.rc_path(), "PreToolUse", line or "", None, None))
                else:
                    python, archive = harness.split_line(command)
                    added = entries.Line("sh").additions_text(command, target, ("crush",)) if target.owns(command) else []
                    found.append(harness.Found(self.rc_path(), "PreToolUse", command, python, archive,
                                               target.owns(command), added))
        return found


def _hook_line(block: str) -> Optional[str]:
    lines = block.splitlines()
    return lines[1] if len(lines) > 2 else None


def _command_word(line: str) -> Optional[str]:
    import shlex

    try:
        words = shlex.split(line)
        return words[words.index("--command") + 1]
    except (ValueError, IndexError):
        return None


def _updated_block(block: str, target: Target, path: str, notes: List[str]) -> str:
    """lichhook's crushrc block with its command brought up to date, keeping what the
    user changed on that line (other flags, a timeout, words after ours)."""
    import shlex

    line = _hook_line(block)
    command = _command_word(line) if line is not None else None
    new = entries.Line("sh").updated_text(command, target, ("crush",)) if command is not None else None
    if new is None:
        notes.append(f"left lichhook's block in {path} as it is: its hook line was changed in a way lichhook "
                     "cannot update. To update it, remove the block and install again.")
        return block
    if new == command:
        return block
    assert line is not None  # a command was read from it
    words = shlex.split(line)
    words[words.index("--command") + 1] = new
    return block.replace(line, " ".join(quoting.sh_quote(w) for w in words), 1)


def _decode(raw: Optional[bytes], path: str) -> str:
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise jsonmerge.ConfigError(f"{path} is not UTF-8; fix it, then run again. It was left untouched.")
