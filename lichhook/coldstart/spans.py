"""``json.loads`` that also tells where each member of one object is spelt, so that a
writer can copy back the members it did not change instead of encoding them again.

The waits store (``lichhook.waits.folder``) is one JSON object whose ``names`` member
holds an entry per name; an op changes one or two entries and must write the whole file.
Encoding every entry again cost a store of 500 waits 0.5 ms; copying the text of the
unchanged ones costs nothing. ``tests/test_coldstart.py`` holds the value equal to
``json.loads`` and each span to its member. A module of its own: only the ops that write
the store import it, not the hooks.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.coldstart.fastjson import _WHITESPACE, _scan, loads

try:
    from _json import scanstring as _c_scanstring
except ImportError:  # no accelerator: loads hands everything to json, and no spans are given
    _c_scanstring = None  # type: ignore[assignment]


def loads_with_spans(text: str, key: str) -> "tuple[object, dict | None]":
    """``json.loads(text)``, and where ``text`` is an object whose member ``key`` is an
    object, where each of that object's members is spelt in ``text``: name -> (where its
    name starts, where its value starts, where its value ends), which a writer may copy
    back for the members it did not change, instead of encoding them again. None
    otherwise (and whenever ``json`` is asked)."""
    if _scan is not None and _c_scanstring is not None and type(text) is str:
        try:
            value, spans, end = _object(text, _skip(text, 0), key)
        except Exception:  # json raises its own error, with its own message
            pass
        else:
            if not text[end:].lstrip(_WHITESPACE):
                return value, spans
    return loads(text), None


def _skip(text: str, i: int) -> int:
    while text[i] in _WHITESPACE:
        i += 1
    return i


def _object(text: str, i: int, key: "str | None") -> "tuple[dict, dict | None, int]":
    """The object at ``text[i]`` as json's scanner reads it, with the spans of the members
    of its member ``key`` (or, for ``key`` None, of its own members), and where it ends."""
    if text[i] != "{":
        raise ValueError
    obj: dict = {}
    spans: "dict | None" = {} if key is None else None
    i = _skip(text, i + 1)
    if text[i] == "}":
        return obj, spans, i + 1
    while True:
        if text[i] != '"':
            raise ValueError
        member = i
        name, i = _c_scanstring(text, i + 1, True)
        i = _skip(text, i)
        if text[i] != ":":
            raise ValueError
        i = start = _skip(text, i + 1)
        if key is not None and name == key:
            spans = None  # a later member of that name replaces an earlier one, as in json
            if text[i] == "{":
                obj[name], spans, i = _object(text, i, None)
            else:
                obj[name], i = _scan(text, i)
        else:
            obj[name], i = _scan(text, i)
            if key is None:
                spans[name] = (member, start, i)  # type: ignore[index]
        i = _skip(text, i)
        if text[i] == "}":
            return obj, spans, i + 1
        if text[i] != ",":
            raise ValueError
        i = _skip(text, i + 1)
