"""Crush: its global config folder, ``$CRUSH_GLOBAL_CONFIG`` (a folder, as Crush's own
tests set it), else ``$XDG_CONFIG_HOME/crush``, else ``~/.config/crush``.

lichhook registers one hook per row of Crush's descriptor registrations
(``lichhook.adapters``): today ``crush PreToolUse`` on ``PreToolUse``, Crush's only
event. An earlier release registered the bare ``crush``; a reinstall updates that entry
in place.

- Where the user already writes ``crushrc`` (Crush 0.88+ reads it first), lichhook adds
  a delimited block to it, one line per row:
  ``hook add PreToolUse --name lichhook --command '...' --timeout 5``.
  crushrc is itself read by Crush's POSIX shell interpreter, so the command is quoted
  once for the hook's shell and once more as the ``--command`` word. A reinstall
  updates only lichhook's words inside ``--command`` and keeps the rest of that line.
- Otherwise ``crush.json``: a flat entry ``{name, command, timeout}`` per row under its
  event, and ``mcp.lichhook`` (Crush's MCP table is ``mcp``, not ``mcpServers``).

Crush runs hook commands with its embedded POSIX interpreter (mvdan.cc/sh) on every OS,
so one POSIX-quoted line serves Linux, macOS and Windows.
"""

from __future__ import annotations

import os
import shlex
from typing import Dict, List, Optional, Sequence

from lichhook.descriptor import Registration
from lichhook.install import harness, quoting
from lichhook.install.plugin import layout, lichplugin, lichtools
from lichhook.install.config import entries, textblock
from lichhook.install.disk import files
from lichhook.install.plugin.claim import harness_claim
from lichhook.install.copies.target import Target
from lichhook.install.errors import ConfigError

NAME = "lichhook"
BEGIN = "# >>> lichhook: session reporter (added by 'lichhook install crush'; 'lichhook uninstall crush' removes it) >>>"
END = "# <<< lichhook <<<"


class Crush(harness.EntryHarness):
    name = "crush"
    title = "Crush"
    programs = ("crush",)
    flat = True  # an event's list holds the entries themselves, each with its matcher
    server_table = ("mcp",)

    def config_dir(self) -> str:
        return self.env.get("CRUSH_GLOBAL_CONFIG") or os.path.join(self.env.config_home(), "crush")

    def hooks_path(self) -> str:
        return os.path.join(self.config_dir(), "crush.json")

    def server_path(self) -> str:
        return self.hooks_path()

    def rc_path(self) -> str:
        return os.path.join(self.config_dir(), "crushrc")

    def uses_crushrc(self) -> bool:
        return os.path.isfile(self.rc_path())

    def handler(self, target: Target, r: Registration, earlier: Sequence[tuple] = ()) -> entries.Wanted:
        entry: dict = {"name": NAME}
        if r.matcher is not None:
            entry["matcher"] = r.matcher
        entry["command"] = target.sh_line(*r.words)
        entry.update(layout.timeout_of(r))
        return entries.Wanted(r.words, entry, {"command": entries.Line("sh")}, earlier)

    @staticmethod
    def rc_line(event: str, entry: dict) -> str:
        """The crushrc line registering the hook ``entry`` (as ``handler`` renders one) on
        ``event``: the release's lines too."""
        words = ["hook", "add", event, "--name", NAME]
        if "matcher" in entry:
            words += ["--matcher", quoting.sh_quote(entry["matcher"])]
        words += ["--command", quoting.sh_quote(entry["command"])]
        if "timeout" in entry:
            words += ["--timeout", str(entry["timeout"])]
        return " ".join(words)

    def rc_block(self, target: Target, newline: str = "\n") -> str:
        lines = [self.rc_line(event, w.entry) for event, wanted in self.wanted(target).items() for w in wanted]
        return newline.join([BEGIN, *lines, END]) + newline

    def install(self, target: Target) -> List[files.Edit]:
        if self.uses_crushrc():
            rc = self.rc_path()

            def add_block(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
                text = _decode(raw, rc)
                span = textblock.find(text, BEGIN, END, is_own_line)
                if span:
                    block = _updated_block(text[span[0]:span[1]], self.wanted(target), target, rc, notes)
                    new = text[:span[0]] + block + text[span[1]:]
                else:
                    block = self.rc_block(target, textblock.newline_of(text))
                    new = textblock.put(text, block, BEGIN, END, is_own_line)
                return raw if new == text else new.encode("utf-8")

            # a crush.json entry from an earlier install would run the hook twice
            return ([files.Edit(rc, add_block), self._lich_block(self.lich()[0])]
                    + self.json_edits(target, install=False))
        return self.json_edits(target)

    def uninstall(self, target: Target) -> List[files.Edit]:
        rc = self.rc_path()

        def remove_block(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            if raw is None:
                return None
            text = _decode(raw, rc)
            new = textblock.remove(text, BEGIN, END, is_own_line)
            return raw if new == text else new.encode("utf-8")

        return [files.Edit(rc, remove_block), self._lich_block(None)] + self.json_edits(target, install=False)

    # -- lich's own MCP server, in a block opened by lich's marker (``lichtools``) ------------

    def lich(self) -> tuple:
        return lichtools.find_lich(self.env.environ, self.env.windows)

    def _lich_block(self, lich: Optional[str]) -> files.Edit:
        """lichhook's lich-plugin-marked block in crushrc: written (or updated in place)
        naming ``lich``, or taken out when ``lich`` is None."""
        rc = self.rc_path()

        def change(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
            if raw is None:
                return None
            text = _decode(raw, rc)
            begin = _lich_open(text)
            span = textblock.find(text, begin, lichplugin.CRUSH_CLOSE, _is_lich_line) if begin else None
            if lich is None:
                new = textblock.remove(text, begin, lichplugin.CRUSH_CLOSE, _is_lich_line) if begin else text
            else:
                block = lichtools.crush_block(lich, harness_claim(self), textblock.newline_of(text))
                new = (text[:span[0]] + block + text[span[1]:] if span else
                       textblock.put(text, block, lichtools.crush_open(harness_claim(self)), lichplugin.CRUSH_CLOSE,
                                     _is_lich_line))
            return raw if new == text else new.encode("utf-8")

        return files.Edit(rc, change)

    def notes(self, target: Target) -> List[str]:
        if not self.uses_crushrc():
            return [f"Crush: lich's tools not registered: lich reads them from crushrc (Crush 0.88+), and "
                    f"{self.rc_path()} does not exist. Create it (empty) and install again."]
        return lichtools.notes(self.title, harness_claim(self), *self.lich())

    def checks(self, target: Target) -> List[tuple]:
        if not any(f.ours for f in self.registrations(target)):
            return []  # lichhook is not installed here
        raw = files.read(self.rc_path())
        text = raw.decode("utf-8", "replace") if raw is not None else ""
        begin = _lich_open(text)
        command = lichtools.crush_command(text[text.index(begin):]) if begin else None
        return [lichtools.check(self.name, harness_claim(self), command, self.env.environ, self.env.windows)]

    def registrations(self, target: Target) -> List[harness.Registered]:
        wanted = self.wanted(target)
        found = super().registrations(target)
        raw = files.read(self.rc_path())
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            span = textblock.find(text, BEGIN, END, is_own_line)
            for line in _hook_lines(text[span[0]:span[1]]) if span else []:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                event = _event_word(line) or "?"
                command = _command_word(line)
                if command is None:
                    found.append(harness.Registered(self.rc_path(), event, line, None, None))
                    continue
                python, archive, foreign = harness.read_words(quoting.split_words(command))
                ours = target.owns(command)
                added: List[str] = []
                words = None
                if ours:
                    match = _match(command, wanted.get(event, []), target)
                    added = (entries.Line("sh").additions_text(command, target, match[1]) if match is not None
                             else [f"a command lichhook cannot update: {command!r}"])
                    words = match[0].sub if match is not None and match[1] == match[0].sub else None
                found.append(harness.Registered(self.rc_path(), event, command, python, archive, ours, added, words,
                                           foreign))
        return found


def _lich_open(text: str) -> Optional[str]:
    """The open marker line of lichhook's lich-plugin block (its note follows it), or None."""
    lines = text.splitlines()
    for k, line in enumerate(lines[:-1]):
        if line.startswith(lichplugin.CRUSH_OPEN) and lines[k + 1] == lichplugin.LICHHOOK_CRUSH_NOTE:
            return line
    return None


def _is_lich_line(line: str) -> bool:
    return line == lichplugin.LICHHOOK_CRUSH_NOTE or line.startswith(f"mcp add {lichtools.NAME} ")


def is_own_line(line: str) -> bool:
    """Whether ``line`` is one lichhook writes in its crushrc block (``hook add EVENT
    --name lichhook ...``, maybe with the user's changes after the name)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return False
    return words[:2] == ["hook", "add"] and words[3:5] == ["--name", NAME]


def _hook_lines(block: str) -> List[str]:
    """The lines between the block's two markers."""
    return block.splitlines()[1:-1]


def _event_word(line: str) -> Optional[str]:
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    return words[2] if words[:2] == ["hook", "add"] and len(words) > 2 else None


def _command_word(line: str) -> Optional[str]:
    try:
        words = shlex.split(line)
        return words[words.index("--command") + 1]
    except (ValueError, IndexError):
        return None


def _match(command: str, wanted: Sequence[entries.Wanted], target: Target) -> Optional[tuple]:
    """(the Wanted, lichhook's words as ``command`` spells them) of the registration
    ``command`` is, or None. The words as written may be an earlier release's."""
    parts = entries.Line("sh").locate_text(command, target)
    if parts is None:
        return None
    after = parts[1]
    for w in wanted:
        for sub in (w.sub, *w.earlier):
            if after[:len(sub)] == list(sub):
                return w, sub
    return None


def _updated_block(block: str, wanted: Dict[str, List[entries.Wanted]], target: Target, path: str,
                   notes: List[str]) -> str:
    """lichhook's crushrc block with each line's command brought up to date, keeping
    what the user changed on it (other flags, a timeout, words after ours); a line for
    each registration the block lacks is added before the end marker."""
    lines = block.splitlines(keepends=True)
    newline = textblock.newline_of(block)
    seen = set()
    for k, line in enumerate(lines[1:-1], start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        event = _event_word(line)
        command = _command_word(line)
        match = _match(command, wanted.get(event or "", []), target) if command is not None else None
        new = (entries.Line("sh").updated_text(command, target, match[1], match[0].sub)
               if command is not None and match is not None else None)
        if new is None:
            notes.append(f"left lichhook's block in {path} as it is: its hook line {line.strip()!r} was changed "
                         "in a way lichhook cannot update. To update it, remove the block and install again.")
            return block
        seen.add(id(match[0]))  # type: ignore[index]
        if new == command:
            continue
        words = shlex.split(line)
        words[words.index("--command") + 1] = new
        ending = line[len(line.rstrip("\r\n")):]
        lines[k] = " ".join(quoting.sh_quote(w) for w in words) + ending
    missing = [Crush.rc_line(event, w.entry) + newline for event, ws in wanted.items() for w in ws if id(w) not in seen]
    return "".join(lines[:-1] + missing + lines[-1:])


def _decode(raw: Optional[bytes], path: str) -> str:
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8; fix it, then run again. It was left untouched.")
