"""Whose rights install, uninstall and doctor use: the rule for root.

Run by a user, everything is theirs and nothing here acts. Run as root with a HOME that
belongs to another user (``sudo -E``, which keeps the user's HOME), root does none of the
file work itself: the process first becomes the home's owner (``become_home_owner``:
their uid, the group sudo names or theirs, their groups), for good, before it reads a
single file there. Everything after that (following a link the user planted, creating a
folder, replacing ``hooks.pyz``, running the "Python" a registration names) happens with
the user's rights, so the user gains nothing they did not have, and new files are theirs
without a ``chown`` by path that a swapped folder could redirect.

Root in a home of its own writes only into folders root owns (``root_may_write``): a
config linked into a folder of another user is refused rather than written as root.

``SUDO_UID`` alone is never trusted: under plain ``sudo`` HOME is root's own home, and
handing root's configs to the invoking user would let that user run code as root.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import List, Mapping, Optional, Tuple

from lichhook.install.errors import ConfigError
from lichhook import trust
from lichhook.selfcmd import running_archive

try:
    import pwd
except ImportError:  # Windows: no user database
    pwd = None  # type: ignore[assignment]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def home_owner(home: Optional[str], environ: Mapping[str, str]) -> Optional[Tuple[int, int]]:
    """(uid, gid) root must become to work in ``home``, or None: not root, no home, or a
    home root owns. The gid is ``SUDO_GID`` when ``SUDO_UID`` names the home's owner (the
    group the user ran sudo from), else the owner's own group."""
    if not running_as_root() or not home:
        return None
    try:
        st = os.stat(home)
    except OSError:
        return None  # install refuses a missing home on its own, naming it
    if st.st_uid == 0:
        return None
    gid = st.st_gid
    try:
        gid = pwd.getpwuid(st.st_uid).pw_gid
    except (AttributeError, KeyError):
        pass
    sudo_uid, sudo_gid = environ.get("SUDO_UID", ""), environ.get("SUDO_GID", "")
    if sudo_uid.isdigit() and int(sudo_uid) == st.st_uid and sudo_gid.isdigit():
        gid = int(sudo_gid)
    return st.st_uid, gid


def _preload() -> None:
    """Import every lichhook module now, while the archive can still be read: once the
    process is the user it may not be able to read an archive in root's folders."""
    # The package as Python keeps it: importing its face from below would be a ring.
    for info in pkgutil.walk_packages(sys.modules["lichhook"].__path__, "lichhook."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue  # importing it would run the command line again
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a module of another OS; it is not used here
            pass


def become_home_owner(home: Optional[str], environ: Mapping[str, str], command: str) -> None:
    """As root in another user's home, become that user for the rest of the process; as
    anyone else, nothing. Raises ConfigError when the user could not run this
    lichhook (its Python or archive is out of their reach)."""
    ids = home_owner(home, environ)
    if ids is None:
        return
    uid, gid = ids
    _preload()
    # Their groups, and their own group besides the one sudo names: a file of theirs in
    # their own group keeps that group when rewritten.
    groups = {gid}
    try:
        entry = pwd.getpwuid(uid)
        groups.update(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except (AttributeError, KeyError, OSError):
        pass
    try:
        os.setgroups(sorted(groups))
        os.setgid(gid)
        os.setuid(uid)
    except (OSError, ValueError) as exc:  # ValueError: more groups than the system takes
        why = getattr(exc, "strerror", None) or exc
        raise ConfigError(f"cannot act as {trust.user_name(uid)}, who owns {home}: {why}; "
                          f"run {command} as that user instead.")
    if os.geteuid() != uid or os.getuid() != uid:
        raise ConfigError(f"cannot act as {trust.user_name(uid)}, who owns {home}; run {command} as that user instead.")
    # The Python this runs with and its archive must be theirs to read, since the copy
    # installed and the registrations run with them as that user.

    needed = [os.path.dirname(os.__file__), sys.executable, running_archive() or ""]
    for path in filter(None, needed):
        if not os.access(path, os.R_OK):
            raise ConfigError(
                f"{home} belongs to {trust.user_name(uid)}, so {command} works there as that user, who cannot read "
                f"{path}; run it with a Python and an archive that user can read (for example /usr/bin/python3 "
                f"and a copy of lichhook.pyz in their home), or run it as that user.")


def run_problem(program: str) -> Optional[str]:
    """Why root must not run ``program`` (a "Python" a registration names), or None: as
    root, it and every folder above it (where its links lead too) must be root's and
    closed to others, as a plugin must (lichhook.trust); anyone else runs only
    what they could change anyway."""
    if not running_as_root():
        return None

    return trust.untrusted(program)


def root_may_write(folder: str, path: str) -> None:
    """Refuse root writing ``path`` into ``folder`` (the deepest existing folder it goes
    in) when another user owns that folder: they could swap what root writes there for a
    link. Does nothing for anyone but root."""
    if not running_as_root():
        return
    try:
        owner = os.stat(folder).st_uid
    except OSError:
        return  # the write fails on its own, naming the path
    if owner != 0:
        raise ConfigError(f"cannot write {path} as root: its folder {folder} belongs to {trust.user_name(owner)}; "
                          "run this as that user (or with HOME set to their home, so lichhook acts as them).")


class Owners:
    """What one install run may write as (``home``: the user's home folder). After
    ``become_home_owner`` the process is the user, and files it creates are theirs; as
    root in its own home, files are root's, and only root's folders are written."""

    def __init__(self, home: Optional[str], environ: Optional[Mapping[str, str]] = None,
                 as_root: Optional[bool] = None) -> None:
        self.home = os.path.realpath(home) if home else None
        self.as_root = running_as_root() if as_root is None else as_root

    def may_create(self, path: str) -> None:
        """Refuse a new file or folder at ``path`` root may not make (a new file keeps the
        owner it was created with: no one is ever given it afterwards)."""
        if self.as_root:
            folder = trust.nearest_existing(os.path.dirname(os.path.abspath(path)) or ".")
            root_may_write(os.path.realpath(folder), path)


# Every folder this process created, in order: install records them so that uninstall
# can take away those it made, once empty (lichhook.install.copies.madefolders).
MADE: List[str] = []


def make_folders(folder: str, owners: Optional[Owners]) -> None:
    """``os.makedirs``, refusing as ``owners`` says before each folder it creates; each
    one created is noted in ``MADE``."""
    trust.make_folders(folder, 0o777, owners.may_create if owners is not None else None, MADE)
