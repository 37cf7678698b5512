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

from lichhook.archive import Bytecode
from lichhook.coldstart import COMPLETE_ARCHIVE as ARCHIVE_NAME
from lichhook.coldstart import HOOKS_ARCHIVE as HOOKS_NAME
from lichhook.hotset import hooks_archive
from lichhook.install import files
from lichhook.install.jsonmerge import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional

    from lichhook.install.ownership import Owners

_UNKNOWN_PREFIX = "magic"  # magic3600/: an earlier release's folder for a Python it did not know


def data_dir() -> str:
    """<platformdirs user data dir>: where every copy lives."""
    from lichhook.paths import user_data_dir

    return user_data_dir()


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
    return os.path.join(root or data_dir(), version_folder(bytecode), ARCHIVE_NAME)


def hooks_for(bytecode: Bytecode, root: Optional[str] = None) -> str:
    """The hooks archive of the copy for the Python of ``bytecode``: what its hooks run."""
    return os.path.join(root or data_dir(), version_folder(bytecode), HOOKS_NAME)


def hooks_beside(complete: str) -> Optional[str]:
    """The hooks archive that goes with the complete archive ``complete`` (None for the
    earlier release's single copy, which had none)."""
    folder = os.path.dirname(complete)
    return os.path.join(folder, HOOKS_NAME) if is_version_folder(os.path.basename(folder)) else None


def complete_of(archive: str) -> str:
    """The complete archive of the copy ``archive`` belongs to (itself, or the one beside a
    hooks archive)."""
    if os.path.basename(archive) == HOOKS_NAME:
        return os.path.join(os.path.dirname(archive), ARCHIVE_NAME)
    return archive


def legacy_archive(root: Optional[str] = None) -> str:
    """Where an earlier release kept its one copy."""
    return os.path.join(root or data_dir(), ARCHIVE_NAME)


def copies(root: Optional[str] = None) -> List[str]:
    """Every copy there is: the earlier release's, then one per Python version."""
    root = root or data_dir()
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
    from pathlib import Path

    from lichhook.archive import serves

    if os.path.abspath(copy) != os.path.abspath(source):
        if not (os.path.isfile(copy) and serves(Path(copy), Path(source), magic)):
            return False
    hooks = hooks_beside(copy)
    if hooks is None:
        return True
    try:
        with open(copy, "rb") as f, open(hooks, "rb") as h:
            return h.read() == hooks_archive(f.read())
    except OSError:
        return False


def prepared(source: str) -> bytes:
    """``source`` with bytecode for the running Python, compiled as any other Python's
    copy is (``prepared_for``), so the copy is the same whoever installs it."""
    import sys

    return prepared_for(sys.executable, source)


def prepared_for(python: str, source: str) -> bytes:
    """``source`` with bytecode for ``python``, compiled by that Python in a process of
    its own (``lichhook.archive.compile_for``): the same bytes whoever asks."""
    from pathlib import Path

    from lichhook.archive import CompileError, compile_for

    try:
        return compile_for(python, Path(source))
    except CompileError as exc:
        raise ConfigError(f"{exc}; build the archive again (python3 build_zipapp.py) and run install from it.")


def copy_archive(data: bytes, dest: str, owners: Optional[Owners] = None) -> None:
    """Put the complete archive ``data`` at ``dest``, then its hooks archive beside it,
    each atomically, so a hook starting meanwhile runs the old copy or the new one. The
    files belong to the user whose home they are in (``owners``), even when root writes them."""
    hooks = hooks_beside(dest)
    for path, content in ((dest, data), (hooks, hooks_archive(data) if hooks else b"")):
        if path is None:
            continue
        try:
            files.write_whole(path, content, 0o755, owners)
        except OSError as exc:
            raise ConfigError(f"cannot write {path}: {exc.strerror or exc}; check that folder's permissions.")


def remove_copy(path: str) -> Optional[str]:
    """Delete a copy (its complete archive ``path`` and its hooks archive), and its
    version folder and the data folder when that leaves them empty; None, or why it
    could not be deleted."""
    for member in (hooks_beside(path), path):
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
    from lichhook.selfcmd import running_archive

    archive = running_archive()
    return complete_of(archive) if archive else None
