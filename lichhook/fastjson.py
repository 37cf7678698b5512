"""``json.loads`` and ``json.dumps`` for hot paths, without importing ``json``.

``import json`` costs about 3 ms at every start (its decoder imports ``re``, which
imports ``enum``): a quarter of what an empty zipapp costs to start. The work itself is
done by ``_json``, the C accelerator that ``json`` drives; these functions drive it
directly, configured as ``json``'s defaults configure it. Anything else (no ``_json``,
an argument these do not take, a leading BOM, an error of any kind) is handed to
``json`` itself, so results, exceptions and their messages are always ``json``'s own.
"""

from __future__ import annotations

try:
    from _json import encode_basestring as _c_encode_str
    from _json import encode_basestring_ascii as _c_encode_ascii
    from _json import make_encoder as _c_make_encoder
    from _json import make_scanner as _c_make_scanner
except ImportError:  # an interpreter without the accelerator: json does it all
    _c_make_scanner = None

_WHITESPACE = " \t\n\r"  # what json skips around a document


class _DecoderDefaults:
    """The attributes the C scanner reads from a ``json.JSONDecoder()``, with its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__
    memo: dict = {}


_scan = _c_make_scanner(_DecoderDefaults()) if _c_make_scanner is not None else None


def loads(text: str) -> object:
    """``json.loads(text)`` for a ``str``."""
    if _scan is not None and type(text) is str and not text.startswith("\ufeff"):
        try:
            start = len(text) - len(text.lstrip(_WHITESPACE))
            value, end = _scan(text, start)
        except Exception:  # json raises its own error, with its own message
            pass
        else:
            if not text[end:].lstrip(_WHITESPACE):
                return value
    import json

    return json.loads(text)


def _refuse(obj: object) -> object:
    raise TypeError  # json.dumps below raises json's own TypeError for ``obj``


def dumps(obj: object, *, separators: tuple | None = None, ensure_ascii: bool = True, indent: int | None = None) -> str:
    """``json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent)``.

    Indented output is json's own (its C encoder writes only unindented JSON)."""
    if _c_make_scanner is not None and indent is None:
        item_separator, key_separator = separators if separators is not None else (", ", ": ")
        try:
            if isinstance(obj, str):
                return _c_encode_ascii(obj) if ensure_ascii else _c_encode_str(obj)
            encode = _c_make_encoder(
                {}, _refuse, _c_encode_ascii if ensure_ascii else _c_encode_str, None,
                key_separator, item_separator, False, False, True,
            )
            return "".join(encode(obj, 0))
        except Exception:
            pass
    import json

    return json.dumps(obj, separators=separators, ensure_ascii=ensure_ascii, indent=indent)
