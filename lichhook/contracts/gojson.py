"""Go's ``encoding/json`` as lich's handlers use it: ``json.Unmarshal`` of a hook body
into a struct whose fields are all strings.

lich is written in Go, and its parse functions (``internal/terminal/transport.go``)
decode a body with ``json.Unmarshal`` before checking it. That decoder differs from
Python's ``json`` in ways a client meets:

- a key matches a field without regard to case: ASCII letters by case, and the Kelvin
  sign (U+212A) and the long s (U+017F) as K and S, the only runes outside ASCII that
  Unicode's simple case folding puts with an ASCII letter;
- when a key repeats, the last one wins; a ``null`` leaves the field as it was;
- a value of another JSON type for a field is an error (the whole body is refused);
- invalid UTF-8 in a string becomes U+FFFD, one per byte that does not start a valid
  sequence, and so does an escaped surrogate that is not half of a pair;
- ``NaN`` and ``Infinity`` are not JSON; nesting deeper than 10000 is refused; every
  byte of the text must be valid JSON even where no field is read.

Only lichhook's stand-in and tests use this module (never a hook), so it is plain code
over bytes, with no recursion: a 4 KiB body can nest 2000 levels deep.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Tuple

MAX_DEPTH = 10000  # Go's scanner refuses deeper nesting ("exceeded max depth")
_WS = b" \t\n\r"
_DIGITS = b"0123456789"
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f",
            ord("n"): "\n", ord("r"): "\r", ord("t"): "\t"}
# Runes outside ASCII that fold onto an ASCII letter (unicode.SimpleFold orbits): the only
# ones that can make a key match one of lich's (ASCII) field names. The dotted and dotless
# Turkish i fold only to themselves.
_FOLD_TO_ASCII = {"\u212a": "K", "\u017f": "S"}


class GoJSONError(ValueError):
    """What json.Unmarshal would return as an error; the message says where."""


def decode_struct(raw: bytes, fields: Sequence[str]) -> Dict[str, str]:
    """The fields (JSON names) of a struct of strings after ``json.Unmarshal(raw, &s)``:
    each is "" unless the body set it. Raises GoJSONError when Unmarshal returns an error."""
    _check(raw)
    out = {name: "" for name in fields}
    by_fold = {name.upper(): name for name in fields}
    i = _skip_ws(raw, 0)
    first = raw[i]
    if first == ord("n"):  # null into a struct: no effect, no error
        return out
    if first != ord("{"):
        kind = {ord("["): "array", ord('"'): "string", ord("t"): "bool", ord("f"): "bool"}.get(first, "number")
        raise GoJSONError(f"cannot unmarshal {kind} into a struct")
    type_error: Optional[str] = None
    for key, kind, value in _members(raw, i):
        name = by_fold.get(_fold(key))
        if name is None:
            continue  # unknown fields are ignored
        if value is not None:  # a string
            out[name] = value
        elif kind != "null" and type_error is None:
            # Go keeps decoding after a type error and returns the first one at the end.
            type_error = f"cannot unmarshal {kind} into the string field {name!r}"
    if type_error:
        raise GoJSONError(type_error)
    return out


def _fold(key: str) -> str:
    return "".join(c.upper() if c < "\x80" else _FOLD_TO_ASCII.get(c, c) for c in key)


def _skip_ws(raw: bytes, i: int) -> int:
    n = len(raw)
    while i < n and raw[i] in _WS:
        i += 1
    return i


def _fail(raw: bytes, i: int, where: str) -> GoJSONError:
    if i >= len(raw):
        return GoJSONError("unexpected end of JSON input")
    return GoJSONError(f"invalid character {chr(raw[i])!r} {where} (offset {i})")


def _string_end(raw: bytes, i: int) -> int:
    """The index after the string starting at raw[i] (a quote); raises on a bad string."""
    n = len(raw)
    i += 1
    while i < n:
        c = raw[i]
        if c == 0x22:
            return i + 1
        if c == 0x5C:
            if i + 1 >= n:
                break
            e = raw[i + 1]
            if e == ord("u"):
                if i + 6 > n or not all(h in _HEX for h in raw[i + 2:i + 6]):
                    raise _fail(raw, min(i + 2, n), "in \\u hexadecimal character escape")
                i += 6
                continue
            if e not in _ESCAPES:
                raise _fail(raw, i + 1, "in string escape code")
            i += 2
            continue
        if c < 0x20:
            raise _fail(raw, i, "in string literal")
        i += 1
    raise GoJSONError("unexpected end of JSON input")


def _number_end(raw: bytes, i: int) -> int:
    n = len(raw)
    if raw[i] == ord("-"):
        i += 1
    if i >= n or raw[i] not in _DIGITS:
        raise _fail(raw, i, "in numeric literal")
    if raw[i] == ord("0"):
        i += 1
    else:
        while i < n and raw[i] in _DIGITS:
            i += 1
    if i < n and raw[i] == ord("."):
        i += 1
        if i >= n or raw[i] not in _DIGITS:
            raise _fail(raw, i, "after decimal point in numeric literal")
        while i < n and raw[i] in _DIGITS:
            i += 1
    if i < n and raw[i] in b"eE":
        i += 1
        if i < n and raw[i] in b"+-":
            i += 1
        if i >= n or raw[i] not in _DIGITS:
            raise _fail(raw, i, "in exponent of numeric literal")
        while i < n and raw[i] in _DIGITS:
            i += 1
    return i


def _scalar_end(raw: bytes, i: int) -> Tuple[int, str]:
    """(end, kind) of the scalar at raw[i]; raises on anything that is not one."""
    c = raw[i]
    if c == 0x22:
        return _string_end(raw, i), "string"
    if c == ord("-") or c in _DIGITS:
        return _number_end(raw, i), "number"
    for word, kind in ((b"true", "bool"), (b"false", "bool"), (b"null", "null")):
        if c == word[0]:
            for k, expected in enumerate(word):
                if i + k >= len(raw) or raw[i + k] != expected:
                    raise _fail(raw, i + k, "in literal " + word.decode())
            return i + len(word), kind
    raise _fail(raw, i, "looking for beginning of value")


def _check(raw: bytes) -> None:
    """Go's checkValid: the whole text must be one JSON value, whatever is read of it."""
    n = len(raw)
    i = _skip_ws(raw, 0)
    stack: List[int] = []  # open containers: ord("{") or ord("[")
    want_value = True
    while True:
        if want_value:
            if i >= n:
                raise GoJSONError("unexpected end of JSON input")
            c = raw[i]
            if c in b"{[":
                stack.append(c)
                if len(stack) > MAX_DEPTH:
                    raise GoJSONError("exceeded max depth")
                i = _skip_ws(raw, i + 1)
                if i < n and raw[i] == (ord("}") if c == ord("{") else ord("]")):
                    stack.pop()
                    i += 1
                    want_value = False
                elif c == ord("{"):
                    i = _key(raw, i)
                continue
            i, _ = _scalar_end(raw, i)
            want_value = False
            continue
        i = _skip_ws(raw, i)
        if not stack:
            if i != n:
                raise _fail(raw, i, "after top-level value")
            return
        if i >= n:
            raise GoJSONError("unexpected end of JSON input")
        c, top = raw[i], stack[-1]
        if c == ord(","):
            i = _skip_ws(raw, i + 1)
            if top == ord("{"):
                i = _key(raw, i)
            want_value = True
        elif (c == ord("}") and top == ord("{")) or (c == ord("]") and top == ord("[")):
            stack.pop()
            i += 1
        else:
            raise _fail(raw, i, "after object key:value pair" if top == ord("{") else "after array element")


def _key(raw: bytes, i: int) -> int:
    """Past ``"key" :`` and the space after it, at the value."""
    if i >= len(raw) or raw[i] != 0x22:
        raise _fail(raw, i, "looking for beginning of object key string")
    i = _skip_ws(raw, _string_end(raw, i))
    if i >= len(raw) or raw[i] != ord(":"):
        raise _fail(raw, i, "after object key")
    return _skip_ws(raw, i + 1)


def _skip_value(raw: bytes, i: int) -> Tuple[int, str]:
    """(end, kind) of the (already checked) value at raw[i]."""
    c = raw[i]
    if c not in b"{[":
        return _scalar_end(raw, i)
    depth = 0
    while True:
        c = raw[i]
        if c == 0x22:
            i = _string_end(raw, i)
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            depth -= 1
            if depth == 0:
                return i + 1, "object" if raw[i] == ord("}") else "array"
        i += 1


def _members(raw: bytes, i: int) -> Iterator[Tuple[str, str, Optional[str]]]:
    """(key, kind, value) of each member of the (already checked) object at raw[i]; the
    value is the decoded text for a string, else None."""
    i = _skip_ws(raw, i + 1)
    if raw[i] == ord("}"):
        return
    while True:
        end = _string_end(raw, i)
        key = unquote(raw[i:end])
        i = _skip_ws(raw, _skip_ws(raw, end) + 1)
        end, kind = _skip_value(raw, i)
        yield key, kind, unquote(raw[i:end]) if kind == "string" else None
        i = _skip_ws(raw, end)
        if raw[i] == ord("}"):
            return
        i = _skip_ws(raw, i + 1)


def unquote(literal: bytes) -> str:
    """The text of a (checked) JSON string literal, quotes included, as Go decodes it."""
    out: List[str] = []
    i, end = 1, len(literal) - 1
    while i < end:
        slash = literal.find(b"\\", i, end)
        if slash != i:
            stop = end if slash < 0 else slash
            out.append(go_utf8(literal[i:stop]))
            i = stop
            continue
        e = literal[i + 1]
        if e != ord("u"):
            out.append(_ESCAPES[e])
            i += 2
            continue
        r = int(literal[i + 2:i + 6], 16)
        i += 6
        if 0xD800 <= r < 0xE000:
            second = literal[i:i + 6]
            if (0xD800 <= r < 0xDC00 and second[:2] == b"\\u" and len(second) == 6
                    and all(h in _HEX for h in second[2:])):
                low = int(second[2:], 16)
                if 0xDC00 <= low < 0xE000:
                    out.append(chr(0x10000 + ((r - 0xD800) << 10) + (low - 0xDC00)))
                    i += 6
                    continue
            r = 0xFFFD
        out.append(chr(r))
    return "".join(out)


def go_utf8(data: bytes) -> str:
    """``data`` decoded as Go reads UTF-8: each byte that does not start a valid sequence
    becomes one U+FFFD (Python's "replace" would fold a cut-off sequence into one)."""
    out: List[str] = []
    i = 0
    while True:
        try:
            out.append(data[i:].decode("utf-8"))
            return "".join(out)
        except UnicodeDecodeError as exc:
            out.append(data[i:i + exc.start].decode("utf-8"))
            out.append("\ufffd")
            i += exc.start + 1
