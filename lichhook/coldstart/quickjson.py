"""``json.loads`` and ``json.dumps`` for the plain JSON hooks exchange, without ``json``.

``import json`` costs about 5 ms of CPU at every start (its decoder and encoder import
``re`` and compile their patterns with it): a third to a half of what an empty zipapp
costs to start, on every Python 3.9 to 3.15. A hook reads one small JSON object and
writes one; this module does both with ``str`` methods alone (public, and the same on
every Python). Anything it does not read or write exactly as ``json`` would (NaN, a BOM,
a number it cannot tell, a subclass, deep nesting, a text with many strings in it, an
error of any kind) is handed to ``json`` itself, so every value, exception and message
is ``json``'s own. ``tests/test_coldstart.py`` holds both functions equal to ``json``'s
and makes each way of handing over happen. ``json_or_none`` is every reader's way of
taking a file's bytes as JSON or as nothing.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple

_WHITESPACE = " \t\n\r"  # what json skips between tokens
_DIGITS = "0123456789"
_HEX = "0123456789abcdefABCDEF"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# Texts with more strings and escapes than this go to json: its C scanner reads them
# faster than this module once its import is paid.
MAX_STEPS = 4000
_MAX_DEPTH = 100  # deeper than any payload or document lichhook reads or writes


class Unplain(Exception):
    """Something this module does not read or write as json would: json decides."""


def loads(text: str, *, parse_int: "Optional[Callable[[str], object]]" = None) -> object:
    """``json.loads(text, parse_int=parse_int)`` for a ``str``."""
    if type(text) is str and text.count('"') + text.count("\\") <= MAX_STEPS:
        try:
            value, end = _value(text, _skip(text, 0), parse_int or int, 0)
            if _skip(text, end) == len(text):
                return value
        except (Unplain, IndexError, ValueError):
            pass
    import json

    return json.loads(text, parse_int=parse_int)


def json_or_none(raw: bytes) -> object:
    """The JSON ``raw`` holds, or None when it is not UTF-8 JSON."""
    try:
        return loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WHITESPACE:
        i += 1
    return i


def _value(text: str, i: int, parse_int: "Callable[[str], object]", depth: int) -> "Tuple[object, int]":
    c = text[i]
    if c == '"':
        return _string(text, i + 1)
    if c == "{" or c == "[":
        if depth >= _MAX_DEPTH:
            raise Unplain
        return (_object if c == "{" else _array)(text, _skip(text, i + 1), parse_int, depth + 1)
    if c == "-" or c in _DIGITS:
        return _number(text, i, parse_int)
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, i):
            return value, i + len(word)
    raise Unplain  # NaN, Infinity, or not JSON


def _object(text: str, i: int, parse_int: "Callable[[str], object]", depth: int) -> "Tuple[dict, int]":
    found: dict = {}
    if text[i] == "}":
        return found, i + 1
    while True:
        if text[i] != '"':
            raise Unplain
        key, i = _string(text, i + 1)
        i = _skip(text, i)
        if text[i] != ":":
            raise Unplain
        found[key], i = _value(text, _skip(text, i + 1), parse_int, depth)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
        elif text[i] == "}":
            return found, i + 1
        else:
            raise Unplain


def _array(text: str, i: int, parse_int: "Callable[[str], object]", depth: int) -> "Tuple[list, int]":
    found: list = []
    if text[i] == "]":
        return found, i + 1
    while True:
        value, i = _value(text, i, parse_int, depth)
        found.append(value)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
        elif text[i] == "]":
            return found, i + 1
        else:
            raise Unplain


def _plain_chars(piece: str) -> str:
    """``piece``, which json refuses inside a string when it holds a control character."""
    if not piece.isprintable() and any(c < " " for c in piece):
        raise Unplain
    return piece


def _hex4(text: str, i: int) -> int:
    digits = text[i:i + 4]
    if len(digits) != 4 or not all(c in _HEX for c in digits):
        raise Unplain
    return int(digits, 16)


def _string(text: str, i: int) -> "Tuple[str, int]":
    """The string whose first character is at ``i`` (after its quote), and where it ends."""
    end = text.find('"', i)
    if end < 0:
        raise Unplain
    if "\\" not in text[i:end]:
        return _plain_chars(text[i:end]), end + 1
    parts = []
    while True:
        end, escape = text.find('"', i), text.find("\\", i)
        if end < 0:
            raise Unplain
        if escape < 0 or end < escape:
            parts.append(_plain_chars(text[i:end]))
            return "".join(parts), end + 1
        parts.append(_plain_chars(text[i:escape]))
        kind = text[escape + 1]
        if kind == "u":
            code, i = _hex4(text, escape + 2), escape + 6
            if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", i):
                low = _hex4(text, i + 2)
                if 0xDC00 <= low <= 0xDFFF:  # a pair: one character, as json joins it
                    code, i = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), i + 6
            parts.append(chr(code))
        elif kind in _ESCAPES:
            parts.append(_ESCAPES[kind])
            i = escape + 2
        else:
            raise Unplain


def _number(text: str, i: int, parse_int: "Callable[[str], object]") -> "Tuple[object, int]":
    j = i + 1 if text[i] == "-" else i
    if text[j] == "0":
        j += 1
    elif text[j] in _DIGITS:
        while j < len(text) and text[j] in _DIGITS:
            j += 1
    else:
        raise Unplain  # -Infinity, or not JSON
    whole = j
    if j < len(text) and text[j] == ".":
        j += 1
        if j >= len(text) or text[j] not in _DIGITS:
            raise Unplain
        while j < len(text) and text[j] in _DIGITS:
            j += 1
    if j < len(text) and text[j] in "eE":
        j += 1
        if j < len(text) and text[j] in "+-":
            j += 1
        if j >= len(text) or text[j] not in _DIGITS:
            raise Unplain
        while j < len(text) and text[j] in _DIGITS:
            j += 1
    if j == whole:
        return parse_int(text[i:j]), j
    return float(text[i:j]), j


# --- writing ---------------------------------------------------------------------------------

_NAMED = {None: "null", True: "true", False: "false"}
_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def dumps(obj: object, *, separators: "Optional[Tuple[str, str]]" = None, ensure_ascii: bool = True,
          indent: "Optional[int]" = None) -> str:
    """``json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent)``."""
    if indent is None or (type(indent) is int and indent >= 0):
        default = (", ", ": ") if indent is None else (",", ": ")
        item_separator, key_separator = separators if separators is not None else default
        out: "List[str]" = []
        try:
            _write(obj, out, ensure_ascii, item_separator, key_separator,
                   None if indent is None else " " * indent, 0)
            return "".join(out)
        except Unplain:
            pass
    import json

    return json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent)


def _encode_str(text: str, ensure_ascii: bool) -> str:
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    out = ['"']
    for c in text:
        if c in _SHORT:
            out.append(_SHORT[c])
        elif c < " " or (ensure_ascii and c > "~"):
            code = ord(c)
            if code > 0xFFFF:  # as a pair of surrogates, as json writes it
                code -= 0x10000
                out.append("\\u%04x\\u%04x" % (0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF)))
            else:
                out.append("\\u%04x" % code)
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _write(obj: object, out: "List[str]", ensure_ascii: bool, item_separator: str, key_separator: str,
           step: "Optional[str]", depth: int) -> None:
    kind = type(obj)
    if kind is str:
        out.append(_encode_str(obj, ensure_ascii))  # type: ignore[arg-type]
    elif obj is None or obj is True or obj is False:
        out.append(_NAMED[obj])  # type: ignore[index]
    elif kind is int:
        out.append(int.__repr__(obj))  # type: ignore[arg-type]
    elif kind is float and obj == obj and obj not in (float("inf"), float("-inf")):
        out.append(float.__repr__(obj))  # type: ignore[arg-type]
    elif kind is list or kind is tuple or kind is dict:
        if not obj:
            out.append("{}" if kind is dict else "[]")
            return
        if depth >= _MAX_DEPTH:
            raise Unplain  # deeper than lichhook writes, or a cycle: json says which
        inner = item_separator if step is None else item_separator + "\n" + step * (depth + 1)
        out.append("{" if kind is dict else "[")
        if step is not None:
            out.append("\n" + step * (depth + 1))
        first = True
        if kind is dict:
            for key, value in obj.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise Unplain  # json turns such keys into strings its own way
                if not first:
                    out.append(inner)
                first = False
                out.append(_encode_str(key, ensure_ascii) + key_separator)
                _write(value, out, ensure_ascii, item_separator, key_separator, step, depth + 1)
        else:
            for value in obj:  # type: ignore[attr-defined]
                if not first:
                    out.append(inner)
                first = False
                _write(value, out, ensure_ascii, item_separator, key_separator, step, depth + 1)
        if step is not None:
            out.append("\n" + step * depth)
        out.append("}" if kind is dict else "]")
    else:
        raise Unplain
