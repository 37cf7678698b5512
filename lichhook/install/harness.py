"""What every harness installer shares: the environment it reads, the base class, the
transforms that edit a JSON config, and reading a registered command back."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from lichhook.adapters import BY_PROVIDER
from lichhook.descriptor import Registration, earlier_words, registrations
from lichhook.install import quoting
from lichhook.install.config import entries, jsonedit
from lichhook.install.disk import files
from lichhook.install.disk.files import Edit
from lichhook.install.config.jsonedit import Doc
from lichhook.install.errors import ConfigError
from lichhook.install.copies.target import Target, foreign_options, options_end


class Env:
    """The environment variables and OS an install reads (tests pass their own)."""

    def __init__(self, environ: Optional[Mapping[str, str]] = None, windows: Optional[bool] = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.windows = (sys.platform == "win32") if windows is None else windows

    def get(self, name: str) -> Optional[str]:
        """The variable's value, or None when unset or blank."""
        value = self.environ.get(name, "")
        return value if value.strip() else None

    def home(self) -> str:
        """The user's home folder. Refuses a blank or relative one: configs written
        relative to wherever install happens to run would be configs nobody reads."""
        for name in (("USERPROFILE", "HOME") if self.windows else ("HOME",)):
            value = self.get(name)
            if value:
                break
        else:
            value = os.path.expanduser("~")
        if not value or not os.path.isabs(value) or value in ("/", "\\"):
            raise ConfigError(f"cannot tell your home folder (got {value!r}); set HOME"
                              f"{' or USERPROFILE' if self.windows else ''} to it and run again.")
        return value

    def home_or_none(self) -> Optional[str]:
        """The home folder, or None where ``home`` refuses it."""
        try:
            return self.home()
        except ConfigError:
            return None

    def config_home(self) -> str:
        """XDG_CONFIG_HOME, else ~/.config: opencode and Crush use it on every OS. A
        relative XDG_CONFIG_HOME is ignored, as the XDG spec asks."""
        value = self.get("XDG_CONFIG_HOME")
        return value if value and os.path.isabs(value) else os.path.join(self.home(), ".config")

    def which(self, program: str) -> Optional[str]:
        return shutil.which(program, path=self.environ.get("PATH", os.defpath))


class Registered:
    """One lichhook registration seen in a harness's config, for ``doctor``.
    ``additions``: what the user added to or changed in it, in words; ``words``:
    lichhook's subcommand words of the registration it is, as this release writes them
    (None when it is none of them, or is spelled as an earlier release did); ``foreign``:
    interpreter options before the archive that lichhook does not write (``-c ...``)."""

    def __init__(self, path: str, label: str, text: str, python: Optional[str], archive: Optional[str],
                 ours: bool = True, additions: Optional[List[str]] = None,
                 words: Optional[tuple] = None, foreign: Optional[List[str]] = None) -> None:
        self.path = path
        self.label = label
        self.text = text
        self.python = python
        self.archive = archive
        self.ours = ours
        self.additions = list(additions or ())
        self.words = words
        self.foreign = list(foreign or ())


class Harness:
    name = ""
    title = ""
    programs: tuple = ()  # executables whose presence on PATH means "installed"

    def __init__(self, env: Env) -> None:
        self.env = env

    def config_dir(self) -> str:
        """The harness's own config folder (a harness with several overrides ``config_dirs``)."""
        raise NotImplementedError

    def config_dirs(self) -> List[str]:
        """Folders whose existence means the harness is set up on this machine."""
        return [self.config_dir()]

    def detected(self) -> Optional[str]:
        """Why this harness counts as present (a folder or a program), or None."""
        for folder in self.config_dirs():
            if os.path.isdir(folder):
                return f"{folder} exists"
        for program in self.programs:
            found = self.env.which(program)
            if found:
                return f"{program} on PATH ({found})"
        return None

    def install(self, target: Target) -> List[Edit]:
        raise NotImplementedError

    def uninstall(self, target: Target) -> List[Edit]:
        raise NotImplementedError

    def registrations(self, target: Target) -> List[Registered]:
        """lichhook's entries in this harness's configs. Raises ConfigError when a config
        that could hold one cannot be read: then nobody can say none runs the archive."""
        return []

    def notes(self, target: Target) -> List[str]:
        """Sentences to print after an install changed something."""
        return []

    # Set by install when lich-plugin is to be removed from this harness first.
    replacing = False

    def after_install(self, target: Target, owners: object) -> List[str]:
        """What install does after writing this harness's files (a harness CLI's part);
        the sentences to print. Raises ConfigError when it fails."""
        return []

    def after_uninstall(self, target: Target) -> List[str]:
        """What uninstall does after writing this harness's files."""
        return []

    def checks(self, target: Target) -> List[tuple]:
        """(line, problem or None, fix) about the harness's own state of lichhook's
        entries (Codex: whether it trusts them), for doctor and after every install."""
        return []

    def mods(self) -> Optional[Tuple[dict, List[tuple]]]:
        """Whether the harness will load lichhook's mods, for doctor: (the facts, as doctor
        --json shows them; (line, problem or None, fix, cause) each). None: it has no mods."""
        return None

    def wanted(self, target: Target) -> Dict[str, List[entries.Wanted]]:
        """event -> the hook entries lichhook writes under it (empty: a harness whose
        hooks live in a module of lichhook's, not in entries of a config)."""
        return {}

    def missing(self, target: Target, found: Sequence[Registered]) -> List[str]:
        """The registrations none of ``found`` is, as written by this release, in
        words ("PreToolUse ('claude PreToolUse')")."""
        have = {(f.label, f.words) for f in found if f.ours}
        return [f"{event} ('{' '.join(w.sub)}')" for event, wanted in self.wanted(target).items()
                for w in wanted if (event, w.sub) not in have]


class EntryHarness(Harness):
    """A harness whose hooks are entries in its configs, one per registration of its
    descriptor: each installer renders a registration (``handler``) in its own shape."""

    def handler(self, target: Target, r: Registration, earlier: Sequence[tuple] = ()) -> entries.Wanted:
        """The entry of the registration ``r``, which an earlier release may have written
        with the words ``earlier``."""
        raise NotImplementedError

    def wanted(self, target: Target) -> Dict[str, List[entries.Wanted]]:
        """event -> the entries lichhook writes under it, in the descriptor's order."""
        out: Dict[str, List[entries.Wanted]] = {}
        for r in descriptor_rows(self.name):
            out.setdefault(r.event, []).append(self.handler(target, r, earlier_words(BY_PROVIDER[self.name], r)))
        return out

    def group(self, event: str) -> Optional[dict]:
        """The other keys of lichhook's matcher group on ``event``; None for an event
        whose list is flat (it holds the handlers themselves)."""
        if entries.is_flat(self.flat, event):
            return None
        # one group holds all the registrations on ``event``: the first one's matcher is theirs
        matcher = next((r.matcher for r in descriptor_rows(self.name) if r.event == event), None)
        return {} if matcher is None else {"matcher": matcher}

    # The JSON config of the hooks: its events under ``table``; ``flat``: the events whose
    # lists hold the handlers themselves (``entries.Flat``).
    table: Tuple[str, ...] = ("hooks",)
    flat: entries.Flat = False
    # lichhook's MCP server, ``lichhook`` under ``server_table`` of ``server_path()`` (the
    # hooks' config or one of its own, created with ``server_mode``).
    server_table: Tuple[str, ...] = ("mcpServers",)
    server_mode = 0o644

    def hooks_path(self) -> str:
        raise NotImplementedError

    def server_path(self) -> Optional[str]:
        """The JSON config of lichhook's MCP server; None: the harness keeps it elsewhere."""
        return None

    def json_edits(self, target: Target, install: bool = True) -> List[Edit]:
        """Edits writing lichhook's hooks and MCP server into the JSON configs, or, with
        ``install`` False, taking them out. The two changes below get, as ``arg``, the
        install transform's notes or the uninstall transform's keep (``json_edit``, ``removal``)."""
        hooks, mcp = self.hooks_path(), self.server_path()
        wanted = self.wanted(target) if install else {}

        def server_change(doc: Doc, arg: Any) -> None:
            if install:
                entries.install_server(doc, mcp or hooks, self.server_table, "lichhook", server_entry(target),
                                       target, arg)
            else:
                entries.remove_server(doc, self.server_table, "lichhook", target, arg)

        def hooks_change(doc: Doc, arg: Any) -> None:
            for event, handlers in wanted.items():
                entries.install_hooks(doc, hooks, self.table, event, handlers, self.group(event), target, arg)
            if not install:
                entries.remove_hooks(doc, self.table, target, arg, flat=self.flat)
            if mcp == hooks:
                server_change(doc, arg)

        make = json_edit if install else removal
        edits = [Edit(hooks, make(hooks, hooks_change))]
        if mcp is not None and mcp != hooks:
            edits.append(Edit(mcp, make(mcp, server_change), mode=self.server_mode))
        return edits

    def registrations(self, target: Target) -> List[Registered]:
        """lichhook's hooks and MCP server in the JSON configs."""
        hooks, mcp = self.hooks_path(), self.server_path()
        server = (self.server_table, "lichhook", server_entry(target))
        found = found_in_json(hooks, target, self.table, self.wanted(target), self.flat,
                              server if mcp == hooks else None)
        if mcp is not None and mcp != hooks:
            found += found_in_json(mcp, target, table=(), server=server)
        return found


# -- what a harness registers -----------------------------------------------------------


def descriptor_rows(name: str) -> List[Registration]:
    """The hook entries ``name``'s installer writes, from its descriptor (the one list)."""
    return registrations(BY_PROVIDER[name])


# -- JSON configs -------------------------------------------------------------------------


def json_edit(path: str, change: Callable[[Doc, List[str]], object]) -> Callable:
    """An install transform for a JSON config: ``change(doc, notes)`` edits it in place."""
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        return jsonedit.edit(raw, path, lambda doc: change(doc, notes))

    transform.keys_of = jsonedit.top_keys  # type: ignore[attr-defined]
    return transform


def _original(path: str) -> Optional[tuple]:
    """(bytes, Doc or None) of the file as it was before lichhook first changed it,
    from its backup; None without a backup."""
    # A backup that cannot be read (too large, a FIFO, no permission) is refused, naming
    # it: taken as absent, it would make a file the user had look like lichhook's own.
    raw = files.read(path + files.BACKUP_SUFFIX)
    if raw is None:
        return None
    try:
        return raw, jsonedit.parse(raw, path)
    except ConfigError:
        return raw, None


def removal(path: str, change: Callable[[Doc, Callable[[tuple], Optional[str]]], object]) -> Callable:
    """An uninstall transform for a JSON config. ``change(doc, keep)`` takes lichhook's
    entries out; ``keep`` says which emptied containers the user had, empty, before
    lichhook first changed the file (their text comes back as it was). When the whole
    object is left empty: a file lichhook created (no backup beside it) is deleted; a
    file that was blank or ``{}`` before gets its original bytes back."""
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is None:
            return None
        original = _original(path)
        before = original[1] if original is not None else None

        def keep(where: tuple) -> Optional[str]:
            if before is None or not all(isinstance(step, str) for step in where):
                return None
            node = before.at(where)
            if node is not None and node.kind in ("object", "array") and not node.children():
                return node.raw
            return None

        bom, doc = jsonedit.load(raw, path)
        text = doc.text
        change(doc, keep)
        if doc.text == text:
            return raw
        if doc.root is not None and not doc.root.members():
            if before is not None and (before.root is None or not before.root.members()):
                return original[0] if original is not None else raw  # blank or {} before lichhook: exactly that again
            if original is None or (before is not None and _only_lichhooks(before, change)):
                # lichhook created the file (a backup, if any, is of lichhook's own entries)
                return raw if os.path.islink(path) else None
        return bom + doc.text.encode("utf-8")

    transform.keys_of = jsonedit.top_keys  # type: ignore[attr-defined]
    return transform


def _only_lichhooks(doc: Doc, change: Callable) -> bool:
    """Whether taking lichhook's entries out of ``doc`` leaves nothing."""
    copy = Doc(doc.text)
    change(copy, lambda where: None)
    return copy.root is not None and not copy.root.members()


def read_json(path: str) -> Optional[Doc]:
    """The parsed config, or None when absent. Raises ConfigError when unreadable."""
    raw = files.read(path)
    return jsonedit.parse(raw, path) if raw is not None else None


def found_entry(found: list, path: str, label: str, node: entries.Node, target: Target,
                wanted: Sequence[entries.Wanted] = ()) -> None:
    """Record the handler or server at ``node`` when it runs this archive, or any
    lichhook archive."""
    text = entries.handler_strings(node)
    ours = target.owns(text)
    if not ours and "lichhook" not in text:
        return
    python, archive, foreign = read_words(command_words(entries.handler_dict(node), target.windows))
    added: List[str] = []
    words = None
    if ours:
        for w in wanted:
            written = entries.written_sub(node, w, target)
            if written is not None:
                added = entries.additions(node, w, target)
                words = w.sub if written == w.sub else None
                break
    found.append(Registered(path, label, text.replace("\n", " "), python, archive, ours, added, words, foreign))


def found_in_json(path: str, target: Target, table: Sequence[str] = ("hooks",),
                  wanted: Optional[Dict[str, List[entries.Wanted]]] = None, flat: entries.Flat = False,
                  server: Optional[tuple] = None) -> List[Registered]:
    """lichhook's handlers under every event of ``table`` and, with ``server`` =
    (table, name, Wanted), its MCP server. ``flat``: whether an event's list holds the
    handlers themselves rather than matcher groups (True, False, or the events that do).
    Raises ConfigError when unreadable."""
    found: list = []
    doc = read_json(path)
    if doc is None or doc.root is None:
        return found
    if table:
        events = doc.at(table)
        for member in events.members() if events is not None else []:
            for item in member.value.items():
                group = None if entries.is_flat(flat, member.key) else item.get("hooks")
                handlers = [item] if group is None else group.items()
                for handler in handlers:
                    if handler.kind == "object":
                        found_entry(found, path, member.key, handler, target, (wanted or {}).get(member.key, ()))
    if server is not None:
        where = (*server[0], server[1])
        node = doc.at(where)
        if node is not None and node.kind == "object":
            found_entry(found, path, ".".join(where), node, target, [server[2]])
    return found


def server_entry(target: Target, stdio_type: bool = True) -> entries.Wanted:
    """An MCP server running ``<python> -I -S <complete archive> mcp`` over stdio."""
    target = target.server()
    entry: Dict[str, object] = {"type": "stdio"} if stdio_type else {}
    entry.update({"command": target.python, "args": target.argv("mcp")[1:]})
    return entries.Wanted(("mcp",), entry, {"command": entries.Python(), "args": entries.Argv()})


# -- reading a registered command back ------------------------------------------------


def command_words(handler: dict, windows: bool) -> Optional[list]:
    """The words a handler runs (its exec form, or its line split), or None when unreadable."""
    command = handler.get("command")
    args = handler.get("args")
    if isinstance(command, str) and isinstance(args, list) and args and isinstance(args[0], str):
        return [command, *args]
    text = handler.get("commandWindows") if windows and isinstance(handler.get("commandWindows"), str) else command
    return quoting.split_words(text) if isinstance(text, str) else None


def read_words(words: Optional[list]) -> tuple:
    """(python, archive, options lichhook does not write) from a command's words; the
    interpreter's options between the Python and the archive are skipped."""
    if words is None or len(words) < 2:
        return None, None, []
    i = options_end(words, 1)
    archive = words[i] if i < len(words) and isinstance(words[i], str) else None
    return words[0], archive, foreign_options(words, 1)


def split_line(text: str) -> tuple:
    """(python, archive) from a command line lichhook wrote in any of its forms
    (``quoting.split_words``); the interpreter's options between the two are skipped."""
    return read_words(quoting.split_words(text))[:2]
