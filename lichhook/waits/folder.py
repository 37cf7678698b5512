"""The waits folder on disk: its layout, the checks that make it safe to use, how each file
in it is opened, read and written, and the transaction every op runs in.

The ops (the ``wait`` command and the MCP tool, through ``api.run_op``) reach the folder
through ``transaction``; the hooks through ``lichhook.waits.view``, the side of it a hook
imports without this module (the checks, recognising the folder, reading the mirrors,
the Stop hook's counters), where the layout's names are spelt once for both::

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
- Mirrors and counters are replaced whole (write, fsync, rename; the index and the
  counters without the fsync); the store only under the lock, with the dirty mark around
  the writes, so an op cut short anywhere is finished by the next one.

Session ids are file names here; they arrive checked and case-folded by
``lichhook.ids.wait_session_id``, so no two of them share a file on a file system that
ignores case.
"""

import os
import stat  # os has imported it already
import time  # loaded at start-up

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)
from lichhook.coldstart.quickjson import json_or_none
from lichhook.diskio import Dir, NotAFile, kind_of, temporary_target
from lichhook.ids import BadId, wait_session_id
from lichhook.waits.rules import Refused, bound_sessions
from lichhook.waits.view import (
    BROKEN, COUNTER_SUFFIX, DIRTY, FOLDER_FORMAT, INDEX, LOCK, MARKER, MAX_MIRROR_BYTES, MIRROR_SUFFIX, QUEUE,
    SESSIONS, STOPS, STORE, FolderRefused, FolderView, not_a_file_sentence, open_root,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterable, Optional, Tuple

    from lichhook.waits.lock import Turn

# Top-level files written under the lock: a temporary of one of them outlives only its writer.
_LOCKED_TOP_FILES = (STORE, BROKEN, INDEX)

LOCK_TIMEOUT = 10.0

# store.json (format 1):
#   {"format": 1,
#    "names": {"who@node": {"session": <session id or null>, "since": <UTC time or null>,
#                           "next": <next wait number>, "waits": [<open waits, oldest first>],
#                           "displaced": [{"session": <old id>, "by": <new id>, "at": <time>}]}}}
# A wait: {"id": "w3", "what": str, "family": str|null, "created": <time>,
#          "watched": null|{"at", "note"}, "said": null|{"at", "note"}}. Times are UTC
# "YYYY-MM-DDTHH:MM:SSZ". The rules that change it are in lichhook.waits.rules.
STORE_FORMAT = 1


class StoreUnusable(FolderRefused):
    """The store is corrupt, unreadable or not a file: no op can succeed until it is mended."""


def empty_state() -> dict:
    return {"format": STORE_FORMAT, "names": {}}


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---- the store's format ---------------------------------------------------------------------


def store_format_problem(state: object) -> "str | None":
    """What is wrong with a loaded store, or None if every field has the right shape."""
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
        session = entry.get("session")
        if isinstance(session, str):
            entry["session"] = session.lower()
        for record in entry["displaced"]:
            for key in ("session", "by"):
                value = record.get(key)
                if isinstance(value, str):
                    record[key] = value.lower()


# ---- the mirrors' format --------------------------------------------------------------------


def session_doc(session: str, name: "str | None", waits: list, now: str) -> dict:
    """``sessions/<session>.json``: the name bound to the session (or null) and its open waits."""
    return {"session": session, "name": name, "waits": waits, "updated": now}


def index_doc(node: "str | None", state: dict, now: str) -> dict:
    """``index.json``: every name with open waits, sorted, with the session holding it."""
    names = [{"name": name, "session": entry["session"], "open": len(entry["waits"])}
             for name, entry in sorted(state["names"].items()) if entry["waits"]]
    return {"node": node, "updated": now, "names": names}


def encode(doc: dict) -> bytes:
    """A mirror's text: UTF-8 JSON, one member a line, and each item of a list (a wait,
    an index entry) on a line of its own.

    Each line comes from json's C encoder: json's indenting encoder is pure Python and
    took twice as long (0.1 ms for an index of 50 names, as much for 40 waits).
    """
    members = []
    for key, value in doc.items():
        head = "  " + json.dumps(key, ensure_ascii=False) + ": "
        if type(value) is list and value:
            items = ",\n    ".join([json.dumps(item, ensure_ascii=False) for item in value])
            members.append(head + "[\n    " + items + "\n  ]")
        else:
            members.append(head + json.dumps(value, ensure_ascii=False))
    return ("{\n" + ",\n".join(members) + "\n}\n").encode("utf-8")


_SESSION_KEYS = ("session", "name", "waits")  # what a session mirror says (``updated`` aside)
_INDEX_KEYS = ("node", "names")


def _read_json(folder: "Dir", name: str) -> object:
    """The JSON in ``name``, or None if it cannot be read or parsed."""
    try:
        return json_or_none(folder.read(name, MAX_MIRROR_BYTES + 1))
    except OSError:
        return None


def _is_index_doc(doc: object) -> bool:
    return isinstance(doc, dict) and set(doc) == {*_INDEX_KEYS, "updated"}


def _is_session_mirror(folder: "Dir", name: str, session: str) -> bool:
    doc = _read_json(folder, name)
    return isinstance(doc, dict) and set(doc) == {*_SESSION_KEYS, "updated"} and doc["session"] == session


def _is_counter(folder: "Dir", name: str, session: str) -> bool:
    try:
        return folder.read(name, 32).strip().isdigit()
    except OSError:
        return False


def _stem(entry: str, suffix: str = MIRROR_SUFFIX, folded: bool = True) -> "str | None":
    """The session id of the file ``entry`` (``<session id><suffix>``) if it is a name this
    module writes, else None; ``folded=False`` also takes the names an earlier release
    wrote (it did not fold case)."""
    if not entry.endswith(suffix):
        return None
    stem = entry[: -len(suffix)]
    try:
        return stem if wait_session_id(stem) == stem or not folded else None
    except BadId:
        return None


class WaitsFolder(FolderView):
    """A checked waits folder, held open, as the ops use it. Make one with ``for_op``."""

    def __enter__(self) -> "WaitsFolder":
        return self

    # -- recognising the folder --

    def _adopt_previous(self) -> None:
        """Give a folder of a release without the marker its marker, once every file in it
        is shown to be one lichhook writes."""
        foreign = []
        if INDEX in self.root.names() and not _is_index_doc(_read_json(self.root, INDEX)):
            foreign.append(INDEX)
        for subname, suffix, written_here in ((SESSIONS, MIRROR_SUFFIX, _is_session_mirror),
                                               (STOPS, COUNTER_SUFFIX, _is_counter)):
            sub = self._sub(subname, create=False)
            for name in sub.names() if sub is not None else ():
                assert sub is not None
                target = temporary_target(name)
                stem = _stem(target or name, suffix, folded=False)
                if stem is None or (target is None and not written_here(sub, name, stem)):
                    foreign.append(f"{subname}/{name}")
        if foreign:
            self._refuse_foreign(foreign)
        self._write_marker()

    def _write_marker(self) -> None:
        self.root.write_atomic(MARKER, json.dumps({"lichhook": "waits", "format": FOLDER_FORMAT}).encode() + b"\n")
        self.kind = "marked"

    # -- subfolders --

    def _regular_or_missing(self, name: str) -> bool:
        """Whether ``name`` exists; refuses one that is not a regular file."""
        try:
            mode = self.root.lstat(name).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(mode):
            raise FolderRefused(not_a_file_sentence(self.root.join(name), kind_of(mode)))
        return True

    def is_dirty(self) -> bool:
        return self._regular_or_missing(DIRTY)

    def mark_dirty(self) -> None:
        """Note that an op is writing; ``clear_dirty`` removes the note once every file is done."""
        try:
            os.close(self.root.open_file(DIRTY, os.O_WRONLY | os.O_CREAT))
        except NotAFile as exc:
            raise FolderRefused(not_a_file_sentence(exc.filename, exc.kind)) from None

    def clear_dirty(self) -> None:
        self.root.unlink(DIRTY)

    def mirrors_suspect(self) -> bool:
        """Whether every mirror must be checked, not just those of the sessions an op concerns.

        True after an op was cut short (``store.dirty``), and when there is no store but
        there are session mirrors: the store was moved aside (as a corrupt store's refusal
        advises) or deleted, and the mirrors still list the waits it held.
        """
        if self.is_dirty():
            return True
        if self._regular_or_missing(STORE):
            return False
        sessions = self._sub(SESSIONS, create=False)
        return sessions is not None and any(_stem(n) for n in sessions.names())

    # -- the store --

    def load_store(self) -> dict:
        """The state in ``store.json``, every field checked, session ids folded; empty if
        there is none yet."""
        path = self.root.join(STORE)
        try:
            raw = self.root.read(STORE)
        except FileNotFoundError:
            return empty_state()
        except NotAFile as exc:
            raise StoreUnusable(f"the waits store {path} is {exc.kind}, not a regular file; move it "
                                "aside to start with no waits") from None
        except OSError as exc:
            raise StoreUnusable(f"cannot read the waits store {path}: {exc.strerror or exc}; check its "
                                "permissions") from None
        try:
            state = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            state = None
            problem: "str | None" = "it is not valid JSON (empty, truncated or overwritten)"
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
            # Windows: a hook may have it open this instant; then the next op removes it.
            _unlink_quietly(self.root, BROKEN)
        return state

    def save_store(self, state: dict) -> None:
        """Replace the store with ``state``, whole: compact JSON, UTF-8 as it is. Parsed
        JSON holds no cycle, so none is looked for (a tenth of the encoding's time)."""
        text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
        self.root.write_atomic(STORE, text.encode("utf-8"))

    # -- the mirrors --

    def _ensure(self, folder: "Dir", name: str, doc: dict, keys: tuple, durable: bool = True) -> bool:
        """Rewrite ``name`` with ``doc`` unless it already says the same in ``keys``;
        whether it was rewritten."""
        current = _read_json(folder, name)  # None when missing, unreadable or not a file: replaced below
        if isinstance(current, dict) and all(k in current and current[k] == doc[k] for k in keys):
            return False
        folder.write_atomic(name, encode(doc), durable)
        return True

    def index_in_line(self, listed: dict) -> bool:
        """Whether ``index.json`` says what ``listed`` (an ``index_doc``) says. The index
        names every name with open waits, its holder and how many, so one that disagrees
        with the store as loaded is the sign that the store or the mirrors were changed
        behind the ops' back (restored, edited, or a write a power cut undid)."""
        current = _read_json(self.root, INDEX)
        return isinstance(current, dict) and all(current.get(k) == listed[k] for k in _INDEX_KEYS)

    def sync(self, state: dict, node: "str | None", now: str, concerned: "Tuple[str, ...]" = (),
             full: bool = False, index_said: "Optional[list]" = None, changed: bool = False) -> bool:
        """Bring the mirrors in line with ``state``; whether a file in ``sessions/`` was
        written.

        Read, and rewritten if they disagree: the mirrors of the ``concerned`` sessions
        (the op's own, and any whose name the op changed), written without being read
        when the op ``changed`` the store (which changes what each of them shows);
        written: the mirror of any session holding a name that has none; and with
        ``full`` (after an op was cut short, with the store gone, or with an index out of
        line) every mirror in ``sessions/`` is read, and leftover temporaries of files
        written under the lock go.
        The index is written when what it lists differs from ``index_said`` (what the
        op found it listing, in line with the store; None: read it and compare).
        """
        sessions = self._sub(SESSIONS, create=True)
        assert sessions is not None
        bound = bound_sessions(state)
        targets = dict.fromkeys(concerned)
        if full:
            for entry in self.root.names():
                if temporary_target(entry) in _LOCKED_TOP_FILES:
                    _unlink_quietly(self.root, entry)
            for entry in sessions.names():
                target = temporary_target(entry)
                if target is not None:
                    if _stem(target):
                        _unlink_quietly(sessions, entry)
                    continue
                sid = _stem(entry)
                if sid:
                    targets.setdefault(sid, None)
            targets.update(dict.fromkeys(bound))
        else:
            # A mirror missing is found by one listing, without reading the others.
            present = set(sessions.names())
            targets.update((sid, None) for sid in bound if sid + MIRROR_SUFFIX not in present)
        written = False
        fresh = set(concerned) if changed else ()
        for sid in targets:
            name = bound.get(sid)
            doc = session_doc(sid, name, state["names"][name]["waits"] if name else [], now)
            if sid in fresh:
                sessions.write_atomic(sid + MIRROR_SUFFIX, encode(doc))
                written = True
            else:
                written = self._ensure(sessions, sid + MIRROR_SUFFIX, doc, _SESSION_KEYS) or written
        # The index is not flushed before its rename: one that a power cut leaves empty or
        # old is out of line, and the next op checks every mirror and writes it again.
        index = index_doc(node, state, now)
        if index_said is None:
            self._ensure(self.root, INDEX, index, _INDEX_KEYS, durable=False)
        elif index["names"] != index_said:
            self.root.write_atomic(INDEX, encode(index), durable=False)
        return written

    # -- the lock --

    def lock(self, timeout: float = LOCK_TIMEOUT) -> "_Held":
        return _Held(self, timeout)


def _unlink_quietly(folder: "Dir", name: str) -> None:
    try:
        folder.unlink(name)
    except OSError:
        pass


# ---- the lock ---------------------------------------------------------------------------------

_RECORD_SIZE = 32  # "<pid> <count>\n", right-aligned to a fixed width


class _Held:
    """``store.lock`` held, as a context manager. The holder records its process id and a
    running count of acquisitions at the start of the file, so that an op that gives up
    can say what happened: one process held the lock throughout, or it changed hands.
    Anything after the record (an earlier release left more there) is ignored."""

    def __init__(self, folder: "WaitsFolder", timeout: float) -> None:
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
            raise FolderRefused(not_a_file_sentence(exc.filename, exc.kind)) from None
        try:
            _, count_before = _read_record(self.fd)
            # POSIX waiters queue in queue/; Windows ones are not queued (lichhook.waits.lock).
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

    def _busy(self, count_before: "int | None") -> str:
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
        os.lseek(fd, 0, os.SEEK_SET)
        pid, count = os.read(fd, _RECORD_SIZE).split()
        return int(pid), int(count)
    except (OSError, ValueError):
        return None, None


def _write_record(fd: int, pid: int, count: int) -> None:
    data = b"%*d %*d\n" % (10, pid, _RECORD_SIZE - 12, count)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, data)
    except OSError:
        pass  # only the wording of a later "busy" refusal depends on it


def for_op(path: str) -> "WaitsFolder":
    """The folder as an op uses it: created (0700, with the marker) if missing, checked,
    and recognised; a folder of a release without the marker is given it once every file
    in it is shown to be lichhook's."""
    root = open_root(path, create=True)
    assert root is not None
    folder = WaitsFolder(path, root)
    try:
        if folder.kind == "new":
            folder._write_marker()
        elif folder.kind == "previous":
            # Before the lock: a folder that turns out foreign gets nothing, not even the
            # lock's record. Two processes adopting it at once write the same marker.
            folder._adopt_previous()
    except BaseException:
        folder.close()
        raise
    return folder


def transaction(path: str, change: "Callable[[dict], Tuple[dict, bool]]", node: "Optional[str]",
                now: str, sessions: "Iterable[str]" = ()) -> "Tuple[dict, Optional[str]]":
    """Run one op on the waits folder at ``path``: take the lock, load the whole store,
    apply ``change`` (which returns ``(result, changed)``, or raises ``rules.Refused``
    having changed nothing), save the whole store if it changed, bring the mirrors in
    line, release.

    ``sessions``: the sessions the op acts for. ``change`` may change only the entries of
    names these hold after it (the rules change the op's name, held by its session, and
    the name that session let go); the mirrors checked are theirs and those of sessions
    whose name changed, and every mirror when the index or ``store.dirty`` shows the folder
    out of line (``sync``).

    Returns ``(result, warning)``: ``warning`` is set when the op was saved but a mirror
    could not be written (the next op retries). Raises Refused, FolderRefused, OSError.
    A refused op on a folder that does not exist yet creates nothing.
    """
    if not os.path.lexists(path):
        change(empty_state())  # raises Refused for an op the empty store refuses
    with for_op(path) as folder, folder.lock():
        folder._sub(SESSIONS, create=True)  # refused now, not after the store is saved
        state = folder.open_store()
        said = index_doc(node, state, now)
        index_said = said["names"] if folder.index_in_line(said) else None  # None: to be read and compared
        full = index_said is None or folder.mirrors_suspect()
        before = bound_sessions(state)
        try:
            result, changed = change(state)
        except Refused:
            if full:
                try:  # the mirrors must not wait for a successful op
                    folder.sync(state, node, now, full=True, index_said=index_said)
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
                # The store's rename (with the mark, made before it in the same folder) on
                # disk before the op answers, and before any mirror shows the change.
                folder.root.sync()
            after = bound_sessions(state)
            # A session that lost its name keeps a mirror that must be emptied.
            moved = [sid for sid in {**before, **after} if before.get(sid) != after.get(sid)]
            written = folder.sync(state, node, now, concerned=(*sessions, *sorted(moved)), full=full,
                                  index_said=index_said, changed=changed)
            if saved and written:
                # The mirrors' renames on disk before the mark goes: a power cut before
                # that leaves the mark, and the next op checks every mirror.
                folder._sub(SESSIONS, create=False).sync()  # type: ignore[union-attr]
            if changed or full:
                folder.clear_dirty()
            folder.clean_stops()
        except (OSError, FolderRefused) as exc:
            if not saved:
                raise
            if isinstance(exc, FolderRefused):
                why = f": {exc}"
            else:
                where = getattr(exc, "filename2", None) or exc.filename or path
                why = f" ({where}: {exc.strerror or exc}); the next op will retry"
            return result, "the op was recorded, but the mirror files could not be brought up to date" + why
    return result, None
