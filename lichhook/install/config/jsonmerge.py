"""Read a user's JSON config and change lichhook's part of it in place.

The file is never re-serialised: ``jsontext`` finds where each value stands and
``jsonedit`` changes only the text lichhook owns, so everything else (numbers, escapes,
key order, indentation, line endings, a final newline, a byte order mark) stays byte for
byte, and a file whose lichhook part is already right is not rewritten at all.
"""

from __future__ import annotations

from typing import Callable, Optional

from lichhook.install.config import jsontext
from lichhook.install.config.jsonedit import Doc, UnwritableValue

BOM = b"\xef\xbb\xbf"


class ConfigError(Exception):
    """A config file lichhook must not touch; the message names the file and the fix."""


def decode(raw: bytes, path: str) -> tuple:
    """(byte order mark or b"", text) of a UTF-8 file."""
    bom = BOM if raw.startswith(BOM) else b""
    try:
        return bom, raw[len(bom):].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 ({exc}); fix or move it, then run again. It was left untouched.")


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


def string_literal(text: str) -> Optional[str]:
    """The JSON string in ``text`` (a value lichhook wrote on one line of a config or
    module), or None when it is not one: a person may have changed it since, into
    anything from another type to arrays nested deeper than any parser recurses."""
    return jsontext.string_literal(text)
