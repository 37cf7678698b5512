"""lichhook's entries in a JSON config: hook handlers (in Claude-style matcher groups or
flat lists) and MCP servers. Found, added when missing, updated, removed.

An entry is lichhook's when one of its command strings names one of lichhook's archive
copies. In it lichhook owns four things: the Python, the interpreter options between the
Python and the archive (``-I -S -c <launcher>``; ``-I -S`` or none in entries earlier
releases wrote), the archive path and its own subcommand words (``claude-code stop``,
``mcp``). Everything else is the user's once written: words after ours on the command
line (a waits folder), other keys (``env``, ``cwd``), an edited ``timeout`` or
``matcher``. The subcommand words an earlier release wrote for an entry
(``Wanted.earlier``: the bare ``crush`` where this release writes ``crush PreToolUse``)
are lichhook's too, and are rewritten in place. A reinstall rewrites only the owned
words, so the user's additions stay as they are; an entry whose owned words cannot be
told apart (a wrapper command before ours, say) is left alone, and the install says so.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Union

from lichhook.install.config.jsonedit import Doc
from lichhook.install.errors import ConfigError
from lichhook.install.config.jsontext import Node
from lichhook.install.quoting import split_words
from lichhook.install.copies.target import Target, is_launcher

COMMAND_KEYS = ("command", "commandWindows", "command_windows")

# Whether an event's list holds handlers themselves, not matcher groups: for every
# event (a bool), or for the events named.
Flat = Union[bool, Collection[str]]


def is_flat(flat: Flat, event: str) -> bool:
    return flat if isinstance(flat, bool) else event in flat


# -- how lichhook's part of a field is spelled -----------------------------------------


class Field:
    """One owned field of an entry."""

    def locate(self, node: Node, target: Target) -> Optional[tuple]:
        """(python or None, words after the archive) when the field runs the archive."""
        raise NotImplementedError

    def updated(self, node: Node, target: Target, sub: Sequence[str],
                to: Optional[Sequence[str]] = None) -> Optional[tuple]:
        """("same",) when the field is current; ("set", value) to update it, or
        ("items", start, stop, values) to put values in place of a run of a list's items;
        None when lichhook's part of it cannot be told apart. ``sub``: lichhook's words
        as written there; ``to``: the words to write instead (an earlier release's bare
        ``crush`` becoming ``crush PreToolUse``), when they differ."""
        raise NotImplementedError

    def additions(self, node: Node, target: Target, sub: Sequence[str]) -> List[str]:
        return []


def owned_words(words: Sequence[Optional[str]], target: Target) -> Optional[tuple]:
    """(index of the Python or -1, index of the archive) in a command's words: the first
    word naming one of lichhook's archives, and the word before the options that precede
    it (lichhook's launcher among them); None when no word names an archive."""
    def option(word: Optional[str]) -> bool:
        return isinstance(word, str) and word.startswith("-")

    for i, word in enumerate(words):
        if isinstance(word, str) and target.archive_of(word):
            j = i - 1
            while j >= 0:
                if j >= 1 and words[j - 1] == "-c" and is_launcher(words[j]):
                    j -= 2
                elif option(words[j]) and words[j] != "-c":
                    j -= 1
                else:
                    break
            return j, i
    return None


class Line(Field):
    """A command line: ``<python> <archive> <sub...>`` in a shell's quoting, with any
    words the user appended after ours. ``form``: "sh" (POSIX shells) or "windows"
    (the line PowerShell and cmd.exe both read)."""

    def __init__(self, form: str) -> None:
        self.form = form

    def render(self, target: Target, python: str, words: Sequence[str]) -> str:
        t = target.with_python(python)
        return t.sh_line(*words) if self.form == "sh" else t.windows_line(*words)[0]

    def split(self, text: str) -> Optional[List[str]]:
        if self.form == "sh":
            try:
                return shlex.split(text)
            except ValueError:
                return None
        return split_words(text)

    def _parts(self, text: Optional[str], target: Target) -> Optional[tuple]:
        """(words, index of the Python or -1, index of the archive word) or None."""
        words = self.split(text) if text is not None else None
        found = owned_words(words, target) if words else None
        return (words, *found) if found is not None else None

    def locate(self, node: Node, target: Target) -> Optional[tuple]:
        return self.locate_text(node.string(), target)

    def locate_text(self, text: Optional[str], target: Target) -> Optional[tuple]:
        """(python or None, words after the archive) when ``text`` runs the archive."""
        parts = self._parts(text, target)
        if parts is None:
            return None
        words, py, i = parts
        return (words[py] if py >= 0 else None), words[i + 1:]

    def _extras(self, old: str, target: Target, sub: Sequence[str]) -> Optional[tuple]:
        """(old python, the user's text after our words, the same as words) or None."""
        parts = self._parts(old, target)
        if parts is None or parts[1] < 0:
            return None
        words, py, i = parts
        if words[i + 1:i + 1 + len(sub)] != list(sub):
            return None
        python = words[py]
        prefix = self.render(target, python, sub)
        if old.startswith(prefix) and (len(old) == len(prefix) or old[len(prefix)] in " \t"):
            return python, old[len(prefix):], words[i + 1 + len(sub):]
        if py == 0:
            # our words spelled another way (an older release's quoting, or no options):
            # nothing else precedes them, so the line can be written again with the
            # user's words after
            return python, None, words[i + 1 + len(sub):]
        return None  # something stands before the Python (a wrapper): not ours to rewrite

    def updated_text(self, old: str, target: Target, sub: Sequence[str],
                     to: Optional[Sequence[str]] = None) -> Optional[str]:
        """The line with lichhook's words brought up to date (``sub`` as written
        becoming ``to``) and the user's kept, or None when lichhook's words cannot be
        told apart."""
        found = self._extras(old, target, sub)
        if found is None:
            return None
        _, tail, extra_words = found
        words = list(sub if to is None else to)
        if tail is not None:
            return self.render(target, target.python, words) + tail
        return self.render(target, target.python, [*words, *extra_words])

    def updated(self, node: Node, target: Target, sub: Sequence[str],
                to: Optional[Sequence[str]] = None) -> Optional[tuple]:
        old = node.string()
        new = self.updated_text(old, target, sub, to) if old is not None else None
        if new is None:
            return None
        return ("same",) if new == old else ("set", new)

    def additions_text(self, old: str, target: Target, sub: Sequence[str]) -> List[str]:
        found = self._extras(old, target, sub)
        if found is None:
            return [f"a command lichhook cannot update: {old!r}"]
        tail, words = found[1], found[2]
        text = tail.strip() if tail is not None else " ".join(words)
        return [f"arguments after lichhook's: {text}"] if text else []

    def additions(self, node: Node, target: Target, sub: Sequence[str]) -> List[str]:
        old = node.string()
        return self.additions_text(old, target, sub) if old is not None else ["a command that is not a string"]


class Python(Field):
    """A field holding only the Python (the exec form's and an MCP server's ``command``)."""

    def locate(self, node: Node, target: Target) -> Optional[tuple]:
        return None

    def updated(self, node: Node, target: Target, sub: Sequence[str],
                to: Optional[Sequence[str]] = None) -> Optional[tuple]:
        value = node.string()
        if value is None:
            return None
        return ("same",) if value == target.python else ("set", target.python)


def archive_index(items: Any, target: Target) -> Optional[int]:
    """Where the archive stands in an argument list: after nothing but the interpreter's
    options and lichhook's launcher (``owned_words`` with no Python before them), else None."""
    found = owned_words(items, target) if isinstance(items, list) else None
    return found[1] if found is not None and found[0] < 0 else None


class Argv(Field):
    """A list ``[<options...>, <archive>, <sub...>]``, then any arguments the user added."""

    def locate(self, node: Node, target: Target) -> Optional[tuple]:
        items = node.strings()
        i = archive_index(items, target)
        return None if i is None else (None, items[i + 1:])  # type: ignore[index]

    def updated(self, node: Node, target: Target, sub: Sequence[str],
                to: Optional[Sequence[str]] = None) -> Optional[tuple]:
        items = node.strings()
        i = archive_index(items, target)
        if i is None or items[i + 1:i + 1 + len(sub)] != list(sub):  # type: ignore[index]
            return None
        wanted = [*target.options(*(sub if to is None else to)), target.archive]
        if to is not None and list(to) != list(sub):
            return ("items", 0, i + 1 + len(sub), [*wanted, *to])
        return ("same",) if items[:i + 1] == wanted else ("items", 0, i + 1, wanted)  # type: ignore[index]

    def additions(self, node: Node, target: Target, sub: Sequence[str]) -> List[str]:
        items = node.strings() or []
        i = archive_index(items, target)
        extra = items[i + 1 + len(sub):] if i is not None else []
        if not extra:
            return []
        return ["arguments after lichhook's: " + " ".join(i if isinstance(i, str) else "<not a string>" for i in extra)]


class Wanted:
    """One entry lichhook registers: ``entry`` as first written, ``sub`` its subcommand
    words, ``fields`` the keys it owns (first one read to recognise the entry),
    ``earlier`` the other subcommand words an earlier release wrote for it (updated to
    ``sub`` in place)."""

    def __init__(self, sub: Sequence[str], entry: Dict[str, Any], fields: Mapping[str, Field],
                 earlier: Sequence[Sequence[str]] = ()) -> None:
        self.sub = tuple(sub)
        self.entry = entry
        self.fields = fields
        self.earlier = tuple(tuple(words) for words in earlier)


# -- reading entries ---------------------------------------------------------------------


def command_strings(handler: Mapping[str, Any]) -> str:
    """Every command-like string of a handler or server (plain values), joined: what
    marks it as ours."""
    args = handler.get("args")
    parts = [handler.get(key) for key in COMMAND_KEYS] + (args if isinstance(args, list) else [])
    return "\n".join(p for p in parts if isinstance(p, str))


def handler_dict(node: Node) -> dict:
    """The string fields of a handler, as ``harness.command_words`` reads them."""
    out: dict = {}
    for key in COMMAND_KEYS:
        value = node.get(key)
        if value is not None and value.kind == "string":
            out[key] = value.string()
    args = node.get("args")
    if args is not None and args.kind == "array":
        out["args"] = args.strings()
    return out


def handler_strings(node: Optional[Node]) -> str:
    """``command_strings`` of a handler or server in a JSON config."""
    return command_strings(handler_dict(node)) if node is not None else ""


def is_ours(node: Optional[Node], target: Target) -> bool:
    return node is not None and node.kind == "object" and target.owns(handler_strings(node))


def written_sub(node: Optional[Node], wanted: Wanted, target: Target) -> Optional[tuple]:
    """The subcommand words of ``wanted`` as ``node`` spells them (``wanted.sub``, or one
    of its ``earlier`` forms), or None when ``node`` is not lichhook's entry for it."""
    if node is None or not is_ours(node, target):
        return None
    for key, field in wanted.fields.items():
        value = node.get(key)
        located = field.locate(value, target) if value is not None else None
        if located is not None:
            for sub in (wanted.sub, *wanted.earlier):
                if located[1][:len(sub)] == list(sub):
                    return sub
            return None
    return None


def _same(node: Node, value: Any) -> bool:
    """Whether the JSON at ``node`` means ``value`` (scalars; containers by their text)."""
    if isinstance(value, str):
        return node.string() == value
    return node.raw == json.dumps(value)


def additions(node: Node, wanted: Wanted, target: Target) -> List[str]:
    """What the user added to or changed in lichhook's entry, in words."""
    out: List[str] = []
    sub = written_sub(node, wanted, target) or wanted.sub
    for key, field in wanted.fields.items():
        value = node.get(key)
        if value is not None:
            out.extend(field.additions(value, target, sub))
    for member in node.members():
        if member.key in wanted.fields:
            continue
        if member.key not in wanted.entry:
            out.append(f"{member.key!r} added")
        elif not _same(member.value, wanted.entry[member.key]):
            out.append(f"{member.key} {member.value.raw} (lichhook writes {json.dumps(wanted.entry[member.key])})")
    return list(dict.fromkeys(out))


def _dotted(path: Sequence) -> str:
    return ".".join(str(p) for p in path) or "the top level"


# -- changing entries --------------------------------------------------------------------


def add_at(doc: Doc, table: Sequence[str], key: str, value: Any, path: str) -> None:
    """Set ``table...[key] = value`` where ``key`` is absent, creating the missing
    objects of ``table`` on the way (added after the last member of each)."""
    doc.ensure_root()
    depth = 0
    while depth < len(table):
        node = doc.at(table[:depth + 1])
        if node is None:
            break
        if node.kind != "object":
            raise ConfigError(f"{path}: {_dotted(table[:depth + 1])} is not an object; fix it, then run again. "
                              "It was left untouched.")
        depth += 1
    for name in reversed(table[depth:]):
        value, key = {key: value}, name
    doc.add_member(table[:depth], key, value)


def update(doc: Doc, where: Sequence, wanted: Wanted, target: Target, label: str, path: str, notes: List[str]) -> None:
    """Bring lichhook's owned fields of the entry at ``where`` up to date, keeping the rest."""
    node = doc.at(where)
    sub = written_sub(node, wanted, target) or wanted.sub
    plan: List[tuple] = []
    for key, field in wanted.fields.items():
        value = node.get(key) if node is not None else None
        if value is None:
            plan.append((key, "add"))
            continue
        step = field.updated(value, target, sub, wanted.sub)
        if step is None:
            text = handler_strings(node).replace("\n", " ")
            notes.append(f"left your changed {label} in {path} as it is: lichhook cannot tell its own words in "
                         f"{text!r}. To update it, remove that entry and install again.")
            return
        if step[0] != "same":
            plan.append((key, *step))
    for key, kind, *args in plan:
        if kind == "add":
            doc.add_member(where, key, wanted.entry[key])
        elif kind == "set":
            doc.replace((*where, key), args[0])
        else:  # "items": a run of a list's items
            doc.replace_items((*where, key), *args)


def _handler_paths(doc: Doc, event_path: Sequence, flat: bool) -> List[tuple]:
    out: List[tuple] = []
    node = doc.at(event_path)
    if node is None or node.kind != "array":
        return out
    for gi, item in enumerate(node.items()):
        if flat:
            if item.kind == "object":
                out.append((*event_path, gi))
            continue
        handlers = item.get("hooks") if item.kind == "object" else None
        if handlers is not None and handlers.kind == "array":
            out.extend((*event_path, gi, "hooks", hi) for hi, h in enumerate(handlers.items()) if h.kind == "object")
    return out


def install_hooks(doc: Doc, path: str, table: Sequence[str], event: str, wanted: List[Wanted],
                  group: Optional[dict], target: Target, notes: List[str]) -> None:
    """Make lichhook's handlers under ``event`` match ``wanted``: update the ones there,
    add the missing ones (into lichhook's own group when it has one). ``group``: the
    other keys of a new matcher group, or None for a flat handler list."""
    event_path = (*table, event)
    node = doc.at(event_path)
    if node is None:
        entries = [w.entry for w in wanted]
        add_at(doc, table, event, [dict(group, hooks=entries)] if group is not None else entries, path)
        return
    if node.kind != "array":
        raise ConfigError(f"{path}: {_dotted(event_path)} is not a list; fix it, then run again. It was left untouched.")
    missing = []
    for w in wanted:
        found = [p for p in _handler_paths(doc, event_path, group is None)
                 if written_sub(doc.at(p), w, target) is not None]
        if not found:
            missing.append(w)
        for where in found:
            update(doc, where, w, target, f"{event} entry", path, notes)
    if not missing:
        return
    if group is None:
        for w in missing:
            doc.add_item(event_path, w.entry)
        return
    for where in _handler_paths(doc, event_path, False):
        if is_ours(doc.at(where), target):
            for w in missing:
                doc.add_item(where[:-1], w.entry)
            return
    doc.add_item(event_path, dict(group, hooks=[w.entry for w in missing]))


def install_server(doc: Doc, path: str, table: Sequence[str], name: str, wanted: Wanted,
                   target: Target, notes: List[str]) -> None:
    target = target.server()  # a long-running server runs the complete archive
    where = (*table, name)
    node = doc.at(where)
    if node is None:
        add_at(doc, table, name, wanted.entry, path)
        return
    if not is_ours(node, target):
        notes.append(f"{path} already has an MCP server named {name!r} that does not run {target.archive}; "
                     "left it as it is. Remove or rename it, then install again, to register lichhook's.")
        return
    update(doc, where, wanted, target, f"MCP server {_dotted(where)}", path, notes)


# -- removing entries ---------------------------------------------------------------------


def remove_pruning(doc: Doc, where: Sequence, keep: Callable[[tuple], Optional[str]]) -> None:
    """Remove the value at ``where``; then each container above it that this left
    empty is removed as well, unless ``keep`` gives the text it had before lichhook
    first changed the file (a user's own empty ``"Stop": []``), which is put back."""
    doc.remove(where)
    above = tuple(where[:-1])
    while above:
        node = doc.at(above)
        if node is None or node.children():
            return
        restored = keep(above)
        if restored is not None:
            doc.replace_raw(above, restored)
            return
        doc.remove(above)
        above = above[:-1]


def remove_hooks(doc: Doc, table: Sequence[str], target: Target, keep: Callable[[tuple], Optional[str]],
                 flat: Flat = False) -> None:
    """Take every handler of lichhook out of every event of ``table`` (so that one an
    earlier release registered goes too); a group left without handlers goes, and so
    does a list or table only lichhook's removal emptied."""
    node = doc.at(tuple(table))
    members = node.members() if node is not None and node.kind == "object" else []
    for event in dict.fromkeys(m.key for m in members):
        event_path = (*table, event)
        flat_here = is_flat(flat, event)
        while True:
            mine = [p for p in _handler_paths(doc, event_path, flat_here) if is_ours(doc.at(p), target)]
            if not mine:
                break
            where = mine[-1]
            if flat_here:
                remove_pruning(doc, where, keep)
                continue
            group = where[:-2]
            handlers = doc.at(where[:-1])
            if handlers is not None and len(handlers.items()) == 1:
                remove_pruning(doc, group, keep)
            else:
                doc.remove(where)


def remove_server(doc: Doc, table: Sequence[str], name: str, target: Target,
                  keep: Callable[[tuple], Optional[str]]) -> None:
    where = (*table, name)
    if is_ours(doc.at(where), target):
        remove_pruning(doc, where, keep)
