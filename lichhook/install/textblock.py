"""A delimited block of lines lichhook owns inside a user's text config (crushrc):
found by its first and last lines, added at the end, removed exactly."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def find(text: str, begin: str, end: str) -> Optional[tuple]:
    """(start, stop) of the block, stop just past its last line's newline."""
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        return None
    stop += len(end)
    if text.startswith("\r\n", stop):
        stop += 2
    elif text.startswith("\n", stop):
        stop += 1
    return start, stop


def put(text: str, block: str, begin: str, end: str) -> str:
    """``text`` with ``block`` in place of the old one, or appended after a blank line."""
    found = find(text, begin, end)
    if found:
        return text[:found[0]] + block + text[found[1]:]
    newline = newline_of(text)
    if text and not text.endswith("\n"):
        text += newline
    if text.strip():
        text += newline
    return text + block


def remove(text: str, begin: str, end: str) -> str:
    """``text`` without the block (and without the blank line ``put`` added before it)."""
    found = find(text, begin, end)
    if not found:
        return text
    before = text[:found[0]]
    if before.endswith("\r\n\r\n"):
        before = before[:-2]
    elif before.endswith("\n\n"):
        before = before[:-1]
    return before + text[found[1]:]
