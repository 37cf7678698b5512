"""Small file operations every part of lichhook shares: atomic writes, a Windows-safe
replace, and a read that never blocks on something that is not a regular file.

Only ``os`` and ``sys`` at import: the hooks and wait ops load this on every run.
"""

from __future__ import annotations

import os
import sys

TMP_SUFFIX = ".tmp"  # temporary files are ".<target>.<pid>.<random>.tmp" beside their target
_O_BINARY = getattr(os, "O_BINARY", 0)


def replace(src: str, dst: str) -> None:
    """``os.replace``, retried for about half a second on Windows, which refuses to
    replace a file while any process (a hook reading it, an indexer) holds it open."""
    if sys.platform != "win32":
        os.replace(src, dst)
        return
    import time

    delay = 0.01
    for _ in range(10):
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    os.replace(src, dst)


def write_atomic(path: str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never part.

    The temporary file sits in the same folder (a rename across file systems is not
    atomic), has a name no other process uses, is created 0600 (or gets ``mode``) and is
    flushed to disk before it replaces the target. Raises OSError; leaves no temporary
    file behind.
    """
    folder, base = os.path.split(path)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.{os.urandom(4).hex()}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def is_temporary(name: str) -> bool:
    """Whether a folder entry is one of write_atomic's temporary files."""
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def read_regular(path: str, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` (at most ``limit``), or None when it is not a regular file.

    Opened without blocking: a FIFO or a device put where a file belongs must not hang
    the caller waiting for a writer. Raises OSError as open() does.
    """
    import stat

    fd = os.open(path, os.O_RDONLY | _O_BINARY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, total = [], 0
        while limit is None or total < limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
