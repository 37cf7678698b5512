"""The store of record: one JSON file, changed only under an OS file lock.

``store.json`` holds the state (see ``rules``); ``store.lock`` is the lock, never replaced
so every process locks the same file; ``store.dirty`` marks an op that was writing when it
stopped, so the next op rechecks every mirror. The store is replaced atomically, so a
process killed at any point leaves either the old state or the new one.
"""

from __future__ import annotations

import os
import sys

from lichhook.coldstart import fastjson as json  # json's own C codec, without 3 ms of imports
from lichhook.diskio import read_regular
from lichhook.diskio import write_atomic as atomic_write
from lichhook.ids import BadId, wait_session_id
from lichhook.waits.mirror import SESSIONS
from lichhook.waits.rules import FORMAT, empty_state

STORE = "store.json"
LOCK = "store.lock"
DIRTY = "store.dirty"
# Why the store cannot be used, for the hooks, which never read the store itself.
BROKEN = "store.broken"
LOCK_TIMEOUT = 10.0


class StoreError(Exception):
    """The store cannot be used; the message is a sentence naming the file and the fix."""


class StoreUnusable(StoreError):
    """The store is corrupt, unreadable or not a file: no op can succeed until it is mended."""


class FolderLock:
    """An exclusive lock on ``<folder>/store.lock`` held across processes.

    The OS drops it when its holder dies, even by SIGKILL, so no stale lock outlives a crash.
    Waiting polls a non-blocking lock, so a stuck holder costs a bounded wait, not a hang.
    """

    def __init__(self, folder: str, timeout: float = LOCK_TIMEOUT) -> None:
        self.path = os.path.join(folder, LOCK)
        self.timeout = timeout
        self.fd = -1

    def __enter__(self) -> "FolderLock":
        import time

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                _lock(self.fd)
                return self
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = -1
                    raise StoreError(
                        f"the waits store is busy: another process has held {self.path} for over "
                        f"{self.timeout:g} s; try again, or end the process that holds it"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.002)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            try:
                _unlock(self.fd)
            finally:
                os.close(self.fd)
                self.fd = -1


if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _problem(state: object) -> str | None:
    """What is wrong with a loaded state, or None if every field has the right shape."""
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        return f"it is not a format-{FORMAT} waits store"
    names = state.get("names")
    if not isinstance(names, dict):
        return "it has no names table"
    for name, entry in names.items():
        if not isinstance(entry, dict):
            return f"the entry for {name!r} is not an object"
        session = entry.get("session")
        if session is not None:
            try:
                wait_session_id(session)
            except BadId:
                return f"the entry for {name!r} has a bad session id"
        nxt = entry.get("next")
        if not isinstance(nxt, int) or isinstance(nxt, bool) or nxt < 1:
            return f"the entry for {name!r} has no valid next id"
        waits = entry.get("waits")
        if not isinstance(waits, list) or not isinstance(entry.get("displaced"), list):
            return f"the entry for {name!r} has no list of waits"
        for wait in waits:
            if not isinstance(wait, dict) or not isinstance(wait.get("id"), str) or "what" not in wait:
                return f"a wait of {name!r} is malformed"
        for record in entry["displaced"]:
            if not isinstance(record, dict) or not {"session", "by", "at"} <= record.keys():
                return f"the adopt history of {name!r} is malformed"
    return None


def load(folder: str) -> dict:
    """The state in ``<folder>/store.json``; empty if there is none yet. Raises StoreError."""
    path = os.path.join(folder, STORE)
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return empty_state()
    except OSError as exc:
        raise StoreUnusable(f"cannot read the waits store {path}: {exc.strerror or exc}; check its permissions") from None
    if raw is None:
        raise StoreUnusable(f"the waits store {path} is not a regular file; move it aside to start with no waits")
    try:
        state = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
        state = None
        problem: str | None = "it is not valid JSON (empty, truncated or overwritten)"
    else:
        problem = _problem(state)
    if problem:
        raise StoreUnusable(
            f"the waits store {path} is corrupt: {problem}; move it aside to start with no waits "
            "(the files in sessions/ still list the last known waits), or restore it from a backup"
        )
    return state  # type: ignore[return-value]


def open_store(folder: str) -> dict:
    """``load``, keeping ``store.broken`` in line: it holds the refusal while the store is
    unusable, so that the hooks can say why the waits cannot be marked, and goes once the
    store loads again. Call it with the lock held."""
    broken = os.path.join(folder, BROKEN)
    try:
        state = load(folder)
    except StoreUnusable as exc:
        try:
            atomic_write(broken, str(exc).encode("utf-8"))
        except OSError:
            pass  # the refusal still says it all to the caller
        raise
    if os.path.exists(broken):
        try:
            os.unlink(broken)
        except OSError:
            pass  # Windows: a hook has it open this instant; the next op removes it
    return state


def save(folder: str, state: dict) -> None:
    atomic_write(os.path.join(folder, STORE), json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def mark_dirty(folder: str) -> None:
    """Note that an op is writing; ``clear_dirty`` removes the note once every file is done."""
    fd = os.open(os.path.join(folder, DIRTY), os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(fd)


def clear_dirty(folder: str) -> None:
    try:
        os.unlink(os.path.join(folder, DIRTY))
    except FileNotFoundError:
        pass


def is_dirty(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, DIRTY))


def mirrors_suspect(folder: str) -> bool:
    """Whether every mirror must be checked, not just those of the sessions holding names.

    True after an op was cut short (``store.dirty``), and when there is no store but there
    are session mirrors: the store was moved aside (as a corrupt store's refusal advises)
    or deleted, and the mirrors still list the waits it held.
    """
    if is_dirty(folder):
        return True
    return not os.path.exists(os.path.join(folder, STORE)) and os.path.isdir(os.path.join(folder, SESSIONS))

