"""Reading a hook's stdin: bounded in size and time, then parsed as one JSON object; and
reading the lines of a long-lived process's stdin, each bounded as one hook's stdin is."""

import os
import sys
import time

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable, Dict, List, Tuple

    Payload = Dict[str, Any]
    # What a read found so far: each whole object, after the bytes it was read from.
    Parsed = List[Tuple[bytes, Payload]]

MAX_BYTES = 1 << 20  # 1 MiB: far above any harness payload, far below trouble
READ_SECONDS = 1.0  # a harness that never closes stdin must not hang the hook


class PayloadError(ValueError):
    """Stdin that cannot be a hook payload; the message says why."""


def read_stdin(fd: int = 0, limit: int = MAX_BYTES, seconds: float = READ_SECONDS,
               deadline: "float | None" = None) -> bytes:
    """Read stdin until EOF, a whole JSON object, the time bound or more than ``limit``
    bytes, whichever comes first.

    The time bound is ``deadline`` (a time.monotonic() value) when given, else ``seconds``
    from now. A harness may write its payload and keep the pipe open: reading stops as
    soon as what arrived is one whole JSON object, and on a time-out what was read so far
    is returned. Raises PayloadError when stdin holds more than ``limit`` bytes.
    """
    return _read(fd, limit, seconds, deadline, [])


def read_payload(fd: int = 0, limit: int = MAX_BYTES, seconds: float = READ_SECONDS,
                 deadline: "float | None" = None) -> "Payload":
    """``parse_payload(read_stdin(...))``, parsing once: the object that ended the read is
    the one returned (a payload carrying a tool's output can be large)."""
    found: "Parsed" = []
    data = _read(fd, limit, seconds, deadline, found)
    if found and len(found[-1][0]) == len(data):
        return found[-1][1]
    return parse_payload(data)


def _read(fd: int, limit: int, seconds: float, deadline: "float | None", found: "Parsed") -> bytes:
    if deadline is None:
        deadline = time.monotonic() + seconds
    if sys.platform == "win32":
        chunks = _read_in_thread(fd, limit, deadline, found)
    else:
        chunks = _read_with_select(fd, limit, deadline, found)
    data = b"".join(chunks)
    if len(data) > limit:
        raise PayloadError(f"stdin is larger than {limit} bytes")
    return data


def _whole_object(chunks: "list[bytes]", found: "Parsed") -> bool:
    """True when the bytes read so far are one JSON object: more could only spoil it.
    The bytes and the object go into ``found``."""
    if not chunks[-1].rstrip(b" \t\r\n").endswith(b"}"):
        return False
    data = b"".join(chunks)
    try:
        found.append((data, parse_payload(data)))
    except PayloadError:
        return False
    return True


def _read_chunks(fd: int, limit: int, ready: "Callable[[], bool]", chunks: "list[bytes]", found: "Parsed") -> None:
    """Append to ``chunks`` what ``fd`` gives, while ``ready()`` says more may be read in
    time, until its end, more than ``limit`` bytes or a whole object (``_whole_object``)."""
    total = 0
    try:
        while total <= limit and ready():
            chunk = os.read(fd, min(65536, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if _whole_object(chunks, found):
                break
    except (OSError, ValueError):  # stdin closed or not selectable
        pass


def _read_with_select(fd: int, limit: int, deadline: float, found: "Parsed") -> "list[bytes]":
    import select

    def ready() -> bool:
        remaining = deadline - time.monotonic()
        return remaining > 0 and bool(select.select([fd], [], [], remaining)[0])

    chunks: list[bytes] = []
    _read_chunks(fd, limit, ready, chunks, found)
    return chunks


def _read_in_thread(fd: int, limit: int, deadline: float, found: "Parsed") -> "list[bytes]":
    # Windows cannot select() on a pipe, so a daemon thread reads while we wait.
    import threading

    chunks: list[bytes] = []
    finished = threading.Event()

    def pump() -> None:
        try:
            _read_chunks(fd, limit, lambda: True, chunks, found)
        finally:
            finished.set()

    threading.Thread(target=pump, daemon=True).start()
    finished.wait(max(0.0, deadline - time.monotonic()))
    return list(chunks)


def read_line(stream: "BinaryIO", limit: int = MAX_BYTES) -> bytes:
    """The next line of ``stream``, its end of line included; b"" at the end of the stream.
    A line longer than ``limit`` bytes (its end of line aside) is read to its end, a
    bounded chunk at a time, and dropped: PayloadError, and the next call reads on."""
    line = stream.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line
    while line and not line.endswith(b"\n"):
        line = stream.readline(limit + 1)
    raise PayloadError(f"a line of more than {limit} bytes")


def parse_payload(raw: bytes) -> "Payload":
    """Decode UTF-8 (a BOM is allowed) and parse one JSON object, or raise PayloadError.

    Integers of any length parse (see lichhook.jsonint).
    """
    if not raw.strip():
        raise PayloadError("stdin is empty")
    # One BOM is dropped by hand: the "utf-8-sig" codec would cost an import (~0.5 ms),
    # while "utf-8" is built in. Error positions count from after the BOM, as that codec's do.
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"stdin is not UTF-8 (byte {exc.start})") from None
    try:
        try:
            value = json.loads(text)
        except ValueError:
            # The one refusal of valid JSON: an integer longer than int() takes. Tried
            # only after a failure, so the usual payload does not pay for the import.
            from lichhook.jsonint import json_int

            value = json.loads(text, parse_int=json_int)
    except ValueError as exc:  # JSONDecodeError
        raise PayloadError(f"stdin is not JSON: {exc}") from None
    except RecursionError:
        raise PayloadError("stdin is JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise PayloadError(f"stdin is JSON {type(value).__name__}, not an object")
    return value
