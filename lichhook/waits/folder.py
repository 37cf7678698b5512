"""The waits folder on disk: its layout, the checks that make it safe to use, how each file
in it is opened, read and written, and the transaction every op runs in.

Everything that touches the folder goes through here: the ``wait`` command and the MCP
tool (through ``api.run_op`` and ``transaction``) and the Claude Code hooks (through
``for_hooks``, which only reads, apart from the Stop hook's own counters)::

    <waits folder>/               owned by the user, writable by nobody else; made 0700
      lichhook-waits.json         the marker: {"lichhook": "waits", "format": 1}
      store.json                  the store of record (STORE_FORMAT, below)
      store.lock                  the lock every op holds; holds "<pid> <count>" of the last holder
      queue/<ticket>              POSIX: one empty file per op waiting for the lock, in turn
      store.dirty                 present while an op writes; left behind if it was killed
      store.broken                the sentence the last op was refused with, while the store is unusable
      index.json                  mirror: every name with open waits, and the session holding it
      sessions/<session id>.json  mirror: one session's name and open waits
      stops/<session id>.count    the Stop hook's refusals in a row for one session

Rules every access keeps:

- The folder is used only when it is the user's own and nobody else can write to it
  (POSIX: owner and mode; Windows: owner and access list), and so are ``sessions/``,
  ``stops/`` and ``queue/``. Whoever can write there decides what the Stop hook tells the model.
- lichhook writes only in a folder it can prove is its own: one holding the marker, which
  it writes when it creates the folder; an empty folder; or a folder left by a release that
  wrote no marker, recognised by holding nothing but lichhook's own files (and then given
  the marker). Any other folder is refused, naming what is in it.
- No link inside the folder is ever followed; every file is opened so that anything but a
  regular file (a FIFO, a folder, a device) is refused at once, never waited on.
- Mirrors and counters are replaced whole (write, fsync, rename); the store only under
  the lock, with the dirty mark around the writes, so an op cut short anywhere is
  finished by the next one.

Session ids are file names here; they arrive checked and case-folded by
``lichhook.ids.wait_session_id``, so no two of them share a file on a file system that
ignores case.
"""

from __future__ import annotations

import os
import sys

from lichhook.coldstart import fastjson as json  # json's own C codec, without 3 ms of imports
from lichhook.diskio import Dir, NotAFile, temporary_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional, Tuple

    from lichhook.waits.lock import Turn

MARKER = "lichhook-waits.json"
FOLDER_FORMAT = 1
STORE = "store.json"
LOCK = "store.lock"
DIRTY = "store.dirty"
BROKEN = "store.broken"
INDEX = "index.json"
SESSIONS = "sessions"
STOPS = "stops"
QUEUE = "queue"
MIRROR_SUFFIX = ".json"
COUNTER_SUFFIX = ".count"

# Every name a lichhook release has written at the top of the folder.
_OWN_TOP = frozenset([MARKER, STORE, LOCK, DIRTY, BROKEN, INDEX, SESSIONS, STOPS, QUEUE])
# Top-level files written under the lock: a temporary of one of them outlives only its writer.
_LOCKED_TOP_FILES = (STORE, BROKEN, INDEX)

LOCK_TIMEOUT = 10.0
MAX_MIRROR_BYTES = 8 << 20  # far above any real mirror; a bound for a hostile one
MAX_SMALL_FILE = 4096  # the marker, store.broken, a counter
# A Stop hook's counter temporary older than this lost its writer: Claude Code ends a hook
# after its timeout (60 s unless set; install sets 10 s).
STALE_SECONDS = 120.0

# store.json (format 1):
#   {"format": 1,
#    "names": {"who@node": {"session": <session id or null>, "since": <UTC time or null>,
#                           "next": <next wait number>, "waits": [<open waits, oldest first>],
#                           "displaced": [{"session": <old id>, "by": <new id>, "at": <time>}]}}}
# A wait: {"id": "w3", "what": str, "family": str|null, "created": <time>,
#          "watched": null|{"at", "note"}, "said": null|{"at", "note"}}. Times are UTC
# "YYYY-MM-DDTHH:MM:SSZ". The rules that change it are in lichhook.waits.rules.
STORE_FORMAT = 1


class FolderRefused(Exception):
    """The folder, or a file in it, cannot be used safely; the message names it and the fix."""


class StoreUnusable(FolderRefused):
    """The store is corrupt, unreadable or not a file: no op can succeed until it is mended."""


class MirrorError(Exception):
    """A mirror a hook reads cannot be read or makes no sense; the message says which and why."""


def empty_state() -> dict:
    return {"format": STORE_FORMAT, "names": {}}


def utc_now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---- the store's format ---------------------------------------------------------------------


def store_format_problem(state: object) -> str | None:
    """What is wrong with a loaded store, or None if every field has the right shape."""
    from lichhook.ids import BadId, wait_session_id

    if not isinstance(state, dict) or state.get("format") != STORE_FORMAT:
        return f"it is not a format-{STORE_FORMAT} waits store"
    names = state.get("names")
    if not isinstance(names, dict):
        return "it has no names table"
    holders: dict = {}
    for name, entry in names.items():
        if not isinstance(entry, dict):
            return f"the entry for {name!r} is not an object"
        session = entry.get("session")
        if session is not None:
            try:
                folded = wait_session_id(session)
            except BadId:
                return f"the entry for {name!r} has a bad session id"
            if folded in holders:
                return (f"{holders[folded]!r} and {name!r} are held by sessions whose ids differ "
                        "only in case, which are one session")
            holders[folded] = name
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


def _fold_sessions(state: dict) -> None:
    """Session ids as ``wait_session_id`` gives them (lower case); a release before the
    ids were folded may have stored them as they came."""
    for entry in state["names"].values():
        if isinstance(entry.get("session"), str):
            entry["session"] = entry["session"].lower()
        for record in entry["displaced"]:
            for key in ("session", "by"):
                if isinstance(record.get(key), str):
                    record[key] = record[key].lower()


def bound_sessions(state: dict) -> dict:
    """session id -> the name it holds, for every bound name."""
    return {entry["session"]: name for name, entry in state["names"].items() if entry["session"]}


# ---- the mirrors' format --------------------------------------------------------------------


def session_doc(session: str, name: str | None, waits: list, now: str) -> dict:
    """``sessions/<session>.json``: the name bound to the session (or null) and its open waits."""
    return {"session": session, "name": name, "waits": waits, "updated": now}


def index_doc(node: str | None, state: dict, now: str) -> dict:
    """``index.json``: every name with open waits, sorted, with the session holding it."""
    names = [
        {"name": name, "session": entry["session"], "open": len(entry["waits"])}
        for name, entry in sorted(state["names"].items())
        if entry["waits"]
    ]
    return {"node": node, "updated": now, "names": names}


def encode(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_SESSION_KEYS = ("session", "name", "waits")  # what a session mirror says (``updated`` aside)
_INDEX_KEYS = ("node", "names")


class Wait:
    """One open wait as a session mirror shows it."""

    def __init__(self, id: str, what: str, family: str | None, created: str,  # noqa: A002
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
    """A name with open waits, and the session that holds it."""

    def __init__(self, name: str, session: str, open_count: int) -> None:
        self.name = name
        self.session = session
        self.open = open_count


def _valid_name(value: object) -> bool:
    """``who@node`` (or a bare ``who``) as the ops accept it."""
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


def _valid_session(value: object) -> bool:
    """A session id exactly as this module writes it: valid and already folded."""
    from lichhook.ids import BadId, wait_session_id

    try:
        return wait_session_id(value) == value
    except BadId:
        return False


def parse_session(doc: object, session: str, path: str) -> SessionWaits:
    """A session mirror, checked: every string that may reach a printed command passes the
    same check the ops apply, so a tampered file cannot put shell text into one."""
    from lichhook.ids import wait_id_problem

    if not isinstance(doc, dict):
        raise MirrorError(f"{path} holds JSON {type(doc).__name__}, not an object")
    if doc.get("session", session) != session:
        raise MirrorError(f"{path} is for session {str(doc.get('session'))[:80]!r}, not {session!r}")
    waits = doc.get("waits")
    if not isinstance(waits, list):
        raise MirrorError(f"{path} has no list of waits")
    name = doc.get("name")
    if name is not None and not _valid_name(name):
        raise MirrorError(f"{path} names {str(name)[:80]!r}, which is not a who@node name")
    if waits and name is None:
        raise MirrorError(f"{path} lists waits but no name holding them")
    parsed = []
    for index, item in enumerate(waits):
        where = f"{path}, wait {index + 1}"
        if not isinstance(item, dict):
            raise MirrorError(f"{where} is not an object")
        wid = item.get("id")
        if not isinstance(wid, str) or wait_id_problem(wid):
            raise MirrorError(f"{where} has no valid id")
        what = item.get("what")
        if not isinstance(what, str):
            raise MirrorError(f"{where} ({wid}) has no text in 'what'")
        family = item.get("family")
        if family is not None and not isinstance(family, str):
            raise MirrorError(f"{where} ({wid}) has a family that is not a string")
        created = item.get("created")
        parsed.append(Wait(wid, what, family or None, created if isinstance(created, str) else "",
                           _marked(item, "watched", where), _marked(item, "said", where)))
    return SessionWaits(name, parsed)


def _marked(item: dict, key: str, where: str) -> bool:
    value = item.get(key)
    if value is None:
        return False
    if isinstance(value, dict):
        return True
    raise MirrorError(f"{where} has {key!r} that is neither null nor an object")


def parse_index(doc: object, path: str) -> tuple:
    """(names, skipped): the valid entries of index.json and how many were not."""
    if not isinstance(doc, dict) or not isinstance(doc.get("names"), list):
        raise MirrorError(f"{path} has no list of names")
    names, skipped = [], 0
    for entry in doc["names"]:
        if not isinstance(entry, dict):
            skipped += 1
            continue
        name, session, count = entry.get("name"), entry.get("session"), entry.get("open")
        if (not isinstance(name, str) or not isinstance(session, str) or not _valid_name(name)
                or not _valid_session(session) or not isinstance(count, int) or isinstance(count, bool) or count < 1):
            skipped += 1
            continue
        names.append(IndexName(name, session, count))
    return names, skipped


def _json_or_none(raw: bytes) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _read_json(folder: Dir, name: str) -> object:
    """The JSON in ``name``, or None if it cannot be read or parsed."""
    try:
        return _json_or_none(folder.read(name, MAX_MIRROR_BYTES + 1))
    except OSError:
        return None


def _is_index_doc(doc: object) -> bool:
    return isinstance(doc, dict) and set(doc) == {"node", "updated", "names"}


def _is_session_doc(doc: object, session: str) -> bool:
    return (isinstance(doc, dict) and set(doc) == {"session", "name", "waits", "updated"}
            and doc["session"] == session)


def _is_counter(folder: Dir, name: str) -> bool:
    try:
        return folder.read(name, 32).strip().isdigit()
    except OSError:
        return False


def _previous_stem(entry: str, suffix: str) -> str | None:
    """The session id in a file name an earlier release wrote (it did not fold case)."""
    from lichhook.ids import BadId, wait_session_id

    if not entry.endswith(suffix):
        return None
    stem = entry[: -len(suffix)]
    try:
        wait_session_id(stem)
    except BadId:
        return None
    return stem


def _mirror_stem(entry: str) -> str | None:
    """The session of ``sessions/<entry>`` if it is a name this module writes, else None."""
    if not entry.endswith(MIRROR_SUFFIX):
        return None
    stem = entry[: -len(MIRROR_SUFFIX)]
    return stem if _valid_session(stem) else None


# ---- the folder checks ----------------------------------------------------------------------


def _user_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _check_private(folder: Dir, what: str) -> None:
    """Refuse a folder that is not the user's own or that others may write to."""
    if sys.platform == "win32":
        from lichhook.waits.winacl import folder_problem

        problem = folder_problem(folder.path)
        if problem:
            raise FolderRefused(f"{what} {folder.path} {problem}; choose a folder of your own with "
                                "--waits-dir or LICHHOOK_WAITS_DIR")
        return
    st = folder.stat()
    me = os.geteuid()
    if st.st_uid != me:
        raise FolderRefused(
            f"{what} {folder.path} belongs to {_user_name(st.st_uid)}, not to you "
            f"({_user_name(me)}): lichhook keeps waits only in a folder of your own, since whoever "
            "owns it decides what your Stop hook tells the model; choose another folder with "
            "--waits-dir or LICHHOOK_WAITS_DIR")
    if st.st_mode & 0o022:
        raise FolderRefused(
            f"{what} {folder.path} can be written by other users (mode {st.st_mode & 0o7777:04o}): "
            "whoever can write there decides what your Stop hook tells the model; run "
            f"chmod go-w {folder.path} (lichhook makes its folders 0700), or choose another folder "
            "with --waits-dir or LICHHOOK_WAITS_DIR")


def _not_a_file_sentence(path: str, kind: str) -> str:
    return (f"{path} is {kind}, not a regular file, and lichhook never opens anything else in "
            "the waits folder (nor follows a link there); remove it")


def _kind(exc: OSError) -> str:
    return getattr(exc, "kind", "not a regular file")


def _open_root(path: str, create: bool) -> Dir | None:
    """The checked waits folder, created 0700 if ``create``; None if it does not exist."""
    import stat

    try:
        link = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        os.makedirs(path, 0o700, exist_ok=True)
        link = os.lstat(path)
    # The folder itself may be a link the user made; one made by anyone else is refused.
    if stat.S_ISLNK(link.st_mode) and sys.platform != "win32" and link.st_uid not in (os.geteuid(), 0):
        raise FolderRefused(
            f"the waits folder {path} is a symbolic link made by {_user_name(link.st_uid)}, not by "
            "you; choose a folder of your own with --waits-dir or LICHHOOK_WAITS_DIR")
    try:
        root = Dir.open(path)
    except NotADirectoryError:
        raise FolderRefused(f"the waits folder {path} is not a folder; choose another with "
                            "--waits-dir or LICHHOOK_WAITS_DIR") from None
    try:
        _check_private(root, "the waits folder")
    except BaseException:
        root.close()
        raise
    return root


class WaitsFolder:
    """A checked waits folder, held open. Make one with ``for_op`` or ``for_hooks``."""

    def __init__(self, path: str, root: Dir, kind: str) -> None:
        self.path = path
        self.root = root
        # "marked": holds the marker; "new": empty so far; "previous": written by a
        # release without the marker, recognised by its files.
        self.kind = kind
        self._subdirs: dict = {}

    def close(self) -> None:
        for sub in self._subdirs.values():
            sub.close()
        self._subdirs.clear()
        self.root.close()

    def __enter__(self) -> "WaitsFolder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- paths, for messages and printed commands --

    def session_path(self, session: str) -> str:
        return os.path.join(self.path, SESSIONS, session + MIRROR_SUFFIX)

    def counter_path(self, session: str) -> str:
        return os.path.join(self.path, STOPS, session + COUNTER_SUFFIX)

    def index_path(self) -> str:
        return os.path.join(self.path, INDEX)

    # -- recognising the folder --

    def _read_marker(self) -> bool:
        """True if the marker is there and of a format this release knows."""
        try:
            raw = self.root.read(MARKER, MAX_SMALL_FILE)
        except FileNotFoundError:
            return False
        except NotAFile as exc:
            raise FolderRefused(_not_a_file_sentence(exc.filename, _kind(exc))) from None
        doc = _json_or_none(raw)
        fmt = doc.get("format") if isinstance(doc, dict) and doc.get("lichhook") == "waits" else None
        if not isinstance(fmt, int) or isinstance(fmt, bool):
            raise FolderRefused(
                f"{self.root.join(MARKER)} is not a lichhook waits marker; if this folder is not "
                "lichhook's, choose another with --waits-dir or LICHHOOK_WAITS_DIR, otherwise "
                f"remove that file and lichhook will recognise the folder by its files")
        if fmt != FOLDER_FORMAT:
            raise FolderRefused(
                f"the waits folder {self.path} is in format {fmt}, which a later lichhook wrote "
                f"(this one knows format {FOLDER_FORMAT}); use that lichhook, or another folder")
        return True

    def _recognise(self) -> None:
        """Set ``kind``, or refuse a folder holding anything lichhook did not write."""
        for _ in range(3):
            if self._read_marker():
                self.kind = "marked"
                return
            names = self.root.names()
            if MARKER not in names:
                break
            # Another process made the folder and marked it between the read and the
            # listing (ops started together on a new folder): read it again.
        if all(temporary_target(n) == MARKER for n in names):
            self.kind = "new"  # empty, or another process is writing the marker this instant
            return
        foreign = [n for n in names if n not in _OWN_TOP and temporary_target(n) not in _OWN_TOP]
        if foreign or LOCK not in names:
            self._refuse_foreign(sorted(foreign) or sorted(names))
        self.kind = "previous"

    def _refuse_foreign(self, entries: list) -> None:
        shown = ", ".join(repr(n) for n in entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise FolderRefused(
            f"the folder {self.path} is not a lichhook waits folder: it has no {MARKER} and holds "
            f"{shown}, which lichhook cannot show it wrote, so lichhook changes nothing in it; point "
            "--waits-dir or LICHHOOK_WAITS_DIR at a new or empty folder (lichhook creates it), or "
            "at the folder your earlier waits are in")

    def _adopt_previous(self) -> None:
        """Give a folder of a release without the marker its marker, once every file in it
        is shown to be one lichhook writes."""
        foreign = []
        if INDEX in self.root.names() and not _is_index_doc(_read_json(self.root, INDEX)):
            foreign.append(INDEX)
        sessions = self._sub(SESSIONS, create=False)
        for name in sessions.names() if sessions is not None else ():
            assert sessions is not None
            target = temporary_target(name)
            stem = _previous_stem(target or name, MIRROR_SUFFIX)
            if stem is None or (target is None and not _is_session_doc(_read_json(sessions, name), stem)):
                foreign.append(f"{SESSIONS}/{name}")
        stops = self._sub(STOPS, create=False)
        for name in stops.names() if stops is not None else ():
            assert stops is not None
            target = temporary_target(name)
            stem = _previous_stem(target or name, COUNTER_SUFFIX)
            if stem is None or (target is None and not _is_counter(stops, name)):
                foreign.append(f"{STOPS}/{name}")
        if foreign:
            self._refuse_foreign(foreign)
        self._write_marker()
        self.kind = "marked"

    def _write_marker(self) -> None:
        self.root.write_atomic(MARKER, json.dumps({"lichhook": "waits", "format": FOLDER_FORMAT}).encode() + b"\n")

    # -- subfolders --

    def _sub(self, name: str, create: bool) -> Dir | None:
        """``sessions/``, ``stops/`` or ``queue/``, checked like the folder; None if missing."""
        if name in self._subdirs:
            return self._subdirs[name]
        try:
            sub = self.root.subdir(name, create=create)
        except FileNotFoundError:
            return None
        except NotAFile as exc:
            raise FolderRefused(
                f"{exc.filename} is {_kind(exc)}, not a folder: lichhook never follows a link inside "
                "the waits folder; remove it") from None
        try:
            _check_private(sub, "the folder")
        except BaseException:
            sub.close()
            raise
        self._subdirs[name] = sub
        return sub

    # -- small files: the dirty and broken marks --

    def _regular_or_missing(self, name: str) -> bool:
        """Whether ``name`` exists; refuses one that is not a regular file."""
        import stat

        try:
            mode = self.root.lstat(name).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(mode):
            from lichhook.diskio import kind_of

            raise FolderRefused(_not_a_file_sentence(self.root.join(name), kind_of(mode)))
        return True

    def is_dirty(self) -> bool:
        return self._regular_or_missing(DIRTY)

    def mark_dirty(self) -> None:
        """Note that an op is writing; ``clear_dirty`` removes the note once every file is done."""
        try:
            os.close(self.root.open_file(DIRTY, os.O_WRONLY | os.O_CREAT))
        except NotAFile as exc:
            raise FolderRefused(_not_a_file_sentence(exc.filename, _kind(exc))) from None

    def clear_dirty(self) -> None:
        self.root.unlink(DIRTY)

    def mirrors_suspect(self) -> bool:
        """Whether every mirror must be checked, not just those of the sessions holding names.

        True after an op was cut short (``store.dirty``), and when there is no store but
        there are session mirrors: the store was moved aside (as a corrupt store's refusal
        advises) or deleted, and the mirrors still list the waits it held.
        """
        if self.is_dirty():
            return True
        if self._regular_or_missing(STORE):
            return False
        sessions = self._sub(SESSIONS, create=False)
        return sessions is not None and any(_mirror_stem(n) for n in sessions.names())

    # -- the store --

    def load_store(self) -> dict:
        """The state in ``store.json``, session ids folded; empty if there is none yet."""
        path = self.root.join(STORE)
        try:
            raw = self.root.read(STORE)
        except FileNotFoundError:
            return empty_state()
        except NotAFile as exc:
            raise StoreUnusable(f"the waits store {path} is {_kind(exc)}, not a regular file; move it "
                                "aside to start with no waits") from None
        except OSError as exc:
            raise StoreUnusable(f"cannot read the waits store {path}: {exc.strerror or exc}; check its "
                                "permissions") from None
        try:
            state = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            state = None
            problem: str | None = "it is not valid JSON (empty, truncated or overwritten)"
        else:
            problem = store_format_problem(state)
        if problem:
            raise StoreUnusable(
                f"the waits store {path} is corrupt: {problem}; move it aside to start with no waits "
                "(the files in sessions/ still list the last known waits), or restore it from a backup")
        _fold_sessions(state)  # type: ignore[arg-type]
        return state  # type: ignore[return-value]

    def open_store(self) -> dict:
        """``load_store``, keeping ``store.broken`` in line: it holds the refusal while the
        store is unusable, so that the hooks can say why the waits cannot be marked, and
        goes once the store loads again. Call it with the lock held."""
        try:
            state = self.load_store()
        except StoreUnusable as exc:
            try:
                self._regular_or_missing(BROKEN)  # refuses a link or FIFO there: left alone
                self.root.write_atomic(BROKEN, str(exc).encode("utf-8"))
            except (OSError, FolderRefused):
                pass  # the refusal still says it all to the caller
            raise
        if self._regular_or_missing(BROKEN):
            try:
                self.root.unlink(BROKEN)
            except OSError:
                pass  # Windows: a hook has it open this instant; the next op removes it
        return state

    def save_store(self, state: dict) -> None:
        self.root.write_atomic(STORE, json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

    # -- the mirrors --

    def _ensure(self, folder: Dir, name: str, doc: dict, keys: tuple) -> bool:
        """Rewrite ``name`` with ``doc`` unless it already says the same in ``keys``."""
        try:
            current = _json_or_none(folder.read(name))
        except OSError:
            current = None  # missing, unreadable or not a file: replaced below
        if isinstance(current, dict) and all(k in current and current[k] == doc[k] for k in keys):
            return False
        folder.write_atomic(name, encode(doc))
        return True

    def sync(self, state: dict, node: str | None, now: str, also: tuple = (), full: bool = False) -> int:
        """Bring the mirrors in line with ``state``; returns how many files were written.

        Checked every time: the index and the file of every session holding a name, and
        the sessions in ``also`` (those that just lost their name). With ``full`` (after
        an op was cut short, or with the store gone), every mirror in ``sessions/`` is
        checked and leftover temporaries of files written under the lock go.
        """
        sessions = self._sub(SESSIONS, create=True)
        assert sessions is not None
        bound = bound_sessions(state)
        targets = dict.fromkeys(bound)
        for sid in also:
            targets.setdefault(sid, None)
        if full:
            for entry in self.root.names():
                if temporary_target(entry) in _LOCKED_TOP_FILES:
                    _unlink_quietly(self.root, entry)
            for entry in sessions.names():
                target = temporary_target(entry)
                if target is not None:
                    if _mirror_stem(target):
                        _unlink_quietly(sessions, entry)
                    continue
                sid = _mirror_stem(entry)
                if sid:
                    targets.setdefault(sid, None)
        written = 0
        for sid in targets:
            name = bound.get(sid)
            doc = session_doc(sid, name, state["names"][name]["waits"] if name else [], now)
            written += self._ensure(sessions, sid + MIRROR_SUFFIX, doc, _SESSION_KEYS)
        written += self._ensure(self.root, INDEX, index_doc(node, state, now), _INDEX_KEYS)
        if written:
            sessions.sync()
            self.root.sync()
        return written

    def clean_stops(self) -> None:
        """Remove temporaries a Stop hook left in ``stops/`` when it was cut short. A
        cleanup only: an unusable ``stops/`` is the Stop hook's to report, not the op's."""
        try:
            stops = self._sub(STOPS, create=False)
        except (FolderRefused, OSError):
            return
        if stops is not None:
            _clean_stale(stops, COUNTER_SUFFIX)

    # -- the lock --

    def lock(self, timeout: float = LOCK_TIMEOUT) -> "_Held":
        return _Held(self, timeout)

    # -- what the hooks read --

    def session_waits(self, session: str) -> SessionWaits | None:
        """The session's mirror, or None when it has none (it never held a name)."""
        path = self.session_path(session)
        sessions = self._sub(SESSIONS, create=False)
        if sessions is None:
            return None
        raw = _read_mirror(sessions, session + MIRROR_SUFFIX, path)
        if raw is None:
            return None
        return parse_session(_parse_mirror(raw, path), session, path)

    def index_names(self) -> tuple:
        """(names, skipped) from ``index.json``: the valid entries and how many were not.
        A missing index means no name has open waits."""
        path = self.index_path()
        raw = _read_mirror(self.root, INDEX, path)
        if raw is None:
            return [], 0
        return parse_index(_parse_mirror(raw, path), path)

    def store_refusal(self) -> str | None:
        """Why the store cannot be used, as the last op refused for it, or None.

        The ops keep ``store.broken`` while the store is corrupt or unreadable: the wait
        commands the hooks print would all be refused until someone mends it.
        """
        try:
            raw = self.root.read(BROKEN, MAX_SMALL_FILE)
        except OSError:
            return None
        return raw.decode("utf-8", "replace").strip() or "the waits store cannot be used"

    # -- the Stop hook's counters --

    def strikes(self, session: str) -> int:
        """Refusals in a row so far; anything unreadable counts as none (the write will tell)."""
        try:
            stops = self._sub(STOPS, create=False)
            if stops is None:
                return 0
            value = int(stops.read(session + COUNTER_SUFFIX, 32).strip() or b"0")
        except (OSError, ValueError, FolderRefused):
            return 0
        return max(0, value)

    def set_strikes(self, session: str, value: int) -> str | None:
        """Write the count atomically; return why it failed, or None."""
        try:
            stops = self._sub(STOPS, create=True)
            assert stops is not None
            stops.write_atomic(session + COUNTER_SUFFIX, b"%d\n" % value)
            _clean_stale(stops, COUNTER_SUFFIX)
        except FolderRefused as exc:
            return str(exc)
        except OSError as exc:
            return f"{type(exc).__name__}: {exc.strerror or exc}"
        return None

    def reset_strikes(self, session: str) -> str | None:
        """Forget the refusals; return why that failed, or None."""
        try:
            stops = self._sub(STOPS, create=False)
            if stops is not None:
                stops.unlink(session + COUNTER_SUFFIX)
        except FolderRefused as exc:
            return str(exc)
        except OSError as exc:
            return f"{type(exc).__name__}: {exc.strerror or exc}"
        return None


def _unlink_quietly(folder: Dir, name: str) -> None:
    try:
        folder.unlink(name)
    except OSError:
        pass


def _clean_stale(folder: Dir, suffix: str) -> None:
    """Remove write_atomic temporaries for ``*<suffix>`` files older than STALE_SECONDS."""
    import time

    now = time.time()
    try:
        names = folder.names()
    except OSError:
        return
    for name in names:
        target = temporary_target(name)
        if target is None or not target.endswith(suffix):
            continue
        try:
            if now - folder.lstat(name).st_mtime > STALE_SECONDS:
                folder.unlink(name)
        except OSError:
            pass


def _read_mirror(folder: Dir, name: str, path: str) -> bytes | None:
    """A mirror's bytes, or None when it does not exist. Raises MirrorError otherwise."""
    # On Windows a file being replaced can refuse readers for a moment: retry briefly.
    tries = 5 if sys.platform == "win32" else 1
    for attempt in range(tries):
        try:
            raw = folder.read(name, MAX_MIRROR_BYTES + 1)
        except FileNotFoundError:
            return None
        except NotAFile as exc:
            raise MirrorError(f"{path} is {_kind(exc)}, not a regular file") from None
        except PermissionError as exc:
            if attempt + 1 < tries:
                import time

                time.sleep(0.02)
                continue
            raise MirrorError(f"cannot read {path}: {exc.strerror or exc}") from None
        except OSError as exc:
            raise MirrorError(f"cannot read {path}: {exc.strerror or exc}") from None
        if len(raw) > MAX_MIRROR_BYTES:
            raise MirrorError(f"{path} is larger than {MAX_MIRROR_BYTES} bytes")
        return raw
    return None  # not reached


def _parse_mirror(raw: bytes, path: str) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MirrorError(f"{path} is not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise MirrorError(f"{path} is JSON nested too deeply") from None
    except ValueError as exc:
        raise MirrorError(f"{path} is not JSON ({exc})") from None


# ---- the lock ---------------------------------------------------------------------------------

_RECORD_SIZE = 32  # "<pid> <count>\n", right-aligned to a fixed width


class _Held:
    """``store.lock`` held, as a context manager. The holder records its process id and a
    running count of acquisitions at the start of the file, so that an op that gives up
    can say what happened: one process held the lock throughout, or it changed hands."""

    def __init__(self, folder: WaitsFolder, timeout: float) -> None:
        self.folder = folder
        self.timeout = timeout
        self.fd = -1
        self.turn: Optional[Turn] = None

    def __enter__(self) -> "_Held":
        from lichhook.waits import lock

        root = self.folder.root
        try:
            self.fd = root.open_file(LOCK, os.O_RDWR | os.O_CREAT)
        except NotAFile as exc:
            raise FolderRefused(_not_a_file_sentence(exc.filename, _kind(exc))) from None
        try:
            _, count_before = _read_record(self.fd)
            # POSIX waiters queue in queue/; Windows grants waiting locks in turn itself.
            queue = self.folder._sub(QUEUE, create=True) if root.fd >= 0 else None
            self.turn = lock.take_turn(queue, self.fd, self.timeout)
            if self.turn is None:
                raise FolderRefused(self._busy(count_before))
            _, count = _read_record(self.fd)
            _write_record(self.fd, os.getpid(), (count or 0) + 1)
        except BaseException:
            os.close(self.fd)
            self.fd = -1
            raise
        return self

    def _busy(self, count_before: int | None) -> str:
        path = self.folder.root.join(LOCK)
        pid, count = _read_record(self.fd)
        waited = f"{self.timeout:g} s"
        if count is not None and count_before is not None and count > count_before:
            return (f"the waits store is busy: its lock {path} changed hands {count - count_before} "
                    f"times in the {waited} this op waited, without reaching this process: more ops "
                    "were queued ahead of it than this machine could serve in that time; try again")
        holder = f"process {pid}" if pid else "another process"
        return (f"the waits store is busy: {holder} has held its lock {path} for the whole {waited} "
                "this op waited; try again, or end that process if it is stuck")

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            try:
                if self.turn is not None:
                    self.turn.end()
            finally:
                os.close(self.fd)
                self.fd = -1


def _read_record(fd: int) -> tuple:
    """(pid, count) from the lock file, or (None, None) if it holds none (an older release
    left it empty)."""
    try:
        if hasattr(os, "pread"):
            raw = os.pread(fd, _RECORD_SIZE, 0)
        else:
            os.lseek(fd, 0, os.SEEK_SET)
            raw = os.read(fd, _RECORD_SIZE)
        pid, count = raw.split()
        return int(pid), int(count)
    except (OSError, ValueError):
        return None, None


def _write_record(fd: int, pid: int, count: int) -> None:
    data = b"%*d %*d\n" % (10, pid, _RECORD_SIZE - 12, count)
    try:
        if hasattr(os, "pwrite"):
            os.pwrite(fd, data, 0)
        else:
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, data)
    except OSError:
        pass  # only the wording of a later "busy" refusal depends on it


# ---- opening the folder ---------------------------------------------------------------------


def for_hooks(path: str) -> WaitsFolder | None:
    """The folder as the hooks read it: checked, never created or migrated. None when it
    does not exist or is still empty (no wait was ever recorded there)."""
    root = _open_root(path, create=False)
    if root is None:
        return None
    folder = WaitsFolder(path, root, "")
    try:
        folder._recognise()
    except BaseException:
        folder.close()
        raise
    if folder.kind == "new":
        folder.close()
        return None
    return folder


def for_op(path: str) -> WaitsFolder:
    """The folder as an op uses it: created (0700, with the marker) if missing, checked,
    and recognised; a folder of a release without the marker is given it once every file
    in it is shown to be lichhook's."""
    root = _open_root(path, create=True)
    assert root is not None
    folder = WaitsFolder(path, root, "")
    try:
        folder._recognise()
        if folder.kind == "new":
            folder._write_marker()
            folder.kind = "marked"
        elif folder.kind == "previous":
            # Before the lock: a folder that turns out foreign gets nothing, not even the
            # lock's record. Two processes adopting it at once write the same marker.
            folder._adopt_previous()
    except BaseException:
        folder.close()
        raise
    return folder


def transaction(path: str, change: Callable[[dict], Tuple[dict, bool]], node: Optional[str],
                now: str) -> Tuple[dict, Optional[str]]:
    """Run one op on the waits folder at ``path``: take the lock, load the store, apply
    ``change`` (which returns ``(result, changed)``, or raises ``rules.Refused`` having
    changed nothing), save the store if it changed, bring the mirrors in line, release.

    Returns ``(result, warning)``: ``warning`` is set when the op was saved but a mirror
    could not be written (the next op retries). Raises Refused, FolderRefused, OSError.
    A refused op on a folder that does not exist yet creates nothing.
    """
    from lichhook.waits.rules import Refused

    if not os.path.lexists(path):
        change(empty_state())  # raises Refused for an op the empty store refuses
    with for_op(path) as folder, folder.lock():
        folder._sub(SESSIONS, create=True)  # refused now, not after the store is saved
        state = folder.open_store()
        full = folder.mirrors_suspect()
        before = set(bound_sessions(state))
        try:
            result, changed = change(state)
        except Refused:
            if full:
                try:  # the mirrors must not wait for a successful op
                    folder.sync(state, node, now, full=True)
                    folder.clear_dirty()
                except OSError:
                    pass  # the refusal is the answer; the next op tries again
            raise
        saved = False
        try:
            if changed:
                folder.mark_dirty()
                folder.save_store(state)
                saved = True
            # Sessions that just lost their name keep a mirror that must be emptied.
            also = tuple(sorted(before - set(bound_sessions(state))))
            folder.sync(state, node, now, also=also, full=full)
            if changed or full:
                folder.clear_dirty()
            folder.clean_stops()
        except OSError as exc:
            if not saved:
                raise
            where = getattr(exc, "filename2", None) or exc.filename or path
            return result, (f"the op was recorded, but the mirror files could not be brought up to "
                            f"date ({where}: {exc.strerror or exc}); the next op will retry")
        except FolderRefused as exc:
            if not saved:
                raise
            return result, f"the op was recorded, but the mirror files could not be brought up to date: {exc}"
    return result, None
