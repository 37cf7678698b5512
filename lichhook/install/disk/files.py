"""Planned file edits on a user's files: read, transform, show as a diff, and write back
without ever damaging what is there.

An ``Edit`` is a path and a pure function from the file's bytes (None: absent) to its
new bytes (None: delete). Planning runs the function; applying runs it again on what
is on disk at that moment.

What every write keeps:

- Only regular files are read or written. A FIFO, a device, a socket or a folder where a
  config belongs is refused at once, never opened for reading in a way that could wait.
- A symbolic link is followed: the file it points to is replaced, atomically, in its own
  folder, and the link stays a link. A dangling link, a link loop, and a file (linked or
  not) whose folder cannot be written are refused, naming the path and the fix.
- An existing file keeps its mode, owner and group. A new file or folder is created by
  the process as it runs: the user (root working in a user's home first becomes that
  user, lichhook.install.disk.ownership), or root in folders root owns.
- A file with more than one hard link is refused: replacing it would split the links.
- A harness rewriting its file meanwhile loses nothing. The file is replaced only if it
  still is the one read (checked after the new file is flushed, just before the swap);
  otherwise it is read and transformed again, a few times at most. On Linux the swap is
  an atomic exchange (``renameat2(RENAME_EXCHANGE)``): a version written in the
  microseconds between the check and the swap comes back out, is put back at once, and
  the edit is planned again from it. Elsewhere a plain rename follows the check, which
  leaves those microseconds open.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
import sys
import time
from typing import Callable, List, Optional, Sequence

from lichhook.diskio import REPLACE_RETRY_SECONDS, kind_of, read_status, replace, temporary_name, write_atomic
from lichhook.install.errors import ConfigError
from lichhook.install.disk.ownership import Owners, make_folders, root_may_write, running_as_root

try:
    import ctypes
except ImportError:  # a Python built without _ctypes: no atomic exchange
    ctypes = None  # type: ignore[assignment]
from lichhook.trust import nearest_existing

BACKUP_SUFFIX = ".lichhook-backup"
# No harness config comes near this; a file past it (a runaway log, a sparse file of
# terabytes) is refused before it is read rather than exhausting memory.
MAX_CONFIG_BYTES = 128 * 1024 * 1024
ATTEMPTS = 20
_O_BINARY = getattr(os, "O_BINARY", 0)


# -- what a refused file operation means on Windows ------------------------------------
# A Windows error's own text ("Access is denied") names neither the read-only attribute,
# nor the program holding the file, nor the path-length limit: ``windows_problem`` does.

# Windows' limit on a path's length for a program, unless long paths are enabled.
MAX_PATH = 260
# The errors Windows gives when another program has the file open without sharing it,
# or holds a lock on the bytes read.
SHARING_VIOLATION, LOCK_VIOLATION = 32, 33


def windows_problem(path: str, exc: OSError, writing: bool, windows: bool = sys.platform == "win32") -> Optional[str]:
    """On Windows, what ``exc`` (raised reading or ``writing`` ``path``) means, with its
    fix; None elsewhere, or when nothing more is known than the error's own text."""
    if not windows:
        return None
    if len(path) >= MAX_PATH and not isinstance(exc, PermissionError):
        return (f"the path is {len(path)} characters long, and Windows refuses paths of {MAX_PATH} or more "
                "unless long paths are enabled; enable them (as administrator, in PowerShell: New-ItemProperty "
                "-Path HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem -Name LongPathsEnabled -Value 1 "
                "-PropertyType DWORD -Force) or use a shorter folder, then run again")
    if not isinstance(exc, PermissionError) or not os.path.isfile(path):
        return None
    if writing and not os.access(path, os.W_OK):  # on Windows: the read-only attribute
        return ("the file is read-only; if lichhook may change it, clear that (in PowerShell: Set-ItemProperty "
                f"-LiteralPath '{path}' -Name IsReadOnly -Value $false), then run again")
    if writing or getattr(exc, "winerror", None) in (SHARING_VIOLATION, LOCK_VIOLATION):
        # Writing: the new bytes went into the same folder, and the file is not
        # read-only, so what refuses the swap is another program holding the file.
        return ("another program has the file open or locked (the harness itself, an editor, a sync or backup "
                "tool); close it, then run again")
    return None


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _cannot(verb: str, path: str, exc: OSError, fix: str) -> ConfigError:
    """``cannot <verb> <path>``: why, in Windows' terms when it has some, else the error
    and ``fix``."""
    said = windows_problem(path, exc, writing=verb == "write")
    return ConfigError(f"cannot {verb} {path}: {said}." if said else f"cannot {verb} {path}: {_why(exc)}; {fix}")


class Snapshot:
    """A file as read: ``path`` as named, ``real`` the file a link points to (or the
    path itself), ``data`` its bytes (None: absent), ``st`` its status when present."""

    def __init__(self, path: str, real: str, data: Optional[bytes], st: Optional[os.stat_result]) -> None:
        self.path = path
        self.real = real
        self.data = data
        self.st = st
        self.linked = os.path.islink(path)


def _resolve(path: str) -> str:
    """The file ``path`` names after following links; refuses dangling links and loops."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        lst = None
    except NotADirectoryError:
        raise ConfigError(f"cannot use {path}: a part of that path is a file, not a folder; move it away, then run again.")
    except OSError as exc:
        raise _cannot("read", path, exc, "fix its permissions, then run again.")
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        try:
            os.stat(path)
        except FileNotFoundError:
            raise ConfigError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                              "create that file or remove the link, then run again. Nothing was changed there.")
        except OSError as exc:
            raise ConfigError(f"{path} is a symbolic link that cannot be followed ({_why(exc)}); "
                              "fix or remove the link, then run again.")
    if lst is None:
        above = nearest_existing(path)
        if os.path.islink(above) and not os.path.exists(above):
            raise ConfigError(f"cannot create {path}: {above} is a symbolic link to {os.readlink(above)}, which does "
                              "not exist; create that folder or remove the link, then run again.")
    # realpath also resolves links among the folders, and keeps the parts that do not
    # exist yet: a new file is created in the folder a linked config folder points to.
    return os.path.realpath(path)


def snapshot(path: str) -> Snapshot:
    """Read ``path`` as it is now. Raises ConfigError naming the path and the fix."""
    real = _resolve(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return Snapshot(path, real, None, None)
    except NotADirectoryError:
        raise ConfigError(f"cannot use {path}: a part of that path is a file, not a folder; move it away, then run again.")
    except OSError as exc:
        raise _cannot("read", path, exc, "fix its permissions, then run again.")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path} is {kind_of(st.st_mode)}, where a file belongs; move it away, then run again.")
    try:
        # Non-blocking: should a FIFO replace the file after the check above, the open
        # returns at once and is refused below.
        st, data = read_status(real, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return Snapshot(path, real, None, None)
    except OSError as exc:
        raise _cannot("read", path, exc, "fix its permissions, then run again.")
    if data is None:
        raise ConfigError(f"{path} is {kind_of(st.st_mode)}, where a file belongs; move it away, then run again.")
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB "
                          f"({max(st.st_size, len(data))} bytes), more than any config lichhook edits holds; "
                          "move it away or shrink it, then run again. It was left untouched.")
    return Snapshot(path, real, data, st)


def read(path: str) -> Optional[bytes]:
    """The file's bytes, or None when it does not exist."""
    return snapshot(path).data


def check_writable(snap: Snapshot, deleting: bool = False) -> None:
    """Refuse, before anything is written, a change that could not be made safely."""
    folder = os.path.dirname(snap.real)
    where = nearest_existing(folder)
    if not os.path.isdir(where):
        raise ConfigError(f"cannot create {snap.path}: {where} is a file, not a folder; move it away, then run again.")

    root_may_write(os.path.realpath(where), snap.path)
    root_may_write(os.path.realpath(nearest_existing(os.path.dirname(os.path.abspath(snap.path)))), snap.path)
    if not os.access(where, os.W_OK | os.X_OK):
        if snap.linked:
            raise ConfigError(f"{snap.path} is a symbolic link to {snap.real}, and the folder {where} cannot be "
                              "written by you; make it writable, or replace the link with a copy of the file, "
                              "then run again. Nothing was changed there.")
        raise ConfigError(f"cannot write {snap.path}: the folder {where} cannot be written by you; "
                          "make it writable, then run again.")
    if snap.st is None or deleting:
        return
    if snap.st.st_nlink > 1:
        raise ConfigError(f"{snap.path} has {snap.st.st_nlink} hard links; replacing it would split them. "
                          "Make it a single file or a symbolic link, then run again.")
    if hasattr(os, "geteuid") and not running_as_root() and snap.st.st_uid != os.geteuid():
        raise ConfigError(f"{snap.path} belongs to another user (uid {snap.st.st_uid}); rewriting it would make it "
                          "yours. Run this as that user, or change the file's owner, then run again.")
    if hasattr(os, "getgroups") and not running_as_root() and snap.st.st_gid not in (os.getegid(), *os.getgroups()):
        raise ConfigError(f"{snap.path} has group id {snap.st.st_gid}, which you are not in; rewriting it would change "
                          "its group. Run this as a member of that group, or change the file's group, then run again.")


class Edit:
    """One file lichhook may change.

    ``transform(raw, notes)`` returns the new bytes and may append sentences for the
    user to ``notes``. ``backup``: keep ``<file>.lichhook-backup`` (once) before the first
    change of a file that existed, as for every user config. ``prune_dirs``: folders to
    remove when a deletion leaves them empty (folders lichhook itself made). ``mode``:
    the mode of a file this edit creates.
    """

    def __init__(self, path: str, transform: Callable[[Optional[bytes], List[str]], Optional[bytes]],
                 backup: bool = True, prune_dirs: Sequence[str] = (), mode: int = 0o644) -> None:
        self.path = path
        self.transform = transform
        self.backup = backup
        self.prune_dirs = tuple(prune_dirs)
        self.mode = mode
        # The top-level names of a config's document (None: unreadable), for a transform
        # of a structured config; ``apply`` will not write a version that lost some.
        self.keys_of: Optional[Callable[[bytes], Optional[set]]] = getattr(transform, "keys_of", None)

    def plan(self) -> Planned:
        snap = snapshot(self.path)
        notes: list = []
        after = self.transform(snap.data, notes)
        planned = Planned(self, snap, after, notes)
        if planned.changed:
            check_writable(snap, deleting=after is None)
        return planned


class Planned:
    def __init__(self, edit: Edit, snap: Snapshot, after: Optional[bytes], notes: Optional[List[str]] = None) -> None:
        self.edit = edit
        self.snap = snap
        self.after = after
        self.notes = list(notes or ())

    @property
    def before(self) -> Optional[bytes]:
        return self.snap.data

    @property
    def path(self) -> str:
        return self.edit.path

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def describe(self, dry_run: bool = False) -> str:
        if not self.changed:
            return f"unchanged {self.path}"
        verb = "remove" if self.after is None else "create" if self.before is None else "change"
        where = f" (through the link to {self.snap.real})" if self.snap.linked else ""
        if dry_run:
            return f"would {verb} {self.path}{where}"
        return f"{verb}d {self.path}{where}"

    def diff(self) -> str:
        """A unified diff from the file as it is to the file as it would be."""
        def lines(data: Optional[bytes]) -> list:
            if data is None:
                return []
            return data.decode("utf-8", "replace").splitlines(keepends=True)

        old, new = lines(self.before), lines(self.after)
        text = "".join(difflib.unified_diff(
            old, new,
            fromfile=self.path if self.before is not None else "/dev/null",
            tofile=self.path if self.after is not None else "/dev/null"))
        if text and not text.endswith("\n"):
            text += "\n"
        return text


# -- writing --------------------------------------------------------------------------


def _write_temp(folder: str, name: str, data: bytes, mode: int, ids: Optional[tuple]) -> tuple:
    """(path, status) of a new file in ``folder`` holding ``data``, flushed to disk,
    with ``mode`` and owner ``ids``."""
    tmp = os.path.join(folder, temporary_name(name))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        if ids is not None and hasattr(os, "fchown"):
            os.fchown(fd, *ids)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    if not hasattr(os, "fchmod"):
        os.chmod(tmp, mode)
    return tmp, st


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_exchange_fn: list = []


def _exchanger() -> Optional[Callable[..., int]]:
    """libc's renameat2 on Linux, else None. Looked up before the check that precedes a
    swap: loading ctypes takes milliseconds, which must not stand between the two."""
    if not _exchange_fn:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
                if fn is not None:
                    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                    fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                fn = None
        _exchange_fn.append(fn)
    return _exchange_fn[0]


def _exchange(a: str, b: str) -> bool:
    """Swap the files at ``a`` and ``b`` atomically; False where the system cannot."""
    fn = _exchanger()
    if fn is None:
        return False

    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV, errno.EPERM):
        return False  # this file system cannot exchange; check, then rename
    raise OSError(err, os.strerror(err), b)


def _create(snap: Snapshot, data: bytes, mode: int, owners: Optional[Owners]) -> bool:
    """Create the absent file; False when someone created it meanwhile."""
    folder = os.path.dirname(snap.real)
    make_folders(folder, owners)
    if owners:
        owners.may_create(snap.real)
    tmp, _ = _write_temp(folder, os.path.basename(snap.real), data, mode, None)
    return _put_new(tmp, snap.real)


def _put_new(tmp: str, path: str) -> bool:
    """Give the absent ``path`` the new file ``tmp`` (which is then gone); False when a
    file appeared there meanwhile: one never read is never overwritten."""
    try:
        os.link(tmp, path)  # fails if a file appeared
        return True
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links
        if os.path.lexists(path):
            return False
        replace(tmp, path)
        return True
    finally:
        _unlink(tmp)


def _identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino


def _unchanged(snap: Snapshot) -> bool:
    """Whether the file still is the one read (same file, size and modification time)."""
    assert snap.st is not None
    try:
        st = os.stat(snap.real)
    except OSError:
        return False
    return (_identity(st), st.st_size, st.st_mtime_ns) == (_identity(snap.st), snap.st.st_size, snap.st.st_mtime_ns)


def _kept_ids(st: os.stat_result) -> Optional[tuple]:
    """The (uid, gid) a rewritten file must be given to keep its owner and group: both as
    root; as a user, the group alone (a user may give their file any group they are in;
    ``check_writable`` refused the others), -1 leaving the owner as created."""
    if not hasattr(os, "geteuid"):
        return None
    if running_as_root():
        return st.st_uid, st.st_gid
    return (-1, st.st_gid) if st.st_gid != os.getegid() else None


def _replace(snap: Snapshot, data: bytes) -> bool:
    """Replace the file read as ``snap`` with ``data``; False when it changed since it
    was read (then nothing was replaced, and planning starts over)."""
    assert snap.st is not None
    folder, name = os.path.dirname(snap.real), os.path.basename(snap.real)
    tmp, ours = _write_temp(folder, name, data, stat.S_IMODE(snap.st.st_mode), _kept_ids(snap.st))
    _exchanger()
    try:
        if not _unchanged(snap):
            return False
        if not _exchange(tmp, snap.real):
            # No atomic exchange on this system: the check above, then the rename.

            replace(tmp, snap.real)
            tmp = ""
            return True
        # ``tmp`` now names what stood at the path an instant ago. It should be the file
        # read; if someone wrote theirs in the microseconds since the check, put theirs
        # back at once (it is held here, not lost) and plan again from it.
        displaced = os.lstat(tmp)
        if _identity(displaced) == _identity(snap.st) and read_status(tmp)[1] == snap.data:
            return True
        _exchange(tmp, snap.real)
        if _identity(os.lstat(tmp)) != _identity(ours):
            _exchange(tmp, snap.real)  # a yet newer version landed meanwhile: it wins
        return False
    finally:
        if tmp:
            _unlink(tmp)


def _delete(snap: Snapshot) -> bool:
    """Delete the file if it still is what was read; False when it changed."""
    folder, name = os.path.dirname(snap.real), os.path.basename(snap.real)
    aside = os.path.join(folder, temporary_name(name))
    try:
        os.rename(snap.real, aside)  # atomic: whatever stands there now is ours to inspect
    except FileNotFoundError:
        return True
    st, data = read_status(aside)  # data None: a folder put there meanwhile, to put back
    assert snap.st is not None
    if _identity(st) == _identity(snap.st) and data == snap.data:
        _unlink(aside)
        return True
    try:
        os.link(aside, snap.real)  # put their version back, unless a newer one appeared
    except OSError:
        if not os.path.lexists(snap.real):
            os.rename(aside, snap.real)
            return False
    _unlink(aside)
    return False


def _keep_backup(snap: Snapshot, owners: Optional[Owners]) -> None:
    """``<path>.lichhook-backup`` beside the path as named (beside a link, not in the
    folder it points into), once: with the original's bytes, mode and owner."""
    backup = snap.path + BACKUP_SUFFIX
    if os.path.lexists(backup) or snap.data is None or snap.st is None:
        return
    folder = os.path.dirname(os.path.abspath(backup))
    tmp, _ = _write_temp(folder, os.path.basename(backup), snap.data, stat.S_IMODE(snap.st.st_mode),
                         _kept_ids(snap.st))
    _put_new(tmp, backup)


# A blank config is taken as blank only once it has stood untouched this long; until then
# it is read again every SETTLE_PAUSE seconds.
BLANK_QUIET, SETTLE_PAUSE = 1.0, 0.05


def _settled(edit: Edit, planned: Planned) -> Planned:
    """A blank config (0 bytes, or only white space) may be a harness's file caught between
    its truncation and its write, which a busy machine can stretch past half a second. It is
    taken as blank once its last change is BLANK_QUIET seconds old (at once for a file blank
    for long), waiting BLANK_QUIET at most."""
    waited = 0.0
    while planned.before is not None and not planned.before.strip() and waited < BLANK_QUIET:
        st = planned.snap.st
        if st is not None and not 0 <= time.time() - st.st_mtime < BLANK_QUIET:
            break
        time.sleep(SETTLE_PAUSE)
        waited += SETTLE_PAUSE
        planned = edit.plan()
    return planned


def _nothing_lost(edit: Edit, planned: Planned, seen: Optional[bytes]) -> None:
    """Refuse to write a config that lost top-level names against the version read a
    moment before (``seen``, when install planned), or that is blank while its backup
    holds names: another program is rewriting it, and what lichhook would write from it
    would lose the rest."""
    keys_of = edit.keys_of
    if keys_of is None or planned.before is None:
        return
    now = keys_of(planned.before)
    if now is None:
        return
    if seen is not None and seen != planned.before:
        earlier = keys_of(seen) or set()
        lost = sorted(earlier - now)
        if lost:
            raise ConfigError(
                f"{edit.path} lost {', '.join(map(repr, lost[:5]))}{' and more' if len(lost) > 5 else ''} since "
                "lichhook read it a moment ago: another program is rewriting it. Nothing was written to it; "
                "run again once that program is done.")
    if not now:
        try:
            backup = snapshot(edit.path + BACKUP_SUFFIX).data
        except ConfigError:
            backup = None
        held = keys_of(backup) if backup else None
        if held:
            raise ConfigError(
                f"{edit.path} is empty, while its backup {edit.path + BACKUP_SUFFIX} holds {len(held)} settings: "
                "another program may be rewriting it. Nothing was written to it; run again once that program "
                "is done, or, if it really lost them, restore it from the backup first.")


def apply(edit: Edit, owners: Optional[Owners] = None, seen: Optional[bytes] = None) -> Planned:
    """Bring the file to its planned state; returns what was done. ``seen``: the file's
    bytes when the change was planned and shown (nothing that lost names since is written)."""
    for _ in range(ATTEMPTS):
        planned = edit.plan()
        if edit.keys_of is not None:
            planned = _settled(edit, planned)
            if planned.changed:
                _nothing_lost(edit, planned, seen)
        if not planned.changed:
            return planned
        snap = planned.snap
        try:
            if planned.before is None:
                assert planned.after is not None
                if _create(snap, planned.after, edit.mode, owners):
                    return planned
                continue
            if planned.after is None:
                if snap.linked:
                    raise ConfigError(f"{edit.path} is a symbolic link; lichhook does not delete the file it points to.")
                if _delete(snap):
                    for folder in edit.prune_dirs:
                        try:
                            os.rmdir(folder)
                        except OSError:
                            pass  # not empty, or already gone: keep it
                    return planned
                continue
            if edit.backup:
                _keep_backup(snap, owners)
            if _replace(snap, planned.after):
                return planned
        except OSError as exc:
            raise _cannot("write", edit.path, exc, "check its folder's permissions.")
    raise ConfigError(f"{edit.path} kept changing while lichhook tried to update it; close the program writing it and run again.")


def write_whole(path: str, data: bytes, mode: int, owners: Optional[Owners],
                seconds: float = REPLACE_RETRY_SECONDS) -> None:
    """Put ``data`` at ``path`` whatever stands there (a file lichhook alone writes, such
    as the installed archive): atomically, by renaming a new file over the path, so a
    reader sees the old file or the new one whole, never one rewritten in place. A link
    found at the path is replaced, never written through: lichhook's own files are never
    links, and one planted there must not steer the write elsewhere. On Windows the rename
    waits up to ``seconds`` for the programs holding the file open to let go."""
    make_folders(os.path.dirname(os.path.abspath(path)), owners)
    if owners:
        owners.may_create(path)
    write_atomic(path, data, mode, seconds)


# -- files lichhook owns outright ---------------------------------------------------------
# A plugin folder's files, a JS module: written whole, recognised only by proof that
# lichhook wrote them (``is_ours``: a sentence only lichhook writes, or the exact shape of
# its file), never overwriting or deleting a file someone else put there, even one that
# names lichhook.


def write_owned(path: str, content: bytes, is_ours: Callable[[bytes], bool], prune_dirs: Sequence[str] = ()) -> Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is not None and raw != content and not is_ours(raw):
            raise ConfigError(f"{path} exists and was not written by lichhook; move it away, then run again. It was left untouched.")
        return content

    return Edit(path, transform, backup=False, prune_dirs=prune_dirs)


def remove_owned(path: str, is_ours: Callable[[bytes], bool], prune_dirs: Sequence[str] = ()) -> Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is None or not is_ours(raw):
            if raw is not None:
                notes.append(f"left {path}: lichhook did not write it")
            return raw  # absent, or someone else's: leave it
        return None

    return Edit(path, transform, backup=False, prune_dirs=prune_dirs)


def holding(marker: bytes) -> Callable[[bytes], bool]:
    """``is_ours`` for a file lichhook marks with a sentence no one else writes."""
    return lambda raw: marker in raw
