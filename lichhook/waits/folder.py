"""The waits folder on disk: its layout, the checks that make it safe to use, how each file
in it is opened, read and written, and the transaction every op runs in.

Everything that touches the folder goes through here: the ``wait`` command and the MCP
tool (through ``api.run_op`` and ``transaction``) and the Claude Code hooks (through
``for_hooks``, which only reads, apart from the Stop hook's own counters). The hooks'
side (the checks, recognising the folder, reading the mirrors, the counters) is
``lichhook.waits.view``, which a hook imports without this module; the layout's names
are spelt there, once, and this module takes them from it::

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

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)
from lichhook.diskio import Dir, NotAFile, temporary_target
from lichhook.waits.view import (  # noqa: F401 - the hooks' side, part of this module's interface
    BROKEN, COUNTER_SUFFIX, DIRTY, FOLDER_FORMAT, INDEX, LOCK, MARKER, MAX_MIRROR_BYTES, MAX_SMALL_FILE,
    MIRROR_SUFFIX, OWN_TOP, QUEUE, SESSIONS, STALE_SECONDS, STOPS, STORE, FolderRefused, FolderView, IndexName,
    MirrorError, SessionWaits, Wait, _clean_stale, _json_or_none, _kind, _not_a_file_sentence, _open_root,
    _valid_session, for_hooks, parse_index, parse_session,
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
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---- the store's format ---------------------------------------------------------------------


def store_format_problem(state: object) -> "str | None":
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


def _fold_sessions(state: dict) -> set:
    """Session ids as ``wait_session_id`` gives them (lower case); a release before the
    ids were folded may have stored them as they came. Returns the names whose entries
    this changed."""
    folded = set()
    for name, entry in state["names"].items():
        session = entry.get("session")
        if isinstance(session, str) and session != session.lower():
            entry["session"] = session.lower()
            folded.add(name)
        for record in entry["displaced"]:
            for key in ("session", "by"):
                value = record.get(key)
                if isinstance(value, str) and value != value.lower():
                    record[key] = value.lower()
                    folded.add(name)
    return folded


def store_text(state: dict, loaded: "Optional[Tuple[str, dict]]" = None,
               changed: "Iterable[str]" = ()) -> "Tuple[str, Optional[dict]]":
    """``store.json``'s text for ``state`` (compact JSON, UTF-8 as it is), and where each
    entry is spelt in it (name -> where the name starts, where the
    entry starts, where it ends), None when the state holds more than the format and the
    names. ``loaded`` is the text the state was loaded from and where each entry is spelt
    there: the entries of names not in ``changed`` are copied from it as they are, those
    that follow one another there as one piece, instead of encoded again (0.5 ms of a
    store of 500 waits)."""
    if list(state) != ["format", "names"]:
        return json.dumps(state, ensure_ascii=False, separators=(",", ":")), None
    text, spans = loaded if loaded is not None else ("", {})
    changed = set(changed)
    out = ['{"format":' + json.dumps(state["format"]) + ',"names":{']
    at = len(out[0])  # where the next piece goes in the new text
    where: dict = {}
    copy_from = copy_to = copy_at = -1  # text[copy_from:copy_to] still to copy, to go at copy_at
    for name, entry in state["names"].items():
        span = None if name in changed else spans.get(name)
        if span is not None and copy_to >= 0 and span[0] == copy_to + 1 and text[copy_to] == ",":
            copy_to = span[2]  # the next member there too: one piece
        else:
            if copy_to >= 0:
                out.append(text[copy_from:copy_to])
                at += copy_to - copy_from
                copy_to = -1
            if where:
                out.append(",")
                at += 1
            if span is None:
                member = json.dumps(name, ensure_ascii=False) + ":"
                value = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
                out.append(member + value)
                where[name] = (at, at + len(member), at + len(member) + len(value))
                at += len(member) + len(value)
                continue
            copy_from, copy_to, copy_at = span[0], span[2], at
        shift = copy_at - copy_from
        where[name] = (span[0] + shift, span[1] + shift, span[2] + shift)
    if copy_to >= 0:
        out.append(text[copy_from:copy_to])
    out.append("}}")
    return "".join(out), where


def bound_sessions(state: dict) -> dict:
    """session id -> the name it holds, for every bound name."""
    return {entry["session"]: name for name, entry in state["names"].items() if entry["session"]}


# ---- the mirrors' format --------------------------------------------------------------------


def session_doc(session: str, name: "str | None", waits: list, now: str) -> dict:
    """``sessions/<session>.json``: the name bound to the session (or null) and its open waits."""
    return {"session": session, "name": name, "waits": waits, "updated": now}


def index_entries(state: dict, counts: "Optional[dict]" = None) -> dict:
    """What ``index.json`` lists of ``state``, in no order: name -> (session, open waits),
    for every name with open waits. ``counts``: the open waits of the names whose entries
    were not loaded (``_Loaded``)."""
    listed = {}
    for name, entry in state["names"].items():
        count = counts[name] if counts and name in counts else len(entry["waits"])
        if count:
            listed[name] = (entry["session"], count)
    return listed


def index_doc(node: "str | None", entries: dict, now: str) -> dict:
    """``index.json``: every name with open waits (``index_entries``), sorted, with the
    session holding it."""
    names = [{"name": name, "session": entries[name][0], "open": entries[name][1]} for name in sorted(entries)]
    return {"node": node, "updated": now, "names": names}


def encode(doc: dict) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_SESSION_KEYS = ("session", "name", "waits")  # what a session mirror says (``updated`` aside)
_INDEX_KEYS = ("node", "names")


def _read_json(folder: "Dir", name: str) -> object:
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


def _is_counter(folder: "Dir", name: str) -> bool:
    try:
        return folder.read(name, 32).strip().isdigit()
    except OSError:
        return False


def _previous_stem(entry: str, suffix: str) -> "str | None":
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


def _mirror_stem(entry: str) -> "str | None":
    """The session of ``sessions/<entry>`` if it is a name this module writes, else None."""
    if not entry.endswith(MIRROR_SUFFIX):
        return None
    stem = entry[: -len(MIRROR_SUFFIX)]
    return stem if _valid_session(stem) else None


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
        """The state in ``store.json``, every field checked, session ids folded; empty if
        there is none yet."""
        return self.load().state

    def load(self, left: "Optional[str]" = None, node: "Optional[str]" = None, name: "Optional[str]" = None,
             session: "Optional[str]" = None) -> "_Loaded":
        """The store, for an op by ``session`` on ``name``.

        While the store, the index and the mirrors are all as the op that left ``left``
        (its record in ``store.lock``) left them, only the entries of ``name`` and of the
        name ``session`` holds are parsed: the others hold their ``session`` alone, and
        the record says the rest (their open waits, where they are spelt). That op read
        or wrote every one of them, so they need no check again. Otherwise the whole
        store is parsed and checked field by field.
        """
        path = self.root.join(STORE)
        identity = _identity(self.root, STORE)  # before the read: a change after it shows next time
        try:
            raw = self.root.read(STORE)
        except FileNotFoundError:
            return _Loaded(empty_state(), "-")
        except NotAFile as exc:
            raise StoreUnusable(f"the waits store {path} is {_kind(exc)}, not a regular file; move it "
                                "aside to start with no waits") from None
        except OSError as exc:
            raise StoreUnusable(f"cannot read the waits store {path}: {exc.strerror or exc}; check its "
                                "permissions") from None
        if _identity(self.root, STORE) != identity:
            identity = "?"  # changed while it was read: in line with nothing
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and left and name and session:
            loaded = self._load_in_line(text, identity, left, node, name, session)
            if loaded is not None:
                return loaded
        try:
            if text is None:
                raise ValueError
            state = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            state = None
            problem: "str | None" = "it is not valid JSON (empty, truncated or overwritten)"
        else:
            problem = store_format_problem(state)
        if problem:
            raise StoreUnusable(
                f"the waits store {path} is corrupt: {problem}; move it aside to start with no waits "
                "(the files in sessions/ still list the last known waits), or restore it from a backup")
        # Where each entry is spelt: as store_text spells it, when the text is spelt so.
        again, spans = store_text(state)  # type: ignore[arg-type]
        if again != text:
            spans = None
        folded = _fold_sessions(state)  # type: ignore[arg-type]
        if spans is not None:
            spans = {entry: span for entry, span in spans.items() if entry not in folded}
        return _Loaded(state, identity, text or "", spans)  # type: ignore[arg-type]

    def _load_in_line(self, text: str, identity: str, left: str, node: "Optional[str]", name: str,
                      session: str) -> "Optional[_Loaded]":
        """``load``'s way when all is as the last op left it, else None."""
        files, found, block = left.partition("\n" + _NAMES + "\n")
        summary = _summary(block) if found else None
        if summary is None or self.is_dirty():
            return None
        bound = {holder: held for held, (holder, _, _) in summary.items() if holder}
        ids, in_line = self.left_in_line(files + "\n", node, identity, bound)
        if not in_line:
            return None
        wanted = {name, bound.get(session)}
        names: dict = {}
        spans: dict = {}
        counts: dict = {}
        for held, (holder, count, span) in summary.items():
            spans[held] = span
            if held in wanted:
                try:
                    names[held] = json.loads(text[span[1]:span[2]])
                except (ValueError, RecursionError):
                    return None
            else:
                names[held] = {"session": holder}
                counts[held] = count
        entries = {held: names[held] for held in wanted if held in names}
        parsed = {"format": STORE_FORMAT, "names": entries}
        if store_format_problem(parsed) is not None:
            return None
        for held in _fold_sessions(parsed):
            del spans[held]
        if any(entry["session"] != summary[held][0] for held, entry in entries.items()):
            return None  # the record says otherwise: read it all
        return _Loaded({"format": STORE_FORMAT, "names": names}, identity, text, spans, counts, ids)

    def open_store(self, left: "Optional[str]" = None, node: "Optional[str]" = None, name: "Optional[str]" = None,
                   session: "Optional[str]" = None) -> "_Loaded":
        """``load``, keeping ``store.broken`` in line: it holds the refusal while the store
        is unusable, so that the hooks can say why the waits cannot be marked, and goes
        once the store loads again. Call it with the lock held."""
        try:
            loaded = self.load(left, node, name, session)
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
        return loaded

    def save_store(self, loaded: "_Loaded", changed: "Iterable[str]" = ()) -> None:
        """Replace the store with ``loaded.state``, which changed since it was loaded in the
        entries of the names in ``changed`` alone; ``loaded`` then describes what was
        written."""
        changed = tuple(changed)
        if any(name in loaded.counts for name in changed):
            raise RuntimeError("an op changed an entry of the waits store it did not load")
        source = (loaded.text, loaded.spans) if loaded.spans is not None else None
        text, spans = store_text(loaded.state, source, changed)
        if spans is None and loaded.counts:
            raise RuntimeError("a waits store loaded in part cannot be written whole")
        self.root.write_atomic(STORE, text.encode("utf-8"))
        loaded.text, loaded.spans, loaded.identity = text, spans, _identity(self.root, STORE)

    # -- the mirrors --

    def _ensure(self, folder: "Dir", name: str, doc: dict, keys: tuple, identity: "str | None" = None) -> str:
        """Rewrite ``name`` with ``doc`` unless it already says the same in ``keys``; returns
        the identity of the file as it is left (``identity``: taken before this call)."""
        if identity is None:
            identity = _identity(folder, name)  # before the read: a change after it shows next time
        try:
            current = _json_or_none(folder.read(name))
        except OSError:
            current = None  # missing, unreadable or not a file: replaced below
        if isinstance(current, dict) and all(k in current and current[k] == doc[k] for k in keys):
            return identity
        folder.write_atomic(name, encode(doc))
        return _identity(folder, name)

    def left_in_line(self, left: "str | None", node: "str | None", store: str, bound: dict) -> "Tuple[dict, bool]":
        """The identities of the index and of the mirror of each session in ``bound`` (the
        sessions holding names in the store whose identity is ``store``), and whether they
        are all as the op that left ``left`` (its record in ``store.lock``) left them, with
        the store unchanged since: then every one of them says what the store says."""
        sessions = self._sub(SESSIONS, create=True)
        assert sessions is not None
        ids = {INDEX: _identity(self.root, INDEX)}
        for sid in bound:
            ids[SESSIONS + "/" + sid + MIRROR_SUFFIX] = _identity(sessions, sid + MIRROR_SUFFIX)
        if left is None or "-" in ids.values():  # a file missing is never in line: every op leaves them written
            return ids, False
        files, found, _ = left.partition("\n" + _NAMES + "\n")
        return ids, (files + "\n" if found else left) == _left_record(node, store, ids)

    def sync(self, state: dict, node: "str | None", now: str, also: tuple = (), full: bool = False,
             ids: "Optional[dict]" = None, in_line: bool = False, changed: tuple = (),
             listed: "Optional[dict]" = None, counts: "Optional[dict]" = None) -> dict:
        """Bring the mirrors in line with ``state``; returns the identity of the index and of
        the mirror of each session holding a name, as they are left.

        Checked every time: the index and the file of every session holding a name, and
        the sessions in ``also`` (those that just lost their name). Each is read and
        rewritten if it disagrees, unless ``in_line`` (``left_in_line`` found them all as
        the last op left them, with identities ``ids``): then a mirror of none of the
        ``changed`` names stays as it is, and one of them is written without being read
        (this op changed what it shows); the index stays when what it lists
        (``index_entries``; ``listed``: before the op) is the same, and is written without
        being read when not. ``counts``: the open waits of the names whose entries the op
        did not load. With ``full`` (after an op was cut short, or with the store gone),
        every mirror in ``sessions/`` is read and leftover temporaries of files written
        under the lock go.
        """
        sessions = self._sub(SESSIONS, create=True)
        assert sessions is not None
        ids = ids or {}
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
        left = {}
        for sid in targets:
            name = bound.get(sid)
            key = SESSIONS + "/" + sid + MIRROR_SUFFIX
            if in_line and key in ids and name not in changed and sid not in also:
                left[key] = ids[key]  # as the last op left it, and this op changed nothing it shows
                continue
            doc = session_doc(sid, name, state["names"][name]["waits"] if name else [], now)
            if in_line and key in ids:  # it shows what this op changed: no need to read it
                sessions.write_atomic(sid + MIRROR_SUFFIX, encode(doc))
                identity = _identity(sessions, sid + MIRROR_SUFFIX)
            else:
                identity = self._ensure(sessions, sid + MIRROR_SUFFIX, doc, _SESSION_KEYS, ids.get(key))
            if name is not None:  # the next op looks again at the sessions holding names only
                left[key] = identity
        entries = index_entries(state, counts)
        if in_line and listed is not None and listed == entries:
            left[INDEX] = ids[INDEX]
        elif in_line and listed is not None:  # it says what the store said before this op
            self.root.write_atomic(INDEX, encode(index_doc(node, entries, now)))
            left[INDEX] = _identity(self.root, INDEX)
        else:
            left[INDEX] = self._ensure(self.root, INDEX, index_doc(node, entries, now), _INDEX_KEYS, ids.get(INDEX))
        return left

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

def _unlink_quietly(folder: "Dir", name: str) -> None:
    try:
        folder.unlink(name)
    except OSError:
        pass


# ---- the mirrors as the last op left them -----------------------------------------------------
#
# Every op brings the index and the mirror of every session holding a name in line with the
# store, and reading them all (51 files at 50 names) cost each op about 1 ms. So each op
# leaves in store.lock, after the holder's record, the identity of the store and of each of
# those files as it left them: inode, size, modification and change times, one of which
# changes with any write, replacement or removal. The next op compares them with the disk
# (a stat each): when none changed, those files still say what the store says, and it
# reads only the mirrors its own change concerns. Anything else (a file edited, replaced
# or removed by hand, a store restored from a backup, an op cut short, an op of an earlier
# release, another node name) shows as a difference, and every file is read as before.
# The record is only compared, never trusted: a lost or torn one costs a read of all.


def _identity(folder: "Dir", name: str) -> str:
    """What changes whenever the file ``name`` does: inode, size, modification and change
    times; "-" for a missing file."""
    try:
        st = folder.lstat(name)
    except OSError:
        return "-"
    return "%d %d %d %d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _left_record(node: "str | None", store: str, ids: dict, loaded: "Optional[_Loaded]" = None) -> str:
    """What an op leaves in store.lock for the next: the node the index names, the store's
    identity and that of each file in ``ids`` (relative path -> identity); then, from
    ``loaded`` (the store as the op leaves it), a line per name: ``<name> <session or />
    <open waits> <member> <start> <end>``, where its name and its entry are spelt in
    ``store.json``."""
    lines = ["node " + (node or "-"), STORE + " " + store]
    lines += [path + " " + ids[path] for path in sorted(ids)]
    if loaded is not None and loaded.spans is not None and len(loaded.spans) == len(loaded.state["names"]):
        lines.append(_NAMES)
        counts = loaded.counts
        for name, entry in loaded.state["names"].items():
            member, start, end = loaded.spans[name]
            count = counts[name] if name in counts else len(entry["waits"])
            lines.append(f"{name} {entry['session'] or '/'} {count} {member} {start} {end}")
    return "\n".join(lines) + "\n"


_NAMES = "names"  # the line that starts the entries' part of the record


def _summary(block: str) -> "Optional[dict]":
    """name -> (session or None, open waits, (member, start, end)) from a record's lines
    per name; None if one is not such a line."""
    summary = {}
    try:
        for line in block.splitlines():
            name, session, count, member, start, end = line.split(" ")
            summary[name] = (None if session == "/" else session, int(count), (int(member), int(start), int(end)))
    except ValueError:
        return None
    return summary


class _Loaded:
    """The store as an op loaded it: ``state`` (what the rules change), its ``identity``
    (``_identity``), the ``text`` it was read from and where each entry is spelt there
    (``spans``: name -> (member, start, end), as ``store_text`` gives them; None
    when unknown). Loaded in line (``load``):
    ``counts`` holds the open waits of the names whose entries hold their ``session``
    alone, and ``ids`` the identities of the index and the mirrors."""

    def __init__(self, state: dict, identity: str, text: str = "", spans: "Optional[dict]" = None,
                 counts: "Optional[dict]" = None, ids: "Optional[dict]" = None) -> None:
        self.state = state
        self.identity = identity
        self.text = text
        self.spans = spans
        self.counts: dict = counts or {}
        self.ids = ids


# ---- the lock ---------------------------------------------------------------------------------

_RECORD_SIZE = 32  # "<pid> <count>\n", right-aligned to a fixed width


class _Held:
    """``store.lock`` held, as a context manager. The holder records its process id and a
    running count of acquisitions at the start of the file, so that an op that gives up
    can say what happened: one process held the lock throughout, or it changed hands.
    After that record, ``<length>\n<text>``: what the last op left (``_left_record``)."""

    def __init__(self, folder: "WaitsFolder", timeout: float) -> None:
        self.folder = folder
        self.timeout = timeout
        self.fd = -1
        self.turn: Optional[Turn] = None
        self.left: Optional[str] = None  # the last op's _left_record, if it left one

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
            raw = _read_lock_file(self.fd)
            _, count = _holder(raw)
            self.left = _left(raw)
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

    def leave(self, record: str) -> None:
        """Leave ``record`` (``_left_record``) for the next op. Not flushed to disk: the
        next op only compares it with the files, so a record lost or torn costs nothing
        but a read of them all."""
        data = record.encode("ascii")
        _write_at(self.fd, b"%d\n%s" % (len(data), data), _RECORD_SIZE)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            try:
                if self.turn is not None:
                    self.turn.end()
            finally:
                os.close(self.fd)
                self.fd = -1


def _read_at(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def _write_at(fd: int, data: bytes, offset: int) -> None:
    try:
        if hasattr(os, "pwrite"):
            os.pwrite(fd, data, offset)
        else:
            os.lseek(fd, offset, os.SEEK_SET)
            os.write(fd, data)
    except OSError:
        pass  # only the wording of a later "busy" refusal, or the next op's reads, depend on it


def _read_record(fd: int) -> tuple:
    """(pid, count) from the lock file, or (None, None) if it holds none (an older release
    left it empty)."""
    try:
        return _holder(_read_at(fd, _RECORD_SIZE, 0))
    except OSError:
        return None, None


def _holder(raw: bytes) -> tuple:
    try:
        pid, count = raw[:_RECORD_SIZE].split()
        return int(pid), int(count)
    except ValueError:
        return None, None


def _read_lock_file(fd: int) -> bytes:
    """The lock file's bytes: the holder's record and what the last op left after it."""
    try:
        raw = _read_at(fd, 1 << 16, 0)
        size = _left_size(raw)
        if size is not None and len(raw) < _RECORD_SIZE + size:
            raw += _read_at(fd, _RECORD_SIZE + size - len(raw), len(raw))
        return raw
    except OSError:
        return b""


def _left_size(raw: bytes) -> "int | None":
    """How many bytes after the holder's record hold what the last op left, its length
    line included; None when they do not start with a length."""
    head, newline, _ = raw[_RECORD_SIZE:_RECORD_SIZE + 12].partition(b"\n")
    if not newline or not head.isdigit() or not head.isascii() or int(head) > 1 << 24:
        return None
    return len(head) + 1 + int(head)


def _left(raw: bytes) -> "str | None":
    """The record the last op left (``_left_record``), or None if there is none whole."""
    size = _left_size(raw)
    if size is None or len(raw) < _RECORD_SIZE + size:
        return None
    head, _, rest = raw[_RECORD_SIZE:_RECORD_SIZE + size].partition(b"\n")
    try:
        return rest.decode("ascii")
    except UnicodeDecodeError:
        return None


def _write_record(fd: int, pid: int, count: int) -> None:
    _write_at(fd, b"%*d %*d\n" % (10, pid, _RECORD_SIZE - 12, count), 0)


def for_op(path: str) -> "WaitsFolder":
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


def transaction(path: str, change: "Callable[[dict], Tuple[dict, Tuple[str, ...]]]", node: "Optional[str]",
                now: str, name: "Optional[str]" = None, session: "Optional[str]" = None) -> "Tuple[dict, Optional[str]]":
    """Run one op on the waits folder at ``path``: take the lock, load the store, apply
    ``change`` (which returns ``(result, changed)``, ``changed`` being the names whose
    entries it changed, or raises ``rules.Refused`` having changed nothing), save the
    store if it changed, bring the mirrors in line, release.

    ``name`` and ``session`` are the op's: given, and all being as the last op left it,
    the state ``change`` gets holds whole only the entries of ``name`` and of the name
    ``session`` holds, the ones the rules look into; the others hold their ``session``.

    Returns ``(result, warning)``: ``warning`` is set when the op was saved but a mirror
    could not be written (the next op retries). Raises Refused, FolderRefused, OSError.
    A refused op on a folder that does not exist yet creates nothing.
    """
    from lichhook.waits.rules import Refused

    if not os.path.lexists(path):
        change(empty_state())  # raises Refused for an op the empty store refuses
    with for_op(path) as folder, folder.lock() as held:
        folder._sub(SESSIONS, create=True)  # refused now, not after the store is saved
        loaded = folder.open_store(held.left, node, name, session)
        state = loaded.state
        full = folder.mirrors_suspect()
        before = bound_sessions(state)
        listed = index_entries(state, loaded.counts)
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
        if loaded.ids is not None:
            ids, in_line = loaded.ids, True
        else:
            ids, in_line = folder.left_in_line(None if full else held.left, node, loaded.identity, before)
        saved = False
        try:
            if changed:
                folder.mark_dirty()
                folder.save_store(loaded, changed)
                saved = True
            # Sessions that just lost their name keep a mirror that must be emptied.
            also = tuple(sorted(set(before) - set(bound_sessions(state))))
            left = folder.sync(state, node, now, also=also, full=full, ids=ids, in_line=in_line, changed=changed,
                               listed=listed, counts=loaded.counts)
            if saved:
                # The store's rename on disk before the op answers. The mirrors' renames
                # need not be: the next op finds any that a power cut undid, by identity.
                folder.root.sync()
            if changed or full:
                folder.clear_dirty()
            held.leave(_left_record(node, loaded.identity, left, loaded))
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
