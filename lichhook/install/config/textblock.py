"""A user's text config as text: its byte order mark and encoding (``decode``), its line
ending (``newline_of``), and a delimited block of lines lichhook owns inside it
(crushrc): found by its first and last lines, added at the end, removed exactly."""

from __future__ import annotations

from typing import Callable, Optional, Tuple

from lichhook.install.errors import ConfigError

BOM = b"\xef\xbb\xbf"


def decode(raw: bytes, path: str) -> Tuple[bytes, str]:
    """(byte order mark or b"", text) of a UTF-8 file."""
    bom = BOM if raw.startswith(BOM) else b""
    try:
        return bom, raw[len(bom):].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 ({exc}); fix or move it, then run again. It was left untouched.")


def newline_of(text: str) -> str:
    """The line ending of the file's last line break (``\\n`` when it has none): what
    lichhook appends after it must match it, so that removing it finds the blank line it
    added, in a file that mixes both endings too."""
    at = text.rfind("\n")
    return "\r\n" if at > 0 and text[at - 1] == "\r" else "\n"


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
    """``text`` with ``block`` in place of the old one, or appended after a blank line. A
    text without a final newline gets a block without one either: the file still ends
    as it did, and ``remove`` can tell that the line end before the blank line was
    lichhook's too."""
    found = find(text, begin, end, is_own)
    if found:
        unterminated = found[1] == len(text) and not text.endswith("\n")
        return text[:found[0]] + (block.rstrip("\r\n") if unterminated else block) + text[found[1]:]
    return appended(text, block)


def appended(text: str, block: str) -> str:
    """``text`` with ``block`` (lines in its line ending) after a blank line; without a
    final newline when ``text`` has none. A text of blank lines gets its blank line too:
    what ``remove`` takes away with the block."""
    newline = newline_of(text)
    if text and not text.endswith("\n"):
        return text + newline + newline + block.rstrip("\r\n")
    return text + newline + block if text else block


def remove(text: str, begin: str, end: str, is_own: Callable[[str], bool]) -> str:
    """``text`` without the block, and without what ``put`` added before it: the blank
    line, and for a block that ends the text without a final newline, the line end
    before that blank line too."""
    found = find(text, begin, end, is_own)
    if not found:
        return text
    before, after = text[:found[0]], text[found[1]:]
    unterminated = not after and not text.endswith("\n")
    for _ in range(2 if unterminated else 1):
        if before.endswith("\r\n\r\n") or (unterminated and before.endswith("\r\n") and before[:-2].strip()):
            before = before[:-2]
        elif before.endswith("\n\n") or (unterminated and before.endswith("\n") and before[:-1].strip()):
            before = before[:-1]
    return before + after
