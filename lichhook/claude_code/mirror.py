"""Reading the waits mirror: ``sessions/<session id>.json`` and ``index.json``.

The waits module writes these files atomically; this side only reads them, and trusts
nothing in them. Every string that ends up in a printed command (names, session ids,
wait ids) passes the same checks the waits module applies, so a tampered file cannot
smuggle shell text into a command shown to the model.
"""

from __future__ import annotations

import os
import sys

from lichhook.diskio import read_regular

MAX_MIRROR_BYTES = 8 << 20  # far above any real mirror; a bound for a hostile one


MISSING = object()  # read_json's answer for a file that does not exist (JSON null is None)


class MirrorError(Exception):
    """A mirror file that cannot be read or makes no sense; the message says which and why."""


class Wait:
    """One open wait as the mirror shows it."""

    def __init__(self, id: str, what: str, family: str | None, created: str,
                 watched: bool, said: bool) -> None:
        self.id = id
        self.what = what
        self.family = family
        self.created = created
        self.watched = watched
        self.said = said

    @property
    def holds_turn(self) -> bool:
        """Open (it is in the mirror) and neither watched nor said."""
        return not self.watched and not self.said


class SessionWaits:
    """The name bound to a session (or None) and its open waits."""

    def __init__(self, name: str | None, waits: list) -> None:
        self.name = name
        self.waits = waits


class IndexName:
    """A name on the node with open waits, and the session that holds it."""

    def __init__(self, name: str, session: str, open_count: int) -> None:
        self.name = name
        self.session = session
        self.open = open_count


def session_file(folder: str, session: str) -> str:
    """``session`` must have passed ``wait_session_id``."""
    return os.path.join(folder, "sessions", session + ".json")


def index_file(folder: str) -> str:
    return os.path.join(folder, "index.json")


def store_problem(folder: str) -> str | None:
    """Why the waits store cannot be used, as the last op refused for it, or None.

    The waits module keeps ``store.broken`` while its store is corrupt or unreadable: the
    wait commands the hooks print would all be refused until someone mends it.
    """
    try:
        raw = read_regular(os.path.join(folder, "store.broken"), 2048)
    except OSError:
        return None
    if raw is None:
        return None
    return raw.decode("utf-8", "replace").strip() or "the waits store cannot be used"


def read_json(path: str) -> object:
    """The parsed file, or MISSING when it does not exist. Raises MirrorError otherwise."""
    raw = _read_bytes(path)
    if raw is None:
        return MISSING
    from lichhook.coldstart import fastjson as json  # json's own C parser, without 3 ms of imports

    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MirrorError(f"{path} is not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise MirrorError(f"{path} is JSON nested too deeply") from None
    except ValueError as exc:
        raise MirrorError(f"{path} is not JSON ({exc})") from None


def _read_bytes(path: str) -> bytes | None:
    # On Windows a file being replaced can refuse readers for a moment: retry briefly.
    tries = 5 if sys.platform == "win32" else 1
    for attempt in range(tries):
        try:
            raw = read_regular(path, MAX_MIRROR_BYTES + 1)
        except FileNotFoundError:
            return None
        except PermissionError as exc:
            if attempt + 1 < tries:
                import time

                time.sleep(0.02)
                continue
            raise MirrorError(f"cannot read {path}: {exc.strerror or exc}") from None
        except OSError as exc:
            raise MirrorError(f"cannot read {path}: {exc.strerror or exc}") from None
        if raw is None:
            raise MirrorError(f"{path} is not a regular file")
        if len(raw) > MAX_MIRROR_BYTES:
            raise MirrorError(f"{path} is larger than {MAX_MIRROR_BYTES} bytes")
        return raw
    return None  # not reached


def valid_name(value: object) -> bool:
    """``who@node`` (or a bare ``who``) as the waits module accepts it."""
    from lichhook.ids import BadId, wait_node, wait_who

    if not isinstance(value, str):
        return False
    who, at, node = value.partition("@")
    try:
        wait_who(who)
        if at:
            wait_node(node)
    except BadId:
        return False
    return True


def valid_session(value: object) -> bool:
    from lichhook.ids import BadId, wait_session_id

    try:
        wait_session_id(value)
    except BadId:
        return False
    return True


def load_session(folder: str, session: str) -> SessionWaits | None:
    """The session's mirror, or None when it has none (it never held a name)."""
    path = session_file(folder, session)
    doc = read_json(path)
    if doc is MISSING:
        return None
    return parse_session(doc, session, path)


def parse_session(doc: object, session: str, path: str) -> SessionWaits:
    if not isinstance(doc, dict):
        raise MirrorError(f"{path} holds JSON {type(doc).__name__}, not an object")
    if doc.get("session", session) != session:
        raise MirrorError(f"{path} is for session {str(doc.get('session'))[:80]!r}, not {session!r}")
    waits = doc.get("waits")
    if not isinstance(waits, list):
        raise MirrorError(f"{path} has no list of waits")
    name = doc.get("name")
    if name is not None and not valid_name(name):
        raise MirrorError(f"{path} names {str(name)[:80]!r}, which is not a who@node name")
    if waits and name is None:
        raise MirrorError(f"{path} lists waits but no name holding them")
    return SessionWaits(name, [parse_wait(w, path, i) for i, w in enumerate(waits)])


def parse_wait(item: object, path: str, index: int) -> Wait:
    where = f"{path}, wait {index + 1}"
    if not isinstance(item, dict):
        raise MirrorError(f"{where} is not an object")
    wid = item.get("id")
    if not isinstance(wid, str) or not valid_name(wid) or "@" in wid:
        raise MirrorError(f"{where} has no valid id")
    what = item.get("what")
    if not isinstance(what, str):
        raise MirrorError(f"{where} ({wid}) has no text in 'what'")
    family = item.get("family")
    if family is not None and not isinstance(family, str):
        raise MirrorError(f"{where} ({wid}) has a family that is not a string")
    created = item.get("created")
    return Wait(wid, what, family or None, created if isinstance(created, str) else "",
                _marked(item, "watched", where), _marked(item, "said", where))


def _marked(item: dict, key: str, where: str) -> bool:
    value = item.get(key)
    if value is None:
        return False
    if isinstance(value, dict):
        return True
    raise MirrorError(f"{where} has {key!r} that is neither null nor an object")


def load_index(folder: str) -> tuple:
    """(names, skipped): the valid entries of index.json and how many were not.

    A missing index means no name has open waits. One bad entry does not hide the
    others; the caller says how many were skipped.
    """
    path = index_file(folder)
    doc = read_json(path)
    if doc is MISSING:
        return [], 0
    if not isinstance(doc, dict) or not isinstance(doc.get("names"), list):
        raise MirrorError(f"{path} has no list of names")
    names, skipped = [], 0
    for entry in doc["names"]:
        if not isinstance(entry, dict):
            skipped += 1
            continue
        name, session, count = entry.get("name"), entry.get("session"), entry.get("open")
        if (not isinstance(name, str) or not valid_name(name) or not isinstance(session, str) or not valid_session(session)
                or not isinstance(count, int) or isinstance(count, bool) or count < 1):
            skipped += 1
            continue
        names.append(IndexName(name, session, count))
    return names, skipped
