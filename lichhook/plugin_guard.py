"""What plugin code may reach: not the hook's stdout, and only from files no one else controls.

A hook's stdout is a protocol (Antigravity reads ``{}`` from it), so plugin code runs
with file descriptor 1 pointing elsewhere: at stderr when LICHHOOK_DEBUG=1, else at
devnull. ``print``, ``os.write(1, ...)`` and child processes alike land there, and the
verdict goes out through a saved copy of the real stdout.

A plugin folder or file is code the hook runs, maybe as root. On POSIX it is loaded only
when it, and every folder above it, belongs to this user or root and cannot be written
by anyone else, as OpenSSH judges ``authorized_keys``. Group write is allowed for a
user's private group (a group named after its only member, the usual umask 002 set-up),
and a folder above may be writable by all when its sticky bit is set (``/tmp``). A plugin
is compiled from the checked source itself (lichhook.host): bytecode in ``__pycache__``,
which these checks do not cover, is never read or written. On
Windows, whose permissions are ACLs that ``os.stat`` does not show, nothing is checked.
"""

from __future__ import annotations

import os
import stat
import sys

try:
    import grp
    import pwd
except ImportError:  # Windows: no user or group database
    grp = pwd = None  # type: ignore[assignment]


def shield_stdout(to_stderr: bool) -> int | None:
    """Point file descriptor 1 at stderr (``to_stderr``) or devnull, and return a copy of
    the real stdout for the verdict; None when there is no stdout to keep."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        saved = os.dup(1)
    except OSError:  # started with stdout closed
        return None
    try:
        if to_stderr:
            os.dup2(2, 1)
        else:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
    except OSError:
        pass
    return saved


def untrusted(path: str) -> str | None:
    """Why the plugin folder or file at ``path`` must not be loaded, or None.

    ``path`` itself, the folders above it, and where its symbolic links lead are checked.
    """
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        return None
    seen: set[str] = set()
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


def folder_above_problem(path: str) -> str | None:
    """Why the folder ``path``, which lies above something lichhook trusts (a waits
    folder), lets someone else swap what is in it, or None."""
    return _entry_problem(path, target=False)


def _entry_problem(path: str, target: bool) -> str | None:
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path} cannot be checked ({exc.strerror or exc})"
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return (f"{path} belongs to {_user_name(st.st_uid)}, not to you or root; "
                f"give it to yourself (chown) or move the plugins elsewhere")
    mode = st.st_mode
    others_write = bool(mode & stat.S_IWOTH)
    group_write = bool(mode & stat.S_IWGRP) and not _private_group(st.st_gid, st.st_uid)
    if not (others_write or group_write):
        return None
    if not target and stat.S_ISDIR(mode) and mode & stat.S_ISVTX:
        return None  # sticky, like /tmp: others cannot rename or remove what is yours
    who = "anyone" if others_write else f"group {_group_name(st.st_gid)}"
    return f"{path} can be written by {who}; remove that write permission (chmod go-w {path})"


def _private_group(gid: int, uid: int) -> bool:
    """True when ``gid`` is ``uid``'s own group: named after it, and no one else's."""
    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except (AttributeError, KeyError):
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


def _user_name(uid: int) -> str:
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except (AttributeError, KeyError):
        return f"user id {uid}"


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except (AttributeError, KeyError):
        return str(gid)
