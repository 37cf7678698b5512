"""Read a user's JSON config, change it, and write it back in the user's own style.

Key order is kept (objects load into ordered dicts and new keys go last), and the
rewrite copies the file's indentation (spaces or tabs, and how many), its line
endings, whether it ends with a newline and whether it escapes non-ASCII text.
A file whose data did not change is never rewritten, whatever its formatting.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional


class ConfigError(Exception):
    """A config file lichhook must not touch; the message names the file and the fix."""


class Style:
    """How a JSON file is laid out, so a rewrite looks like the original."""

    def __init__(self, indent: Any = 2, newline: str = "\n", final_newline: bool = True,
                 ensure_ascii: bool = False) -> None:
        self.indent = indent
        self.newline = newline
        self.final_newline = final_newline
        self.ensure_ascii = ensure_ascii

    def __repr__(self) -> str:
        return (f"Style(indent={self.indent!r}, newline={self.newline!r}, "
                f"final_newline={self.final_newline}, ensure_ascii={self.ensure_ascii})")


def detect_style(text: str) -> Style:
    """The layout of ``text``; defaults (two spaces, LF, final newline) for what it does
    not show, e.g. an empty or one-line file."""
    newline = "\r\n" if "\r\n" in text else "\n"
    indent: Any = 2
    lines = text.splitlines()
    if len(lines) > 1:
        indent = None
        for line in lines[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped != line:
                lead = line[: len(line) - len(stripped)]
                indent = "\t" if lead[0] == "\t" else len(lead)
                break
        if indent is None:
            indent = 2
    elif text.strip():
        indent = None  # a one-line file stays on one line
    has_raw = any(ord(c) > 127 for c in text)
    has_escaped = "\\u" in text
    return Style(indent=indent, newline=newline,
                 final_newline=text.endswith("\n") or not text.strip(),
                 ensure_ascii=has_escaped and not has_raw)


def parse(raw: bytes, path: str) -> tuple:
    """(data, style) of a JSON object file. Refuses anything else with ConfigError."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 ({exc}); fix or move it, then run again. It was left untouched.")
    if not text.strip():
        return {}, detect_style(text)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run again. It was left untouched.")
    if not isinstance(data, dict):
        raise ConfigError(f"{path} holds a JSON {type(data).__name__}, not an object; fix it, then run again. It was left untouched.")
    return data, detect_style(text)


def string_literal(text: str) -> Optional[str]:
    """The JSON string in ``text`` (a value lichhook wrote on one line of a config or
    module), or None when it is not one: a person may have changed it since, into
    anything from another type to arrays nested too deeply for the parser."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def string_list_head(text: str) -> Optional[str]:
    """The first item of the JSON array in ``text`` when it is a string, else None."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value[0] if isinstance(value, list) and value and isinstance(value[0], str) else None


def render(data: Any, style: Style) -> bytes:
    text = json.dumps(data, indent=style.indent, ensure_ascii=style.ensure_ascii,
                      separators=(",", ": ") if style.indent is not None else (", ", ": "))
    if style.newline != "\n":
        text = text.replace("\n", style.newline)
    if style.final_newline:
        text += style.newline
    return text.encode("utf-8")


def edit(raw: Optional[bytes], path: str, change: Callable[[dict], Any]) -> Optional[bytes]:
    """Apply ``change`` (which mutates the loaded object in place) to the file's bytes.

    Returns the original bytes when the data is unchanged, the new bytes otherwise, and
    None (delete) when a file that existed only for lichhook became empty: ``change``
    returns the string "delete-if-empty" to ask for that.
    """
    if raw is None:
        data, style = {}, Style()
    else:
        data, style = parse(raw, path)
    before = json.loads(json.dumps(data))
    verdict = change(data)
    if data == before:
        return raw
    if not data and verdict == "delete-if-empty":
        return None
    bom = b"\xef\xbb\xbf" if raw is not None and raw.startswith(b"\xef\xbb\xbf") else b""
    return bom + render(data, style)
