"""JSON text with positions: where each value of a config stands in its text.

lichhook never re-serialises a user's JSON. It finds the spans it must change and edits
the text there (``jsonedit``), so every byte it does not own stays as written: numbers
of any size or form (``1e400``, ``1e2``, ``1.10``, 20-digit integers), escapes (lone
surrogates such as ``"\\ud800"`` included), key order, duplicate keys, whitespace.

Values are read lazily: a container's children are located only when asked for. The
whole text is checked once against the JSON grammar (RFC 8259: no NaN, no comments, no
trailing commas) by the standard library's C scanner, with every number left as text;
nesting deeper than the scanner's recursion limit goes to an iterative checker, so any
depth Node's ``JSON.parse`` accepts is accepted here.
"""

from __future__ import annotations

import re
from json.decoder import JSONDecodeError, JSONDecoder
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed omits it
from typing import List, Optional

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonTextError(ValueError):
    """Text that is not JSON; ``line`` and ``column`` count from 1."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.message = message
        self.pos = pos
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{message} at line {self.line}, column {self.column}")


def _ignore(_value: object) -> None:
    return None


class _Constant(Exception):
    pass


def _refuse_constant(name: str) -> None:
    raise _Constant(name)


# Checks and skips a value without converting its numbers (no size limit, no rounding)
# or building objects. NaN and Infinity, which Python accepts and JSON does not, are refused.
_SKIPPER = JSONDecoder(parse_int=_ignore, parse_float=_ignore, parse_constant=_refuse_constant,
                       object_pairs_hook=_ignore)


def skip_ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string, never None


def value_end(text: str, pos: int) -> int:
    """Where the JSON value starting at ``pos`` ends. Raises JsonTextError."""
    try:
        return _SKIPPER.raw_decode(text, pos)[1]
    except RecursionError:
        return _deep_value_end(text, pos)
    except JSONDecodeError as exc:
        raise JsonTextError(exc.msg, text, exc.pos) from None
    except _Constant as exc:
        where = text.find(str(exc), pos)
        raise JsonTextError(f"{exc} is not a JSON value", text, where if where >= 0 else pos) from None


def _string_end(text: str, pos: int) -> int:
    try:
        return scanstring(text, pos + 1, True)[1]
    except JSONDecodeError as exc:
        raise JsonTextError(exc.msg, text, exc.pos) from None


def _after_key(text: str, pos: int) -> int:
    if text.startswith('"', pos):
        pos = skip_ws(text, _string_end(text, pos))
        if text.startswith(":", pos):
            return pos + 1
        raise JsonTextError("Expecting ':' delimiter", text, pos)
    raise JsonTextError("Expecting property name enclosed in double quotes", text, pos)


_DEEP_ENDS: dict = {}  # text -> {start: end}, for the last few texts
_DEEP_TEXTS = 4


def _deep_value_end(text: str, pos: int) -> int:
    """``_iterative_value_end``, remembered for the last few texts read: each node of a
    deeply nested value asks again where the value around it ends, and a config is read
    again (a new string, equal to the last) at each step of an edit. A few texts are
    kept, so memory stays bounded."""
    ends = _DEEP_ENDS.get(text)
    if ends is None:
        while len(_DEEP_ENDS) >= _DEEP_TEXTS:
            del _DEEP_ENDS[next(iter(_DEEP_ENDS))]
        ends = _DEEP_ENDS[text] = {}
    if pos not in ends:
        ends[pos] = _iterative_value_end(text, pos)
    return ends[pos]


# A run of brackets and the white space between them, in one match of a character class
# (sre's fastest loop).
_OPEN_RUN = re.compile(r"[\[ \t\n\r]*")
_CLOSE_RUN = re.compile(r"[\] \t\n\r]*")


def _iterative_value_end(text: str, pos: int) -> int:
    """``value_end`` without recursion, for nesting of any depth.

    The containers still open are a stack of runs, [closer, count]: a run of ``[`` (or of
    ``]``) is taken in one regular-expression match, so an array nested 200,000 deep costs
    a few matches, not a Python step per bracket."""
    closers: list = []  # [[closing character, how many], ...]
    n = len(text)

    def push(close: str, count: int) -> None:
        if closers and closers[-1][0] == close:
            closers[-1][1] += count
        else:
            closers.append([close, count])

    while True:
        pos = skip_ws(text, pos)
        c = text[pos] if pos < n else ""
        if c == "[":
            run = _OPEN_RUN.match(text, pos)
            assert run is not None  # text[pos] is "["
            opened = run.group().count("[")
            pos = run.end()
            if text.startswith("]", pos):  # the innermost is empty: it is the value
                if opened > 1:
                    push("]", opened - 1)
                pos += 1
            else:
                push("]", opened)
                continue
        elif c == "{":
            inner = skip_ws(text, pos + 1)
            if text.startswith("}", inner):
                pos = inner + 1
            else:
                push("}", 1)
                pos = _after_key(text, inner)
                continue
        elif c == '"':
            pos = _string_end(text, pos)
        elif c in "-0123456789" and c:
            match = _NUMBER.match(text, pos)
            if not match:
                raise JsonTextError("Expecting value", text, pos)
            pos = match.end()
        else:
            for word in _LITERALS:
                if text.startswith(word, pos):
                    pos += len(word)
                    break
            else:
                raise JsonTextError("Expecting value", text, pos)
        while closers:
            pos = skip_ws(text, pos)
            c = text[pos] if pos < n else ""
            top = closers[-1]
            if c == ",":
                pos = pos + 1
                if top[0] == "}":
                    pos = _after_key(text, skip_ws(text, pos))
                break
            if c == top[0]:
                if c == "]":
                    run = _CLOSE_RUN.match(text, pos)
                    assert run is not None
                    found = run.group().count("]")
                    closed = min(found, top[1])
                    if closed == found:  # just past the run's last bracket, not its white space
                        pos += len(run.group().rstrip(" \t\n\r"))
                    else:  # more brackets than open arrays: the next one is an error, found below
                        for _ in range(closed):
                            pos = text.index("]", pos) + 1
                else:
                    closed = 1
                    pos += 1
                top[1] -= closed
                if not top[1]:
                    closers.pop()
                continue
            raise JsonTextError("Expecting ',' delimiter", text, pos)
        else:
            return pos


class Member:
    """One ``"key": value`` of an object: ``start`` is where its key's quote stands."""

    __slots__ = ("key", "start", "key_end", "value")

    def __init__(self, key: str, start: int, key_end: int, value: Node) -> None:
        self.key = key
        self.start = start
        self.key_end = key_end
        self.value = value

    @property
    def end(self) -> int:
        return self.value.end


class Node:
    """One value in ``text``, from ``start`` to ``end``."""

    __slots__ = ("text", "start", "end", "_children")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.start = start
        self.end = end
        self._children: Optional[list] = None

    @property
    def kind(self) -> str:
        c = self.text[self.start]
        if c == "{":
            return "object"
        if c == "[":
            return "array"
        if c == '"':
            return "string"
        if c in "tf":
            return "boolean"
        if c == "n":
            return "null"
        return "number"

    @property
    def raw(self) -> str:
        return self.text[self.start:self.end]

    def _scan(self) -> list:
        if self._children is not None:
            return self._children
        text, obj = self.text, self.kind == "object"
        children: list = []
        pos = skip_ws(text, self.start + 1)
        if text[pos] not in "}]":
            while True:
                if obj:
                    key, key_end = scanstring(text, pos + 1, True)
                    value_start = skip_ws(text, skip_ws(text, key_end) + 1)
                    child = Node(text, value_start, value_end(text, value_start))
                    children.append(Member(key, pos, key_end, child))
                else:
                    child = Node(text, pos, value_end(text, pos))
                    children.append(child)
                pos = skip_ws(text, child.end)
                if text[pos] != ",":
                    break
                pos = skip_ws(text, pos + 1)
        self._children = children
        return children

    def members(self) -> List[Member]:
        """An object's members in order (duplicates included); [] for any other value."""
        return self._scan() if self.kind == "object" else []

    def items(self) -> List[Node]:
        """An array's items in order; [] for any other value."""
        return self._scan() if self.kind == "array" else []

    def children(self) -> list:
        """Members of an object, items of an array."""
        return self._scan() if self.kind in ("object", "array") else []

    def get(self, key: str) -> Optional[Node]:
        """The value of ``key`` as JavaScript reads it: the last of duplicate keys."""
        found = None
        for member in self.members():
            if member.key == key:
                found = member.value
        return found

    def index_of(self, key: str) -> Optional[int]:
        found = None
        for i, member in enumerate(self.members()):
            if member.key == key:
                found = i
        return found

    def string(self) -> Optional[str]:
        """A string's value (lone surrogate escapes kept as such), else None."""
        if self.kind != "string":
            return None
        return scanstring(self.text, self.start + 1, True)[0]

    def strings(self) -> Optional[List[Optional[str]]]:
        """An array's items as strings (None for an item that is not one), else None."""
        if self.kind != "array":
            return None
        return [item.string() for item in self.items()]


def parse(text: str) -> Optional[Node]:
    """The top-level value of ``text``, or None for a blank text. Raises JsonTextError."""
    start = skip_ws(text, 0)
    if start == len(text):
        return None
    end = value_end(text, start)
    rest = skip_ws(text, end)
    if rest != len(text):
        raise JsonTextError("Extra data after the JSON value", text, rest)
    return Node(text, start, end)
