"""The waits folder as the hooks see it: checked, then read (the Stop hook also keeps its
refusal counters here). ``lichhook.waits.folder`` owns the folder and its format and
builds the ops on this module; a hook imports this one alone, which is half the size.

- ``for_hooks``: the folder, checked and recognised (never created, marked or migrated),
  or None while it does not exist or is empty;
- the checks every access makes, the ops' included: the folder and its subfolders are the
  user's own and nobody else can write to them; the folder holds the marker, or only
  files lichhook writes; no link inside it is followed and nothing but a regular file is
  opened (``lichhook.diskio.Dir``);
- the mirrors read back (``session_waits``, ``index_names``) and checked field by field,
  so that nothing a tampered file holds reaches a printed command unchecked;
- ``store.broken``, the refusal the ops keep while the store is unusable;
- ``stops/<session id>.count``, the Stop hook's refusals in a row.

The layout's names are spelt here, once (``folder`` takes them from this module, and
draws the whole layout in its docstring); ``tests/test_waits_folder.py`` holds what this
module reads equal to what ``folder`` writes.
"""

import os
import stat  # os has imported it already
import sys
import time  # loaded at start-up

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)
from lichhook.coldstart.quickjson import json_or_none
from lichhook.diskio import Dir, NotAFile, temporary_target
from lichhook.ids import BadId, wait_id_problem, wait_node, wait_session_id, wait_who
from lichhook.trust import above_problem, make_folders, private_problem, user_name

# The layout (drawn in lichhook.waits.folder's docstring).
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
OWN_TOP = frozenset([MARKER, STORE, LOCK, DIRTY, BROKEN, INDEX, SESSIONS, STOPS, QUEUE])
MAX_MIRROR_BYTES = 8 << 20  # far above any real mirror; a bound for a hostile one
MAX_SMALL_FILE = 4096  # the marker, store.broken, a counter
# A Stop hook's counter temporary older than this lost its writer: Claude Code ends a hook
# after its timeout (60 s unless set; install sets 10 s).
STALE_SECONDS = 120.0


class FolderRefused(Exception):
    """The folder, or a file in it, cannot be used safely; the message names it and the fix."""

    # The fix every refusal of the folder itself offers.
    CHOOSE = "choose a folder of your own with --waits-dir or LICHHOOK_WAITS_DIR"


class MirrorError(Exception):
    """A mirror a hook reads cannot be read or makes no sense; the message says which and why."""


class Wait:
    """One open wait as a session mirror shows it."""

    def __init__(self, id: str, what: str, family: "str | None", created: str,  # noqa: A002
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

    def __init__(self, name: "str | None", waits: list) -> None:
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
    """A session id exactly as this module writes it: valid and already folded."""
    try:
        return wait_session_id(value) == value
    except BadId:
        return False


def parse_session(doc: object, session: str, path: str) -> "SessionWaits":
    """A session mirror, checked: every string that may reach a printed command passes the
    same check the ops apply, so a tampered file cannot put shell text into one."""
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
                or not valid_session(session) or not isinstance(count, int) or isinstance(count, bool) or count < 1):
            skipped += 1
            continue
        names.append(IndexName(name, session, count))
    return names, skipped


# ---- the folder checks ----------------------------------------------------------------------


def _check_private(folder: "Dir", what: str) -> None:
    """Refuse a folder that is not the user's own or that others may write to
    (lichhook.trust): whoever can change it decides what the Stop hook tells the model."""
    problem = private_problem(folder.path, None if sys.platform == "win32" else folder.stat())
    if problem:
        raise FolderRefused(f"{what} {folder.path} {problem}: whoever can change it decides what "
                            f"your Stop hook tells the model; make it yours alone, or {FolderRefused.CHOOSE}")


def not_a_file_sentence(path: str, kind: str) -> str:
    """The refusal of ``path``, which is ``kind`` (a link, a FIFO...) where a file belongs."""
    return (f"{path} is {kind}, not a regular file, and lichhook never opens anything else in "
            "the waits folder (nor follows a link there); remove it")


def open_root(path: str, create: bool) -> "Dir | None":
    """The checked waits folder, created 0700 if ``create``; None if it does not exist."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return None
        make_folders(path)
        link = os.lstat(path)
    # The folder itself may be a link the user made; one made by anyone else is refused.
    if stat.S_ISLNK(link.st_mode) and sys.platform != "win32" and link.st_uid not in (os.geteuid(), 0):
        raise FolderRefused(
            f"the waits folder {path} is a symbolic link made by {user_name(link.st_uid)}, not by "
            f"you; {FolderRefused.CHOOSE}")
    try:
        root = Dir.open(path)
    except NotADirectoryError:
        raise FolderRefused(f"the waits folder {path} is not a folder; choose another with "
                            "--waits-dir or LICHHOOK_WAITS_DIR") from None
    try:
        _check_private(root, "the waits folder")
        problem = above_problem(path)
        if problem:
            raise FolderRefused(f"the waits folder {path} lies in a folder another user may change: "
                                f"{problem}, or {FolderRefused.CHOOSE}")
    except BaseException:
        root.close()
        raise
    return root


class FolderView:
    """A checked waits folder, held open, as the hooks use it. Make one with ``for_hooks``;
    the ops' ``lichhook.waits.folder.WaitsFolder`` builds on it."""

    def __init__(self, path: str, root: "Dir") -> None:
        """Recognise ``root``, the folder ``open_root`` checked; it is closed if refused."""
        self.path = path
        self.root = root
        self._subdirs: dict = {}
        try:
            # "marked": holds the marker; "new": empty so far; "previous": written by a
            # release without the marker, recognised by its files.
            self.kind = self._recognise()
        except BaseException:
            root.close()
            raise

    def close(self) -> None:
        for sub in self._subdirs.values():
            sub.close()
        self._subdirs.clear()
        self.root.close()

    def __enter__(self) -> "FolderView":
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
            raise FolderRefused(not_a_file_sentence(exc.filename, exc.kind)) from None
        doc = json_or_none(raw)
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

    def _recognise(self) -> str:
        """The folder's ``kind``, or a refusal of a folder holding anything lichhook did not write."""
        for _ in range(3):
            if self._read_marker():
                return "marked"
            names = self.root.names()
            if MARKER not in names:
                break
            # Another process made the folder and marked it between the read and the
            # listing (ops started together on a new folder): read it again.
        if all(temporary_target(n) == MARKER for n in names):
            return "new"  # empty, or another process is writing the marker this instant
        foreign = [n for n in names if n not in OWN_TOP and temporary_target(n) not in OWN_TOP]
        if foreign or LOCK not in names:
            self._refuse_foreign(sorted(foreign) or sorted(names))
        return "previous"

    def _refuse_foreign(self, entries: list) -> None:
        shown = ", ".join(repr(n) for n in entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise FolderRefused(
            f"the folder {self.path} is not a lichhook waits folder: it has no {MARKER} and holds "
            f"{shown}, which lichhook cannot show it wrote, so lichhook changes nothing in it; point "
            "--waits-dir or LICHHOOK_WAITS_DIR at a new or empty folder (lichhook creates it), or "
            "at the folder your earlier waits are in")

    def _sub(self, name: str, create: bool) -> "Dir | None":
        """``sessions/``, ``stops/`` or ``queue/``, checked like the folder; None if missing."""
        if name in self._subdirs:
            return self._subdirs[name]
        try:
            sub = self.root.subdir(name, create=create)
        except FileNotFoundError:
            return None
        except NotAFile as exc:
            raise FolderRefused(
                f"{exc.filename} is {exc.kind}, not a folder: lichhook never follows a link inside "
                "the waits folder; remove it") from None
        try:
            _check_private(sub, "the folder")
        except BaseException:
            sub.close()
            raise
        self._subdirs[name] = sub
        return sub

    # -- what the hooks read --

    def session_waits(self, session: str) -> "SessionWaits | None":
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

    def store_refusal(self) -> "str | None":
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

    def set_strikes(self, session: str, value: int) -> "str | None":
        """Write the count atomically, or with 0 forget the refusals (remove the counter);
        return why that failed, or None."""
        try:
            stops = self._sub(STOPS, create=value > 0)
            if value > 0:
                assert stops is not None
                # Not flushed to disk (which costs each refusing Stop 0.3 ms and more): a count
                # lost to a power cut reads as none, so at worst a wait refuses a stop a few
                # more times. A killed hook still leaves the old count or the new one.
                stops.write_atomic(session + COUNTER_SUFFIX, b"%d\n" % value, durable=False)
                self.clean_stops()
            elif stops is not None:
                stops.unlink(session + COUNTER_SUFFIX)
        except FolderRefused as exc:
            return str(exc)
        except OSError as exc:
            return f"{type(exc).__name__}: {exc.strerror or exc}"
        return None

    def clean_stops(self) -> None:
        """Remove the temporaries of counters in ``stops/`` older than STALE_SECONDS, which
        a Stop hook cut short left. A cleanup only: an unusable ``stops/`` is the Stop
        hook's to report, not the op's."""
        now = time.time()
        try:
            stops = self._sub(STOPS, create=False)
            if stops is None:
                return
            names = stops.names()
        except (FolderRefused, OSError):
            return
        for name in names:
            target = temporary_target(name)
            if target is None or not target.endswith(COUNTER_SUFFIX):
                continue
            try:
                if now - stops.lstat(name).st_mtime > STALE_SECONDS:
                    stops.unlink(name)
            except OSError:
                pass


def _read_mirror(folder: "Dir", name: str, path: str) -> "bytes | None":
    """A mirror's bytes, or None when it does not exist. Raises MirrorError otherwise."""
    # On Windows a file being replaced can refuse readers for a moment: retry briefly.
    tries = 5 if sys.platform == "win32" else 1
    for attempt in range(tries):
        try:
            raw = folder.read(name, MAX_MIRROR_BYTES + 1)
        except FileNotFoundError:
            return None
        except NotAFile as exc:
            raise MirrorError(f"{path} is {exc.kind}, not a regular file") from None
        except OSError as exc:
            if isinstance(exc, PermissionError) and attempt + 1 < tries:
                time.sleep(0.02)
                continue
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


# ---- opening the folder ---------------------------------------------------------------------


def for_hooks(path: str, explicit: bool = False) -> "FolderView | None":
    """The folder as the hooks read it: checked, never created or migrated. None when it
    does not exist or is still empty (no wait was ever recorded there); a missing folder
    the operator named (``explicit``) is refused, since its absence is worth a notice."""
    root = open_root(path, create=False)
    if root is None:
        if explicit:
            raise FolderRefused(f"the waits folder {path} does not exist")
        return None
    folder = FolderView(path, root)
    if folder.kind == "new":
        folder.close()
        return None
    return folder


