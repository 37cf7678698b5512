"""The mirrored files the hooks read.

``sessions/<session id>.json`` and ``index.json`` are derived from the store's state and
rewritten under the store's lock, so after every op they agree with it. ``sync`` compares
what each file says (ignoring ``updated``) with what it should say and rewrites only the
files that differ: a changed, missing or corrupt mirror is mended by the next op.
"""

from __future__ import annotations

import os
import sys

from lichhook.coldstart import fastjson as json  # json's own C codec, without 3 ms of imports
from lichhook.diskio import is_temporary, read_regular
from lichhook.diskio import write_atomic as atomic_write
from lichhook.ids import BadId, wait_session_id
from lichhook.waits.rules import bound_sessions

SESSIONS = "sessions"
INDEX = "index.json"


def utc_now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_private_folder(path: str) -> None:
    """Create ``path`` (and parents) if missing; the folder itself gets mode 0700."""
    if not os.path.isdir(path):
        os.makedirs(path, 0o700, exist_ok=True)


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
                if is_temporary(entry):
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
