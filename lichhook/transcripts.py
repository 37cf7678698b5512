"""Reading a harness's transcript (a JSONL file) for one record, without reading all of it.

Titles live in transcripts: Claude Code appends an ``ai-title`` line now and then (the
newest is near the end), Codex and Antigravity start theirs with the first user message.
A transcript grows all session, to hundreds of megabytes, and a hook must stay quick, so
these read at most ``LIMIT`` bytes, in chunks, from the end or from the start. The path
comes from the harness's payload: it must be absolute and a regular file (a FIFO or a
device there is never waited on). A line that is not a JSON object is no record.
"""

import os
import stat

from lichhook.coldstart.quickjson import json_or_none

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, Optional, Sequence

LIMIT = 1 << 20  # bytes read at most, from either end
CHUNK = 1 << 16
_O_BINARY = getattr(os, "O_BINARY", 0)


def _open(path: object) -> "Optional[int]":
    """A descriptor for the regular file at ``path`` (absolute), else None."""
    if not isinstance(path, str) or not path or "\x00" in path or not os.path.isabs(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _O_BINARY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def last_line_with(path: object, marker: bytes, limit: int = LIMIT) -> "Optional[bytes]":
    """The last whole line of the file holding ``marker``, looking back at most ``limit``
    bytes from its end; None when there is none (or no such file)."""
    fd = _open(path)
    if fd is None:
        return None
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        start = max(0, end - limit)
        tail = b""
        position = end
        while position > start:
            step = min(CHUNK, position - start)
            position -= step
            os.lseek(fd, position, os.SEEK_SET)
            tail = _read(fd, step) + tail
            found = tail.rfind(marker)
            if found < 0:
                continue
            line_start = tail.rfind(b"\n", 0, found) + 1
            if line_start == 0 and position > 0:
                continue  # the line may begin before what was read: read further back
            line_end = tail.find(b"\n", found)
            return tail[line_start:] if line_end < 0 else tail[line_start:line_end]
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def lines_with(path: object, markers: "Sequence[bytes]", limit: int = LIMIT) -> "Iterator[bytes]":
    """Each whole line of the file holding any of ``markers``, from its start, reading at
    most ``limit`` bytes; nothing when there is no such file."""
    fd = _open(path)
    if fd is None:
        return
    try:
        pending = b""
        read = 0
        while read < limit:
            try:
                chunk = _read(fd, min(CHUNK, limit - read))
            except OSError:
                return
            if not chunk:
                if pending and any(marker in pending for marker in markers):
                    yield pending  # a last line without its newline, read whole
                return
            read += len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if any(marker in line for marker in markers):
                    yield line
    finally:
        os.close(fd)


def records_with(path: object, markers: "Sequence[bytes]") -> "Iterator[Dict[str, Any]]":
    """The record of each of ``lines_with``'s lines that holds one."""
    for line in lines_with(path, markers):
        found = record(line)
        if found is not None:
            yield found


def record(line: "Optional[bytes]") -> "Optional[Dict[str, Any]]":
    """The JSON object ``line`` holds (a line of ``last_line_with``, say), or None."""
    if not line:
        return None
    record = json_or_none(line)
    return record if isinstance(record, dict) else None


def _read(fd: int, size: int) -> bytes:
    parts = []
    while size > 0:
        data = os.read(fd, size)
        if not data:
            break
        parts.append(data)
        size -= len(data)
    return b"".join(parts)
