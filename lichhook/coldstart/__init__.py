"""The shortcuts that buy start-up time, kept in one place.

A hook is a new process hundreds of times a day, and nearly all it costs is the
interpreter starting and importing modules. Each shortcut here does what a plain line
of Python would do, for less at start-up, with public APIs only, and
``tests/test_coldstart.py`` holds each one equal to that plain way:

- process: how a short-lived command starts and ends: no cyclic garbage collection,
  a stdout whose reader went away is not an error, no interpreter teardown when only
  lichhook's own code ran; plugin code kept off the hook's stdout;
- folders: platformdirs' user config and state folders on Linux and macOS, without
  importing platformdirs;
- ``quickjson`` (a module of its own: the no-op path does without it): ``json.loads``
  and ``json.dumps`` for plain JSON without importing ``json``, which hands everything
  else to ``json``.

The first two share this one module because every hot command needs them, and each
module a command imports costs about 0.1 ms of the import machinery, whatever it holds.

The modules of the hot set also keep ``__future__`` and ``typing`` off the hooks' path,
in the hot style ``lichhook.hotset`` states; everything else is ordinary Python.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, NoReturn


# --- process: how a short-lived command (a hook, a wait op) starts and ends -------------
#
# The plain way is to leave the garbage collector on, ``print`` and ``sys.exit``. Here the
# cyclic collector is off (such a process frees nearly everything by reference counting,
# and the collections its imports would trigger cost about 0.3 ms); writing to or flushing
# a stdout whose reader went away is not an error (a hook must still exit 0); and once
# everything is written and flushed, the process ends with ``os._exit``, skipping the
# interpreter's teardown of every module and object (1.5 to 2 ms), but only when no code
# but lichhook's ran (a plugin's open files or exit handlers need the orderly exit).


def begin(short_lived: bool) -> None:
    if short_lived:
        import gc

        gc.disable()


def write_stdout(text: str, fd: "int | None" = None) -> None:
    """Write ``text`` to stdout and flush it, or to ``fd`` (a saved copy of the real
    stdout); a stdout that is closed or whose reader went away is not an error."""
    if not text:
        return
    if fd is not None:
        data = text.encode("utf-8")
        try:
            while data:
                data = data[os.write(fd, data):]
        except OSError:
            pass
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: started with stdout closed
        pass


def shield_stdout(to_stderr: bool) -> "int | None":
    """Before plugin code runs: point file descriptor 1 at stderr (``to_stderr``, for
    LICHHOOK_DEBUG=1) or devnull, and return a copy of the real stdout for the verdict
    (``write_stdout``); None when there is no stdout to keep. A hook's stdout is a protocol
    (Antigravity reads ``{}`` from it), and ``print``, ``os.write(1, ...)`` and child
    processes of a plugin alike would land in it."""
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


def finish(code: int, short_lived: bool) -> "NoReturn":
    """Flush stdout and end the process with ``code``."""
    try:
        sys.stdout.flush()
    except AttributeError:  # started with stdout closed: sys.stdout is None
        pass
    except (OSError, ValueError):
        # The reader went away; point stdout at devnull so the interpreter's own
        # flush at exit does not fail too.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    if short_lived and only_own_code_ran():
        try:
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)


def only_own_code_ran() -> bool:
    """True when no plugin was loaded (its files or exit handlers could need the
    interpreter's orderly exit) and nothing imported ``atexit``, so no exit handler can
    have been registered (the hot commands never import it)."""
    return "lichhook.host" not in sys.modules and "atexit" not in sys.modules


# --- folders: platformdirs' user config and state folders, without importing it ----------
#
# ``import platformdirs`` costs about 10 ms, more than a hook's whole budget above the
# interpreter (70 to 90 ms on Windows, where it loads ctypes). On every OS the answer is a
# few environment variables and a join.

APP = "lichhook"


def windows_home(environ: "Mapping[str, str]") -> str:
    """The home the harness configs are found in on Windows: USERPROFILE, else HOME, else
    what Python's expanduser says (lichhook.install.harness.Env.home reads the same)."""
    for name in ("USERPROFILE", "HOME"):
        value = environ.get(name, "")
        if value.strip():
            return value
    return os.path.expanduser("~")


def windows_local(environ: "Mapping[str, str]") -> str:
    """The per-user local application-data folder on Windows, for the home the configs
    are found in: LOCALAPPDATA when it lies inside that home, else <home>\\AppData\\Local.

    The shell API (platformdirs' answer) names the logged-on user's folder whatever the
    environment says: with USERPROFILE pointed elsewhere, configs were read in one home and
    copies kept (and deleted) in another, the real one. Following the same home keeps
    each config beside the copies it runs."""
    import ntpath

    home = windows_home(environ)
    local = environ.get("LOCALAPPDATA", "")
    if local.strip() and ntpath.isabs(local):
        inside = ntpath.normcase(ntpath.normpath(local))
        root = ntpath.normcase(ntpath.normpath(home))
        if inside == root or inside.startswith(root.rstrip("\\") + "\\"):
            return local
    return ntpath.join(home, "AppData", "Local")


def _folder(environ: "Mapping[str, str]", variable: str, default: str) -> str:
    if sys.platform == "darwin":  # config and state alike
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":  # config, state and data alike, as platformdirs has them
        return os.path.join(windows_local(environ), APP)
    value = environ.get(variable, "")
    if not value.strip() or not os.path.isabs(value):
        # The XDG spec: a relative path is invalid and ignored. Taken as is, it would be
        # resolved in whatever folder a hook starts in: each session's project.
        value = os.path.expanduser(default)
    return os.path.join(value, APP)


def user_config_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_config_dir("lichhook", appauthor=False)."""
    return _folder(environ, "XDG_CONFIG_HOME", "~/.config")


def user_state_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_state_dir("lichhook", appauthor=False)."""
    return _folder(environ, "XDG_STATE_HOME", "~/.local/state")


def user_data_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_data_dir("lichhook", appauthor=False), except that on Windows it
    follows the home the harness configs are found in (``windows_local``)."""
    return _folder(environ, "XDG_DATA_HOME", "~/.local/share")
