"""Atomic file writes, and the mirrored files the hooks read.

``sessions/<session id>.json`` and ``index.json`` are derived from the store's state and
rewritten under the store's lock, so after every op they agree with it. ``sync`` compares
what each file says (ignoring ``updated``) with what it should say and rewrites only the
files that differ: a changed, missing or corrupt mirror is mended by the next op.
"""

from __future__ import annotations

import os
import sys

from lichhook import fastjson as json  # json's own C codec, without 3 ms of imports
from lichhook.ids import BadId, wait_session_id
from lichhook.waits.rules import bound_sessions

SESSIONS = "sessions"
INDEX = "index.json"
TMP_SUFFIX = ".tmp"
_O_BINARY = getattr(os, "O_BINARY", 0)


def utc_now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_private_folder(path: str) -> None:
    """Create ``path`` (and parents) if missing; the folder itself gets mode 0700."""
    if not os.path.isdir(path):
        os.makedirs(path, 0o700, exist_ok=True)


def _replace(src: str, dst: str) -> None:
    if sys.platform != "win32":
        os.replace(src, dst)
        return
    # Windows refuses to replace a file any process holds open (a hook reading it, an
    # indexer): retry for about half a second before giving up.
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


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never part.

    The temporary file sits in the same folder (a rename across file systems is not
    atomic), has a name no other process uses, is created 0600 and is flushed to disk
    before it replaces the target.
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
        _replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def sync_folder(path: str) -> None:
    """Flush a folder's entries (the renames) to disk where the OS allows it."""
    if sys.platform == "win32":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def encode(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def session_doc(session: str, name: str | None, waits: list, now: str) -> dict:
    return {"session": session, "name": name, "waits": waits, "updated": now}


def index_doc(node: str | None, state: dict, now: str) -> dict:
    names = [
        {"name": name, "session": entry["session"], "open": len(entry["waits"])}
        for name, entry in sorted(state["names"].items())
        if entry["waits"]
    ]
    return {"node": node, "updated": now, "names": names}


def read_regular(path: str) -> bytes | None:
    """The bytes of ``path``, or None when it is not a regular file.

    Opened without blocking: a FIFO put where a file belongs must not wedge an op that
    holds the store's lock. Raises OSError as open() does.
    """
    import stat

    fd = os.open(path, os.O_RDONLY | _O_BINARY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _read(path: str) -> object:
    """The JSON in ``path``, or None if it is missing, unreadable, not a file or not JSON."""
    try:
        raw = read_regular(path)
        return None if raw is None else json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _ensure(path: str, doc: dict, keys: tuple) -> bool:
    """Rewrite ``path`` with ``doc`` unless it already says the same in ``keys``."""
    current = _read(path)
    if isinstance(current, dict) and all(k in current and current[k] == doc[k] for k in keys):
        return False
    atomic_write(path, encode(doc))
    return True


def session_file(folder: str, session: str) -> str:
    return os.path.join(folder, SESSIONS, session + ".json")


def sync(folder: str, state: dict, node: str | None, now: str, also: tuple = (), full: bool = False) -> int:
    """Bring the mirrors in ``folder`` in line with ``state``; returns how many files were written.

    Checked every time: the index and the file of every session holding a name, and the
    sessions in ``also`` (one that just lost its name). With ``full`` (after an op was cut
    short), every file in ``sessions/`` is checked and leftover temporary files go.
    """
    sessions_dir = os.path.join(folder, SESSIONS)
    make_private_folder(sessions_dir)
    bound = bound_sessions(state)
    targets = dict.fromkeys(bound)
    for sid in also:
        targets.setdefault(sid, None)
    if full:
        for base_dir in (folder, sessions_dir):
            for entry in os.listdir(base_dir):
                if entry.startswith(".") and entry.endswith(TMP_SUFFIX):
                    try:
                        os.unlink(os.path.join(base_dir, entry))
                    except OSError:
                        pass
        for entry in os.listdir(sessions_dir):
            if entry.endswith(".json"):
                try:
                    targets.setdefault(wait_session_id(entry[:-5]), None)
                except BadId:
                    pass  # not a file this module wrote; leave it alone
    written = 0
    for sid in targets:
        name = bound.get(sid)
        waits = state["names"][name]["waits"] if name else []
        doc = session_doc(sid, name, waits, now)
        written += _ensure(session_file(folder, sid), doc, ("session", "name", "waits"))
    written += _ensure(os.path.join(folder, INDEX), index_doc(node, state, now), ("node", "names"))
    if written:
        sync_folder(sessions_dir)
        sync_folder(folder)
    return written
