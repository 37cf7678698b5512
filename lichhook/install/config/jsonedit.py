"""Read a user's JSON config and change lichhook's part of it in place, with minimal text
edits: add, replace or remove one value, touching no byte outside it.

The file is never re-serialised: ``jsontext`` finds where each value stands and
``Doc`` changes only the text lichhook owns, so everything else (numbers, escapes,
key order, indentation, line endings, a final newline, a byte order mark) stays byte for
byte, and a file whose lichhook part is already right is not rewritten at all.

Values are addressed by paths of keys and indexes from the top. New text copies the
layout around the place it goes: an added member or item is separated from the last one
exactly as that one is from the one before it (same comma spacing, line ending and
indentation), its colon is spelled like its neighbour's, and a nested value is laid out
with the file's indent unit, or on one line in a one-line container. Non-ASCII text is
escaped when the file escapes it. Adding after the last child and removing that child
again gives back the original text; an emptied container is ``{}`` or ``[]`` until the
caller says otherwise.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional, Sequence, Union

from lichhook.install.config import jsontext
from lichhook.install.config.textblock import decode
from lichhook.install.errors import ConfigError

Path = Sequence[Union[str, int]]

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_INDENTED_LINE = re.compile(r"\n([ \t]+)[^ \t\r\n]")


class UnwritableValue(ValueError):
    """A value lichhook would add that no UTF-8 JSON text can hold (a lone surrogate
    from an undecodable path)."""


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < pos and text[end] in " \t":
        end += 1
    return text[start:end]


class Doc:
    """A JSON text being edited. ``root`` is None for a blank text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.root = jsontext.parse(text)
        # Escape non-ASCII only where the file does: it holds \u escapes and no raw
        # non-ASCII character.
        self.escape = "\\u" in text and not _NON_ASCII.search(text)

    # -- reading ------------------------------------------------------------------

    def at(self, path: Path) -> Optional[jsontext.Node]:
        node = self.root
        for step in path:
            if node is None:
                return None
            if isinstance(step, str):
                node = node.get(step)  # None in anything but an object
            else:
                items = node.items()
                node = items[step] if 0 <= step < len(items) else None
        return node

    def _must(self, path: Path, kind: Optional[str] = None) -> jsontext.Node:
        """The value at ``path`` (of ``kind`` when given); KeyError when there is none."""
        node = self.at(path)
        if node is None or (kind is not None and node.kind != kind):
            raise KeyError(path)
        return node

    def _child_index(self, path: Path) -> tuple:
        parent = self._must(path[:-1])
        step = path[-1]
        index = parent.index_of(step) if isinstance(step, str) else step
        if index is None or not 0 <= index < len(parent.children()):
            raise KeyError(path)
        return parent, index

    # -- layout -------------------------------------------------------------------

    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    def unit(self) -> str:
        """The file's indent step: the leading whitespace of its first indented line."""
        match = _INDENTED_LINE.search(self.text)
        return match.group(1) if match else "  "

    def _dumps(self, value: Any, unit: Optional[str], newline: str, indent: str, item_sep: str, colon: str) -> str:
        if unit is None:
            text = json.dumps(value, ensure_ascii=self.escape, separators=(item_sep, colon))
        else:
            text = json.dumps(value, ensure_ascii=self.escape, indent=unit, separators=(",", colon))
            text = text.replace("\n", newline + indent)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise UnwritableValue(f"{value!r} is not valid text (it holds an undecodable byte)") from None
        return text

    def _layout(self, container: jsontext.Node) -> dict:
        """How a new child of ``container`` is written, copied from its last children."""
        text = self.text
        kids = container.children()
        base = _line_indent(text, container.start)
        if not kids:
            inner = text[container.start + 1:container.end - 1]
            multiline = "\n" in inner or "\n" in (self.root.raw if self.root is not None else "")
            newline, unit = self.newline(), self.unit()
            return {"joint": None, "multiline": multiline, "newline": newline, "indent": base + unit,
                    "unit": unit, "item_sep": ", ", "colon": ": ", "base": base}
        last = kids[-1]
        colon = ": "
        if isinstance(last, jsontext.Member):
            spelled = text[last.key_end:last.value.start]
            if "\n" not in spelled and "\r" not in spelled:
                colon = spelled
        if len(kids) > 1:
            joint = text[kids[-2].end:last.start]
            lead = joint[joint.index(",") + 1:]
        else:
            lead = text[container.start + 1:last.start]
            if not lead and colon.endswith(" "):
                lead = " "  # one child in {"a": 1} style: space after the comma as after the colon
            joint = "," + lead
        multiline = "\n" in lead
        newline = "\r\n" if "\r\n" in lead else "\n"
        indent = lead[lead.rfind("\n") + 1:] if multiline else ""
        unit = indent[len(base):] if multiline and indent.startswith(base) and len(indent) > len(base) else self.unit()
        return {"joint": joint, "multiline": multiline, "newline": newline, "indent": indent, "unit": unit,
                "item_sep": "," + lead if not multiline else ", ", "colon": colon, "base": base}

    def _piece(self, layout: dict, key: Optional[str], value: Any) -> str:
        unit = layout["unit"] if layout["multiline"] else None
        colon = layout["colon"]
        rendered = self._dumps(value, unit, layout["newline"], layout["indent"], layout["item_sep"], colon)
        if key is None:
            return rendered
        return self._dumps(key, None, "", "", "", "") + colon + rendered

    # -- editing ------------------------------------------------------------------

    def _splice(self, start: int, end: int, new: str) -> None:
        self.text = self.text[:start] + new + self.text[end:]
        self.root = jsontext.parse(self.text)

    def ensure_root(self) -> None:
        """Give a blank text an empty object to add to, laid out over several lines."""
        if self.root is None:
            self._splice(0, len(self.text), "{" + self.newline() + "}" + self.newline())

    def _append(self, container: jsontext.Node, key: Optional[str], value: Any) -> None:
        layout = self._layout(container)
        piece = self._piece(layout, key, value)
        if layout["joint"] is not None:
            end = container.children()[-1].end
            self._splice(end, end, layout["joint"] + piece)
        elif layout["multiline"]:
            newline = layout["newline"]
            self._splice(container.start + 1, container.end - 1,
                         newline + layout["indent"] + piece + newline + layout["base"])
        else:
            self._splice(container.start + 1, container.end - 1, piece)

    def add_member(self, path: Path, key: str, value: Any) -> None:
        """Append ``"key": value`` to the object at ``path``."""
        self._append(self._must(path, "object"), key, value)

    def add_item(self, path: Path, value: Any) -> None:
        """Append ``value`` to the array at ``path``."""
        self._append(self._must(path, "array"), None, value)

    def replace(self, path: Path, value: Any) -> None:
        """Put ``value`` (a scalar, or a container laid out like the file) at ``path``."""
        node = self._must(path)
        multiline = "\n" in (self.root.raw if self.root is not None else "")
        unit = self.unit() if multiline else None
        text = self._dumps(value, unit, self.newline(), _line_indent(self.text, node.start), ", ", ": ")
        if text != node.raw:
            self._splice(node.start, node.end, text)

    def replace_items(self, path: Path, start: int, stop: int, values: Sequence[Any]) -> None:
        """Put the scalars ``values`` in place of items ``start`` to ``stop`` (at least
        one) of the array at ``path``, separated as its first two items are."""
        kids = self._must(path, "array").items()
        if not 0 <= start < stop <= len(kids):
            raise KeyError(path)
        sep = self.text[kids[0].end:kids[1].start] if len(kids) > 1 else ", "
        text = sep.join(self._dumps(v, None, "", "", ", ", ": ") for v in values)
        self._splice(kids[start].start, kids[stop - 1].end, text)

    def replace_raw(self, path: Path, raw: str) -> None:
        """Put the JSON text ``raw`` at ``path`` as it is."""
        node = self._must(path)
        self._splice(node.start, node.end, raw)

    def remove(self, path: Path) -> None:
        """Remove the member or item at ``path`` with the comma and spacing that joined
        it to its neighbour. The top-level value itself cannot be removed."""
        parent, index = self._child_index(path)
        kids = parent.children()
        if len(kids) == 1:
            self._splice(parent.start + 1, parent.end - 1, "")
        elif index > 0:
            self._splice(kids[index - 1].end, kids[index].end, "")
        else:
            self._splice(kids[0].start, kids[1].start, "")


def load(raw: Optional[bytes], path: str) -> tuple:
    """(byte order mark, Doc) for a JSON config whose top level is an object (or blank,
    or absent). Refuses anything else with ConfigError naming the file."""
    bom, text = decode(raw, path) if raw is not None else (b"", "")
    try:
        doc = Doc(text)
    except jsontext.JsonTextError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run again. It was left untouched.")
    if doc.root is not None and doc.root.kind != "object":
        raise ConfigError(f"{path} holds a JSON {doc.root.kind}, not an object; fix it, then run again. "
                          "It was left untouched.")
    return bom, doc


def parse(raw: bytes, path: str) -> Doc:
    return load(raw, path)[1]


def edit(raw: Optional[bytes], path: str, change: Callable[[Doc], object]) -> Optional[bytes]:
    """Apply ``change`` (which edits the Doc in place) to the file's bytes. Returns the
    original bytes object when nothing changed."""
    bom, doc = load(raw, path)
    before = doc.text
    try:
        change(doc)
    except UnwritableValue as exc:
        raise ConfigError(f"cannot write into {path}: {exc}. It was left untouched.")
    if doc.text == before:
        return raw
    return bom + doc.text.encode("utf-8")


def top_keys(raw: bytes) -> Optional[set]:
    """The names at the top level of a JSON config's object (empty for a blank file), or
    None when it cannot be read as one."""
    try:
        doc = parse(raw, "")
    except (ConfigError, RecursionError):
        return None
    if doc.root is None:
        return set()
    return {member.key for member in doc.root.members()}
