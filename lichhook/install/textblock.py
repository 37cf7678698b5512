"""A delimited block of lines lichhook owns inside a user's text config (crushrc):
found by its first and last lines, added at the end, removed exactly."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def find(text: str, begin: str, end: str, is_own: Callable[[str], bool]) -> Optional[tuple]:
    """(start, stop) of the block, stop just past its last line's newline, or None.

    Only what lichhook provably wrote counts: a line that is exactly ``begin``, then only
    lines ``is_own`` accepts, then a line that is exactly ``end``. A marker the user copied
    on its own, or one inside a heredoc, never makes the lines after it lichhook's."""
    lines = text.splitlines(keepends=True)
    offsets = []
    at = 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    for first, line in enumerate(lines):
        if line.rstrip("\r\n") != begin:
            continue
        for k in range(first + 1, len(lines)):
            body = lines[k].rstrip("\r\n")
            if body == end:
                return offsets[first], offsets[k] + len(lines[k])
            if not is_own(body):
                break
    return None


def put(text: str, block: str, begin: str, end: str, is_own: Callable[[str], bool]) -> str:
    """``text`` with ``block`` in place of the old one, or appended after a blank line (a
    text without a final newline gets only the newline that ends its last line, so that
    ``remove`` can tell the two apart and give each back as it was)."""
    found = find(text, begin, end, is_own)
    if found:
        return text[:found[0]] + block + text[found[1]:]
    newline = newline_of(text)
    if text and not text.endswith("\n"):
        return text + newline + block
    if text.strip():
        text += newline
    return text + block


def remove(text: str, begin: str, end: str, is_own: Callable[[str], bool]) -> str:
    """``text`` without the block, and without what ``put`` added before it: the blank
    line, or, for a block that ends the text right after its last line's own newline
    without a blank line before it, that newline."""
    found = find(text, begin, end, is_own)
    if not found:
        return text
    before, after = text[:found[0]], text[found[1]:]
    if before.endswith("\r\n\r\n"):
        before = before[:-2]
    elif before.endswith("\n\n"):
        before = before[:-1]
    elif not after and before.rstrip("\r\n"):
        before = before[:-2] if before.endswith("\r\n") else before[:-1] if before.endswith("\n") else before
    return before + after
