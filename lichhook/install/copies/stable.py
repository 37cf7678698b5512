"""The per-user copies of the archive that registrations run: one per Python version.

An archive's bytecode serves one Python version; any other compiles every module from
source at every run (2 to 4 times the hook's cost). So ``install`` gives the Python it
registers a copy compiled for it, in a folder of its own (``<data>/py3.12/``), and two
harnesses registered with different Pythons each run a copy of their own instead of
fighting over one (whichever install ran last would leave the other's hooks compiling
at every run). The folder holds the complete archive (``lichhook.pyz``: the MCP server
and every command run it) and its hooks archive (``hooks.pyz``, what the registered
hooks run: lichhook.coldstart says why). An earlier release kept a single copy at
``<data>/lichhook.pyz``; registrations naming it are still lichhook's, and it is removed
once nothing runs it.
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path
from typing import Any, List, Optional

from lichhook.archive import Bytecode, CompileError, compile_for, serves
from lichhook.diskio import read_regular
from lichhook.client import claims_path  # what install claimed, beside the hooks archive (lichhook.install.plugin.claim)
from lichhook.__main__ import COMPLETE_ARCHIVE as ARCHIVE_NAME
from lichhook.__main__ import HOOKS_ARCHIVE as HOOKS_NAME
from lichhook.hotset import hooks_archive
from lichhook.install.disk import files
from lichhook.install.errors import ConfigError
from lichhook.install.disk.ownership import Owners
from lichhook.coldstart import user_data_dir
from lichhook.trust import nearest_existing, untrusted
from lichhook.hook import HOOK_SECONDS
from lichhook.selfcmd import running_archive

# How long a copy waits on Windows for the programs holding its archives open to let go.
# A running hook holds both from its start to its exit (lichhook/__main__.py): its
# deadline, HOOK_SECONDS from its start, plus its interpreter's start and exit, which took
# up to 0.6 s under wine. diskio's one second would give up on a hook still within its
# deadline; this outlasts any one hook.
ARCHIVE_RETRY_SECONDS = HOOK_SECONDS + 1.0
_UNKNOWN_PREFIX = "magic"  # magic3600/: an earlier release's folder for a Python it did not know


def version_folder(bytecode: Bytecode) -> str:
    """The folder of the copy for the Python of ``bytecode``: ``py3.12``."""
    return f"py{bytecode.version}"


def is_version_folder(name: str) -> bool:
    """Whether ``name`` is a folder ``version_folder`` makes."""
    def number(text: str) -> bool:
        return text.isascii() and text.isdigit()

    if name.startswith("py"):
        major, dot, minor = name[2:].partition(".")
        return bool(dot) and number(major) and number(minor)
    return name.startswith(_UNKNOWN_PREFIX) and number(name[len(_UNKNOWN_PREFIX):])


def archive_for(bytecode: Bytecode, root: Optional[str] = None) -> str:
    """The complete archive of the copy for the Python of ``bytecode``."""
    return os.path.join(root or user_data_dir(), version_folder(bytecode), ARCHIVE_NAME)


def hooks_for(bytecode: Bytecode, root: Optional[str] = None) -> str:
    """The hooks archive of the copy for the Python of ``bytecode``: what its hooks run."""
    return os.path.join(root or user_data_dir(), version_folder(bytecode), HOOKS_NAME)


def hooks_beside(complete: str) -> Optional[str]:
    """The hooks archive that goes with the complete archive ``complete`` (None for the
    earlier release's single copy, which had none)."""
    folder = os.path.dirname(complete)
    return os.path.join(folder, HOOKS_NAME) if is_version_folder(os.path.basename(folder)) else None


def complete_of(archive: str, paths: Any = os.path) -> str:
    """The complete archive of the copy ``archive`` belongs to (itself, or the one beside a
    hooks archive); ``paths``: ntpath or posixpath, for a path of another OS."""
    if paths.basename(archive) == HOOKS_NAME:
        return paths.join(paths.dirname(archive), ARCHIVE_NAME)
    return archive


def legacy_archive(root: Optional[str] = None) -> str:
    """Where an earlier release kept its one copy."""
    return os.path.join(root or user_data_dir(), ARCHIVE_NAME)


def copies(root: Optional[str] = None) -> List[str]:
    """Every copy there is: the earlier release's, then one per Python version."""
    root = root or user_data_dir()
    found = [legacy_archive(root)] if os.path.isfile(legacy_archive(root)) else []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return found
    for name in names:
        path = os.path.join(root, name, ARCHIVE_NAME)
        if is_version_folder(name) and (os.path.isfile(path) or os.path.isfile(os.path.join(root, name, HOOKS_NAME))):
            found.append(path)
    return found


def up_to_date(copy: str, source: str, magic: bytes) -> bool:
    """Whether the copy whose complete archive is ``copy`` already is ``source`` with
    bytecode for the Python of ``magic``, with its hooks archive beside it."""
    if copy_problem(copy):
        return False  # written again: a new file of the user's own, closed to others
    if os.path.abspath(copy) != os.path.abspath(source):
        if not (os.path.isfile(copy) and serves(Path(copy), Path(source), magic)):
            return False
    hooks = hooks_beside(copy)
    try:
        return hooks is None or _made_from(hooks, copy)
    except (OSError, zipfile.BadZipFile):
        return False


def _made_from(hooks: str, copy: str) -> bool:
    """Whether the hooks archive at ``hooks`` is the one made from the complete archive at
    ``copy`` (read without waiting on a FIFO put there). Raises OSError, and
    zipfile.BadZipFile when ``copy`` is not a zip archive."""
    complete = read_regular(copy)
    return complete is not None and read_regular(hooks) == hooks_archive(complete)


def copy_problem(complete: str) -> Optional[str]:
    """Why another user could change the copy whose complete archive is ``complete``
    (either archive, or a folder above them), or None. Its hooks run as the user (as root,
    for root's harnesses), so it must be the user's alone, as a plugin must
    (lichhook.trust)."""
    for path in (complete, hooks_beside(complete)):
        if path is None or not os.path.lexists(path):
            continue
        if os.path.islink(path):
            return f"{path} is a symbolic link, where lichhook keeps a file of its own"
        problem = untrusted(path)
        if problem:
            return problem
    return None


def folder_problem(dest: str) -> Optional[str]:
    """Why another user could change what install writes at ``dest`` through a folder
    above it (install will not chmod folders it did not make), or None."""
    return untrusted(nearest_existing(os.path.dirname(os.path.abspath(dest))))


def pair_mismatch(copy: str) -> Optional[str]:
    """None when the hooks archive beside ``copy`` was made from it (or either is absent),
    else what is wrong: a hook would run one release and reach into another."""
    hooks = hooks_beside(copy)
    if hooks is None or not (os.path.isfile(copy) and os.path.isfile(hooks)):
        return None
    try:
        if _made_from(hooks, copy):
            return None
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        return f"cannot compare {hooks} with {copy}: {exc}"
    return (f"{hooks} does not belong with {copy} (an install or upgrade replaced only one of the two), "
            "so the hooks run code from two releases")


def prepared(source: str) -> bytes:
    """``source`` with bytecode for the running Python, compiled as any other Python's
    copy is (``prepared_for``), so the copy is the same whoever installs it."""
    return prepared_for(sys.executable, source)


def prepared_for(python: str, source: str) -> bytes:
    """``source`` with bytecode for ``python``, compiled by that Python in a process of
    its own (``lichhook.archive.compile_for``): the same bytes whoever asks."""
    try:
        return compile_for(python, Path(source))
    except CompileError as exc:
        raise ConfigError(f"{exc}; build the archive again (python3 build_zipapp.py) and run install from it.")


def copy_archive(data: bytes, dest: str, owners: Optional[Owners] = None) -> None:
    """Put the complete archive ``data`` at ``dest`` and its hooks archive beside it, each
    atomically, so a hook starting meanwhile runs the old copy or the new one; the two are
    replaced together or not at all: a hooks archive reaches the complete one beside it
    for anything it lacks, so an old one beside a new one (or the reverse) is a copy that
    belongs to no release. The files belong to the user whose home they are in
    (``owners``), even when root writes them."""
    hooks = hooks_beside(dest)
    # The hooks archive first: it is the one a running hook holds open, and when it cannot
    # be replaced nothing has changed yet.
    pair = [(hooks, hooks_archive(data)), (dest, data)] if hooks else [(dest, data)]
    before = {path: _old_bytes(path) for path, _ in pair}
    done: list = []
    for path, content in pair:
        try:
            files.write_whole(path, content, 0o755, owners, ARCHIVE_RETRY_SECONDS)
        except (OSError, ConfigError) as exc:
            undone = _put_back(done, owners)
            error = ConfigError(str(exc) + (_left(undone) if undone else "") if isinstance(exc, ConfigError)
                                else _not_written(path, exc, undone))
            error.partly_done = bool(undone)  # type: ignore[attr-defined]  # install's last word
            raise error from None
        done.append(before[path] + (path,))


def _old_bytes(path: str) -> tuple:
    """(whether a file stood at ``path``, its bytes) before a copy replaces it. Something
    else there (a FIFO, which is never waited on) counts as no file: it is not put back."""
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return (False, b"")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}; fix its permissions, then run install again.")
    return (data is not None, data or b"")


def _put_back(done: list, owners: Optional[Owners]) -> Optional[str]:
    """Give the files in ``done`` ((existed, old bytes, path)) back what they held; None, or
    the one that could not be."""
    for existed, old, path in reversed(done):
        try:
            if existed:
                files.write_whole(path, old, 0o755, owners, ARCHIVE_RETRY_SECONDS)
            else:
                os.remove(path)
        except OSError:
            return path
    return None


def _left(undone: str) -> str:
    return (f" The other archive beside it, {undone}, is already the new one and could not be put back: "
            "run install again to bring the two together.")


def _not_written(path: str, exc: OSError, undone: Optional[str]) -> str:
    """What went wrong writing ``path`` of a copy, with the fix; and what that left."""
    left = _left(undone) if undone else ""
    if sys.platform == "win32" and isinstance(exc, PermissionError) and os.path.isfile(path) \
            and os.access(path, os.W_OK):
        # The new bytes were written beside it, so the folder is writable and the file
        # is not read-only: Windows refuses to replace a file another process has open.
        return (f"cannot replace {path}: another program has it open (a harness running a lichhook hook or "
                f"its MCP server, or a virus scanner); close the harnesses that use lichhook, then run "
                f"install again.{left}")
    return f"cannot write {path}: {exc.strerror or exc}; {_writable_hint(path)}{left}"


def _writable_hint(path: str) -> str:
    """What to do when the copy at ``path`` cannot be written: the nearest folder of it
    that exists, which must be writable (or another data folder)."""
    folder = os.path.dirname(path)
    while folder and not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    where = "XDG_DATA_HOME" if os.name != "nt" else "LOCALAPPDATA"
    return (f"make {folder} writable for you, or set {where} to a folder you can write "
            "(lichhook keeps its copy of the archive there), then run install again.")


def remove_copy(path: str) -> Optional[str]:
    """Delete a copy (its complete archive ``path`` and its hooks archive), and its
    version folder and the data folder when that leaves them empty; None, or why it
    could not be deleted."""
    for member in (hooks_beside(path), claims_path(path), path):
        if member is None:
            continue
        try:
            os.remove(member)
        except FileNotFoundError:
            pass
        except OSError as exc:
            return exc.strerror or str(exc)
    folder = os.path.dirname(path)
    for candidate in ((folder, os.path.dirname(folder)) if is_version_folder(os.path.basename(folder)) else (folder,)):
        try:
            os.rmdir(candidate)
        except OSError:
            break  # not empty, or not ours to remove
    return None


def running_archive_or_none() -> Optional[str]:
    """The complete archive this lichhook runs from (the one beside it, when it runs from
    a hooks archive), or None when run from source."""
    archive = running_archive()
    return complete_of(archive) if archive else None
