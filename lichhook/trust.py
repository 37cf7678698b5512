"""Whether another user could change a folder or file lichhook relies on, and the making of
folders no one else can change: one rule for every caller.

Two strengths, for two kinds of thing:

- code lichhook runs, maybe as root (a plugin, the installed archive, the Python a
  registration names): ``untrusted``. The path, every folder above it and where its links
  lead must belong to this user or root and be closed to writes by anyone else, as
  OpenSSH judges ``authorized_keys``. Group write is allowed for a user's private group (a
  group named after its only member, the usual umask 002 set-up), and a folder above may
  be writable by all when its sticky bit is set (``/tmp``).
- a folder lichhook keeps its own records in (the waits, the titles, the failure
  records): ``private_problem`` and ``above_problem``, together ``make_private``. The
  folder must be this user's own and closed to writes by anyone else; the folders above
  it must pass the first rule, or someone could move it away or put theirs in its place.
  On Windows, whose permissions are access lists that ``os.stat`` does not show, the
  folder's owner and access list are read (``lichhook.winacl``); nothing above it is.

A problem names the path and what is wrong with it, and how to mend that one path; the
caller adds what its role offers instead (another waits folder, moving the plugins). On
Windows ``untrusted`` checks nothing.
"""

import os
import stat  # os has imported it already
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional

GROUP_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def user_name(uid: int) -> str:
    """``name (uid n)``, or ``uid n`` for a user the system does not know."""
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def group_name(gid: int) -> str:
    try:
        import grp

        return grp.getgrgid(gid).gr_name
    except (ImportError, KeyError):
        return str(gid)


def untrusted(path: str) -> "Optional[str]":
    """Why the code at ``path`` (a file or a folder of them) must not be run, or None.

    ``path`` itself, the folders above it, and where its symbolic links lead are checked.
    """
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        return None
    seen = set()
    for start in (os.path.abspath(path), os.path.realpath(path)):
        current, is_target = start, True
        while current not in seen:
            seen.add(current)
            problem = _entry_problem(current, target=is_target)
            if problem:
                return problem
            parent = os.path.dirname(current)
            if parent == current:
                break
            current, is_target = parent, False
    return None


def above_problem(path: str) -> "Optional[str]":
    """Why a folder above ``path`` (or above where its links lead) lets another user move
    it away or put their own in its place, or None. Only stats on the usual path;
    ``untrusted``'s rule judges (and words) a folder that fails the quick test."""
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        return None
    me = os.geteuid()
    seen = set()
    for start in (os.path.abspath(path), os.path.realpath(path)):
        current = os.path.dirname(start)
        while current not in seen:
            seen.add(current)
            try:
                st = os.stat(current)
            except OSError:
                break  # the path itself was reached; nothing above it to judge
            if st.st_uid not in (me, 0) or (st.st_mode & GROUP_OTHERS_WRITE and not st.st_mode & stat.S_ISVTX):
                problem = _entry_problem(current, target=False)
                if problem:
                    return problem
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None


def private_problem(path: str, st: "Optional[os.stat_result]" = None) -> "Optional[str]":
    """What makes the folder at ``path`` not the user's own, as words following its path,
    or None. ``st``: its stat, when the caller holds it open (POSIX)."""
    if sys.platform == "win32":
        from lichhook.winacl import folder_problem

        return folder_problem(path)
    if st is None:
        st = os.stat(path)
    me = os.geteuid()
    if st.st_uid != me:
        return f"belongs to {user_name(st.st_uid)}, not to you ({user_name(me)})"
    if st.st_mode & GROUP_OTHERS_WRITE:
        return f"can be written by other users (mode {st.st_mode & 0o7777:04o})"
    return None


def make_folders(path: str, mode: int = 0o700, before: "Optional[Callable[[str], object]]" = None,
                 made: "Optional[List[str]]" = None) -> None:
    """``os.makedirs`` with every folder it creates made with ``mode``, not just the last
    (under umask 000 makedirs leaves the others 0777, and the folders above a private one
    must be closed to others too). ``before(folder)`` runs before each is made, and may
    refuse it by raising; each folder made is appended to ``made``."""
    missing = []
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in reversed(missing):
        if before is not None:
            before(folder)
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if os.path.isdir(folder):
                continue  # another process made it first
            raise
        if made is not None:
            made.append(folder)


def make_private(path: str) -> "Optional[str]":
    """Make the folder at ``path`` (0700) if it is missing; then why it is not a private
    folder of this user (not a real folder, another's, open to others, or under a folder
    another user controls), or None."""
    try:
        make_folders(path)
        st = os.lstat(path)
    except OSError as exc:
        return f"{path} cannot be made ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    problem = private_problem(path, st)
    if problem:
        return f"{path} {problem}"
    return above_problem(path)


def nearest_existing(path: str) -> str:
    """``path`` itself, or the deepest folder above it that exists."""
    current = os.path.abspath(path)
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _entry_problem(path: str, target: bool) -> "Optional[str]":
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path} cannot be checked ({exc.strerror or exc})"
    if st.st_uid not in (os.geteuid(), 0):
        return f"{path} belongs to {user_name(st.st_uid)}, not to you or root; give it to yourself (chown)"
    mode = st.st_mode
    others_write = bool(mode & stat.S_IWOTH)
    group_write = bool(mode & stat.S_IWGRP) and not _private_group(st.st_gid, st.st_uid)
    if not (others_write or group_write):
        return None
    if not target and stat.S_ISDIR(mode) and mode & stat.S_ISVTX:
        return None  # sticky, like /tmp: others cannot rename or remove what is yours
    who = "anyone" if others_write else f"group {group_name(st.st_gid)}"
    return f"{path} can be written by {who}; remove that write permission (chmod go-w {path})"


def _private_group(gid: int, uid: int) -> bool:
    """True when ``gid`` is ``uid``'s own group: named after it, and no one else's."""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
