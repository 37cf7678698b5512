"""Planned file edits: read, transform, show as a diff, write atomically with a backup.

An ``Edit`` is a path and a pure function from the file's bytes (None: absent) to its
new bytes (None: delete). Planning runs the function; applying runs it again on what
is on disk at that moment, so a harness rewriting its own config between the two
(Claude Code rewrites ``~/.claude.json`` often) loses nothing.
"""

from __future__ import annotations

import os

from lichhook.install.jsonmerge import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional, Sequence

BACKUP_SUFFIX = ".lichhook-backup"


def read(path: str) -> Optional[bytes]:
    """The file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder, where a file was expected; move it away, then run again.")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}; fix its permissions, then run again.")


class Edit:
    """One file lichhook may change.

    ``backup``: keep ``<file>.lichhook-backup`` (once) before the first change of a file
    that existed, as for every user config. ``prune_dirs``: folders to remove when a
    deletion leaves them empty (folders lichhook itself made).
    """

    def __init__(self, path: str, transform: Callable[[Optional[bytes]], Optional[bytes]],
                 backup: bool = True, prune_dirs: Sequence[str] = (), mode: int = 0o644) -> None:
        self.path = path
        self.transform = transform
        self.backup = backup
        self.prune_dirs = tuple(prune_dirs)
        self.mode = mode

    def plan(self) -> "Planned":
        before = read(self.path)
        return Planned(self, before, self.transform(before))


class Planned:
    def __init__(self, edit: Edit, before: Optional[bytes], after: Optional[bytes]) -> None:
        self.edit = edit
        self.before = before
        self.after = after

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
        if dry_run:
            return f"would {verb} {self.path}"
        return f"{verb}d {self.path}"

    def diff(self) -> str:
        """A unified diff from the file as it is to the file as it would be."""
        import difflib

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


def write_atomic(path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, so a
    reader sees the old file or the new one, never half of either."""
    from lichhook import diskio

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    diskio.write_atomic(path, data, mode)


def _keep_backup(path: str, before: bytes, mode: int) -> None:
    backup = path + BACKUP_SUFFIX
    if not os.path.exists(backup):
        write_atomic(backup, before, mode)


def apply(edit: Edit) -> Planned:
    """Bring the file to its planned state; returns what was done. A file that changes
    on disk while this runs is read and transformed again (a few times at most)."""
    for _ in range(5):
        planned = edit.plan()
        if not planned.changed:
            return planned
        if read(edit.path) != planned.before:
            continue  # someone wrote it meanwhile: plan again from the new bytes
        try:
            mode = os.stat(edit.path).st_mode & 0o7777 if planned.before is not None else edit.mode
        except OSError:
            mode = edit.mode
        try:
            # A deletion only ever removes what is wholly lichhook's: nothing to back up.
            if planned.before is not None and planned.after is not None and edit.backup:
                _keep_backup(edit.path, planned.before, mode)
            if planned.after is None:
                os.remove(edit.path)
                for folder in edit.prune_dirs:
                    try:
                        os.rmdir(folder)
                    except OSError:
                        pass  # not empty, or already gone: keep it
            else:
                write_atomic(edit.path, planned.after, mode)
        except OSError as exc:
            raise ConfigError(f"cannot write {edit.path}: {exc.strerror or exc}; check its folder's permissions.")
        return planned
    raise ConfigError(f"{edit.path} kept changing while lichhook tried to update it; close the program writing it and run again.")
