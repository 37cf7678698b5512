"""Who a file lichhook creates belongs to.

Run by the user, files are theirs and nothing is changed. Run as root on a user's
behalf (``sudo -E``, which keeps the user's HOME), a file or folder created inside that
home must still be the user's, or the harness, running as the user, can no longer read
its own config. So as root:

- a new file or folder inside the home gets the home's owner, and the group sudo names
  (``SUDO_GID``) when ``SUDO_UID`` is that owner, else the home's group;
- a new file or folder elsewhere gets the owner of the nearest folder above it that exists;
- an existing file keeps its owner and mode (the files layer sees to that).

``SUDO_UID`` alone is never trusted: under plain ``sudo`` HOME is root's own home, and
handing root's configs to the invoking user would let that user run code as root.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional, Tuple


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _inside(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives on Windows
        return False


def nearest_existing(path: str) -> str:
    """``path`` itself, or the deepest folder above it that exists."""
    current = os.path.abspath(path)
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


class Owners:
    """The owner policy of one install run (``home``: the user's home folder)."""

    def __init__(self, home: Optional[str], environ: Optional[Mapping[str, str]] = None,
                 as_root: Optional[bool] = None) -> None:
        self.home = os.path.realpath(home) if home else None
        self.environ = dict(os.environ if environ is None else environ)
        self.as_root = running_as_root() if as_root is None else as_root

    def for_new(self, path: str) -> Optional[Tuple[int, int]]:
        """(uid, gid) a new file or folder at ``path`` must get, or None to leave it
        as created (not root, or nothing to go by)."""
        if not self.as_root:
            return None
        real = os.path.realpath(nearest_existing(os.path.dirname(os.path.abspath(path)) or "."))
        target = os.path.join(real, os.path.basename(path))
        try:
            if self.home and _inside(target, self.home):
                st = os.stat(self.home)
                gid = st.st_gid
                sudo_uid, sudo_gid = self.environ.get("SUDO_UID", ""), self.environ.get("SUDO_GID", "")
                if sudo_uid.isdigit() and int(sudo_uid) == st.st_uid and sudo_gid.isdigit():
                    gid = int(sudo_gid)
                return st.st_uid, gid
            st = os.stat(real)
            return st.st_uid, st.st_gid
        except OSError:
            return None


def make_folders(folder: str, owners: Optional[Owners]) -> None:
    """``os.makedirs``, giving each folder it creates the owner the policy says."""
    missing = []
    current = os.path.abspath(folder)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if os.path.isdir(path):
                continue
            raise
        ids = owners.for_new(path) if owners else None
        if ids:
            os.chown(path, *ids)
