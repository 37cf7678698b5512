"""``json.loads`` and ``json.dumps`` for hot paths, without importing ``json``.

``import json`` costs about 3 ms at every start (its decoder imports ``re``, which
imports ``enum``): a quarter of what an empty zipapp costs to start. The work itself is
done by ``_json``, the C accelerator that ``json`` drives; these functions drive it
directly, configured as ``json``'s defaults configure it. Anything else (no ``_json``,
an argument these do not take, a leading BOM, an error of any kind) is handed to
``json`` itself, so results, exceptions and their messages are always ``json``'s own.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

try:
    from _json import encode_basestring as _c_encode_str
    from _json import encode_basestring_ascii as _c_encode_ascii
    from _json import make_encoder as _c_make_encoder
    from _json import make_scanner as _c_make_scanner
except ImportError:  # an interpreter without the accelerator: json does it all
    _c_make_scanner = None  # type: ignore[assignment, misc]

_WHITESPACE = " \t\n\r"  # what json skips around a document


class _DecoderDefaults:
    """The attributes the C scanner reads from a ``json.JSONDecoder()``, with its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__
    memo: "dict[str, str]" = {}


# The C scanner reads its settings from any object with a decoder's attributes.
_scan = _c_make_scanner(_DecoderDefaults()) if _c_make_scanner is not None else None  # type: ignore[arg-type]


def _scanner(parse_int: "Callable[[str], object] | None") -> "Callable[[str, int], tuple] | None":
    if parse_int is None or _c_make_scanner is None:
        return _scan
    context = _DecoderDefaults()
    context.parse_int = parse_int  # type: ignore[assignment]
    return _c_make_scanner(context)  # type: ignore[arg-type]


def loads(text: str, *, parse_int: "Callable[[str], object] | None" = None) -> object:
    """``json.loads(text, parse_int=parse_int)`` for a ``str``."""
    scan = _scanner(parse_int)
    if scan is not None and type(text) is str and not text.startswith("\ufeff"):
        try:
            start = len(text) - len(text.lstrip(_WHITESPACE))
            value, end = scan(text, start)
        except Exception:  # json raises its own error, with its own message
            pass
        else:
            if not text[end:].lstrip(_WHITESPACE):
                return value
    import json

    return json.loads(text, parse_int=parse_int)


def _refuse(obj: object) -> object:
    raise TypeError  # json.dumps below raises json's own TypeError for ``obj``


def dumps(obj: object, *, separators: "tuple[str, str] | None" = None, ensure_ascii: bool = True,
          indent: "int | None" = None, check_circular: bool = True) -> str:
    """``json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent,
    check_circular=check_circular)``."""
    if _c_make_scanner is not None:
        try:
            if isinstance(obj, str):
                return _c_encode_ascii(obj) if ensure_ascii else _c_encode_str(obj)
            encode_str = _c_encode_ascii if ensure_ascii else _c_encode_str
            if indent is None:
                item_separator, key_separator = separators if separators is not None else (", ", ": ")
                encode = _c_make_encoder({} if check_circular else None, _refuse, encode_str, None,
                                         key_separator, item_separator, False, False, True)
                return "".join(encode(obj, 0))
            if type(indent) is int and indent >= 0:
                # json's C encoder does not indent (before 3.13), so this is json's
                # Python encoder over plain data; anything else goes to json itself.
                item_separator, key_separator = separators if separators is not None else (",", ": ")
                out: "list[str]" = []
                _indented(obj, out, encode_str, "\n", " " * indent, item_separator, key_separator, 0)
                return "".join(out)
        except Exception:
            pass
    import json

    return json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent,
                      check_circular=check_circular)


class _NotPlain(Exception):
    """A value the indenting encoder leaves to json (a subclass, a float key, a cycle...)."""


_NAMED = {None: "null", True: "true", False: "false"}
_MAX_DEPTH = 200  # deeper than any document lichhook writes; json handles the rest


def _indented(obj, out, encode_str, newline, step, item_separator, key_separator, depth) -> None:
    kind = type(obj)
    if kind is str:
        out.append(encode_str(obj))
    elif obj is None or obj is True or obj is False:
        out.append(_NAMED[obj])
    elif kind is int:
        out.append(int.__repr__(obj))
    elif kind is float and obj == obj and obj not in (float("inf"), float("-inf")):
        out.append(float.__repr__(obj))
    elif kind is list or kind is tuple or kind is dict:
        if not obj:
            out.append("{}" if kind is dict else "[]")
            return
        if depth >= _MAX_DEPTH:
            raise _NotPlain
        inner = newline + step * (depth + 1)
        out.append(("{" if kind is dict else "[") + inner)
        first = True
        if kind is dict:
            for key, value in obj.items():
                if type(key) is not str:
                    raise _NotPlain  # json turns such keys into strings its own way
                if not first:
                    out.append(item_separator + inner)
                first = False
                out.append(encode_str(key) + key_separator)
                _indented(value, out, encode_str, newline, step, item_separator, key_separator, depth + 1)
        else:
            for value in obj:
                if not first:
                    out.append(item_separator + inner)
                first = False
                _indented(value, out, encode_str, newline, step, item_separator, key_separator, depth + 1)
        out.append(newline + step * depth + ("}" if kind is dict else "]"))
    else:
        raise _NotPlain
