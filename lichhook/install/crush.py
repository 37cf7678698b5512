"""Crush: its global config folder, ``$CRUSH_GLOBAL_CONFIG`` (a folder, as Crush's own
tests set it), else ``$XDG_CONFIG_HOME/crush``, else ``~/.config/crush``.

- Where the user already writes ``crushrc`` (Crush 0.88+ reads it first), lichhook adds
  a delimited block to it: ``hook add PreToolUse --name lichhook --command '...' --timeout 5``.
  crushrc is itself read by Crush's POSIX shell interpreter, so the command is quoted
  once for the hook's shell and once more as the ``--command`` word.
- Otherwise ``crush.json``: a flat ``PreToolUse`` entry ``{name, command, timeout}`` and
  ``mcp.lichhook`` (Crush's MCP table is ``mcp``, not ``mcpServers``).

Crush runs hook commands with its embedded POSIX interpreter (mvdan.cc/sh) on every OS,
so one POSIX-quoted line serves Linux, macOS and Windows.
"""

from __future__ import annotations

import os

from lichhook.install import files, harness, jsonmerge, quoting, textblock

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

    def entry(self, target: Target) -> dict:
        return {"name": NAME, "command": target.sh_line("crush"), "timeout": TIMEOUT}

    def rc_block(self, target: Target, newline: str = "\n") -> str:
        line = (f"hook add PreToolUse --name {NAME} --command {quoting.sh_quote(target.sh_line('crush'))} "
                f"--timeout {TIMEOUT}")
        return newline.join([BEGIN, line, END]) + newline

    def install(self, target: Target) -> List[files.Edit]:
        if self.uses_crushrc():
            rc = self.rc_path()

            def add_block(raw: Optional[bytes]) -> Optional[bytes]:
                text = _decode(raw, rc)
                new = textblock.put(text, self.rc_block(target, textblock.newline_of(text)), BEGIN, END)
                return raw if new == text else new.encode("utf-8")

            # a crush.json entry from an earlier install would run the hook twice
            return [files.Edit(rc, add_block)] + self._remove_json(target)
        path = self.json_path()
        wanted = [self.entry(target)]

        def add(raw):
            def change(data):
                hooks = harness.hooks_table(data, path)
                harness.set_flat(hooks, "PreToolUse", wanted, target.owns, path)
                harness.put_server(data, path, "mcp",
                                   {"type": "stdio", "command": target.python, "args": [target.archive, "mcp"]})
            return jsonmerge.edit(raw, path, change)

        return [files.Edit(path, add)]

    def _remove_json(self, target: Target) -> List[files.Edit]:
        path = self.json_path()

        def change(data: dict) -> None:
            harness.drop_hooks(data, ("PreToolUse",), target.owns, path, flat=True)
            harness.drop_server(data, "mcp", target.owns)

        return [files.Edit(path, harness.removal(path, change))]

    def uninstall(self, target: Target) -> List[files.Edit]:
        rc = self.rc_path()

        def remove_block(raw: Optional[bytes]) -> Optional[bytes]:
            if raw is None:
                return None
            text = _decode(raw, rc)
            new = textblock.remove(text, BEGIN, END)
            return raw if new == text else new.encode("utf-8")

        return [files.Edit(rc, remove_block)] + self._remove_json(target)

    def registrations(self, target: Target) -> List[harness.Found]:
        found = harness.found_in_json(self.json_path(), target, servers="mcp")
        try:
            raw = files.read(self.rc_path())
        except jsonmerge.ConfigError:
            raw = None
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            span = textblock.find(text, BEGIN, END)
            if span:
                line = text[span[0]:span[1]].splitlines()[1]
                import shlex

                try:
                    words = shlex.split(line)
                    command = words[words.index("--command") + 1]
                except (ValueError, IndexError):
                    command = line
                python, archive = harness.split_line(command)
                found.append(harness.Found(self.rc_path(), "PreToolUse", command, python, archive, target.owns(command)))
        return found


def _decode(raw: Optional[bytes], path: str) -> str:
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise jsonmerge.ConfigError(f"{path} is not UTF-8; fix it, then run again. It was left untouched.")
