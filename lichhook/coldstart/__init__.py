"""The tricks that buy start-up time, kept in one place.

A hook is a new process hundreds of times a day, and nearly all it costs is the
interpreter starting and importing modules. Each trick here does what a plain line of
Python would do, for less at start-up, and ``tests/test_coldstart.py`` holds each one
equal to that plain way:

- process: how a short-lived command starts and ends: no cyclic garbage collection,
  a stdout whose reader went away is not an error, no interpreter teardown when only
  lichhook's own code ran;
- folders: platformdirs' user config and state folders on Linux and macOS, without
  importing platformdirs;
- stdin: reading stdin until a deadline without importing ``select``;
- hooks archive: the registered hooks run an archive holding only the modules hooks and
  wait ops import, and reach the rest in the complete archive beside it;
- zipload: lichhook's modules read from its archive once each, where zipimport reads
  them twice;
- ``fastjson`` (a module of its own: the no-op path does without it): ``json.loads`` and
  ``json.dumps`` over ``_json``, without importing ``json``;
- ``joined`` (a module of its own, run as the hooks archive's ``__main__``): the hooks
  archive's modules served from their bytecode joined in one member, without zipimport;
- ``spans`` (a module of its own, for the wait ops alone): ``json.loads`` that also says
  where each entry of the waits store is spelt, so that an op copies back the entries it
  did not change instead of encoding them again.

The first five share this one module because every hot command needs them and each
module a command imports costs about 0.1 ms of the import machinery, whatever it holds
(docs/performance.md measures it).

One more trick lives in the modules the hot commands import rather than here: they do
not write ``from __future__ import annotations`` (it imports ``__future__`` at run time)
and spell annotations that name ``typing`` types as strings, behind
``TYPE_CHECKING = False``. The import allow-list tests in ``tests/test_coldstart.py`` name
those modules; everything else is plain modern Python.
"""

# No ``from __future__ import annotations``: see above.

import os
import sys
import time
import zipimport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType
    from typing import Callable, Dict, List, Mapping, NoReturn, Optional


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
    reach_complete_archive()
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
    interpreter's orderly exit) and nothing registered an exit handler."""
    if "lichhook.host" in sys.modules:
        return False
    atexit = sys.modules.get("atexit")
    if atexit is None:  # no code imported it, so none registered an exit handler
        return True
    count = getattr(atexit, "_ncallbacks", None)
    return count is not None and count() == 0


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


def _folder(environ: "Mapping[str, str]", kind: str, variable: str, default: str) -> str:
    if sys.platform == "darwin":  # config and state alike
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":  # config, state and data alike, as platformdirs has them
        return os.path.join(windows_local(environ), APP)
    value = environ.get(variable, "")
    if not value.strip():
        value = os.path.expanduser(default)
    return os.path.join(value, APP)


def user_config_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_config_dir("lichhook", appauthor=False)."""
    return _folder(environ, "config", "XDG_CONFIG_HOME", "~/.config")


def user_state_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_state_dir("lichhook", appauthor=False)."""
    return _folder(environ, "state", "XDG_STATE_HOME", "~/.local/state")


# --- stdin: reading until a deadline, without importing select -----------------------------
#
# The plain way waits for stdin with ``select.select`` before each read. ``select`` is a
# shared library in most builds (pyenv's, python.org's, Homebrew's): loading it costs
# about 0.3 ms of every hook. Instead the reads simply block, and a one-shot SIGALRM at
# the deadline points the file descriptor at the null device, so the waiting read,
# retried after the signal, sees the end of input; the descriptor is then pointed back
# at what it was, unread data and all. ``_signal`` is the module under ``signal``, which
# the interpreter loads at start-up anyway.


def read_until(fd: int, limit: int, deadline: float,
               whole: "Callable[[List[bytes]], bool]") -> "Optional[List[bytes]]":
    """The chunks read from ``fd`` until end of file, ``whole(chunks)``, more than
    ``limit`` bytes or the ``deadline`` (a time.monotonic() value), whichever comes first:
    what a loop of select() and read() gives. None where no alarm can be set (Windows, a
    thread other than the main one): then the caller waits its own way."""
    try:
        import _signal  # type: ignore[import-not-found]

        alarm, timer = _signal.SIGALRM, _signal.ITIMER_REAL
    except (ImportError, AttributeError):
        return None
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return []
    reading, saved = [True], []

    def expire(signum: int, frame: object) -> None:
        if not reading[0]:
            return
        reading[0] = False
        try:
            inheritable = os.get_inheritable(fd)
            saved.append(os.dup(fd))
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, fd, inheritable=inheritable)
            os.close(null)
        except OSError:
            pass

    try:
        previous = _signal.signal(alarm, expire)
    except (ValueError, OSError):  # not the main thread
        return None
    chunks: "List[bytes]" = []
    try:
        _signal.setitimer(timer, remaining)
        total = 0
        while total <= limit:
            try:
                chunk = os.read(fd, min(65536, limit + 1 - total))
            except OSError:  # not readable at all
                break
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if whole(chunks):
                break
    finally:
        reading[0] = False
        _signal.setitimer(timer, 0)
        if previous is not None:  # (None: a handler set outside Python, which cannot be put back)
            _signal.signal(alarm, previous)  # runs a pending alarm's handler first: a no-op by now
        for original in saved:
            os.dup2(original, fd, inheritable=os.get_inheritable(fd))
            os.close(original)
    return chunks


# --- hooks archive: the modules hooks and wait ops import, the rest beside it ------------------
#
# Before the first import from an archive, zipimport reads its whole table of contents,
# about 4 us per member: 1 ms for the complete archive, most of it for modules no hook
# imports (install, tomlkit, pluggy, the MCP server). So install puts two archives in each
# Python's folder: the complete one (``lichhook.pyz``, which the MCP server and every
# other command run) and a hooks archive (``hooks.pyz``) holding only the members below,
# which the registered hooks run. Any other module a hooks run needs (a plugin's pluggy,
# say) comes from the complete archive beside it, exactly as if it ran that one.

HOOKS_ARCHIVE = "hooks.pyz"
COMPLETE_ARCHIVE = "lichhook.pyz"
# Archive members (prefixes) the hooks archive holds: what the hot commands import,
# as tests/test_coldstart.py's allow-lists name it, sources and bytecode alike.
HOOK_MEMBERS = (
    "__main__.", "lichhook/__init__.", "lichhook/cli.", "lichhook/coldstart/", "lichhook/report.",
    "lichhook/debug.", "lichhook/paths.", "lichhook/lichenv.", "lichhook/adapter.", "lichhook/adapters/",
    "lichhook/payload.", "lichhook/ids.", "lichhook/client.", "lichhook/_version.", "lichhook/jsonint.",
    "lichhook/contracts/", "lichhook/titles.", "lichhook/transcripts.", "lichhook/diskio.", "lichhook/selfcmd.", "lichhook/claude_code/", "lichhook/waits/", "lichhook/codex_waits.",
)


def reach_complete_archive() -> None:
    """When this run started from a hooks archive, let imports find what it does not
    hold in the complete archive beside it: lichhook's other modules, and the packages
    vendored at the top (pluggy, platformdirs, tomlkit)."""
    lichhook = sys.modules["lichhook"]  # the package's face, already imported (see selfcmd)
    archive = getattr(getattr(lichhook, "__loader__", None), "archive", None)
    if not archive or os.path.basename(archive) != HOOKS_ARCHIVE:
        return
    complete = os.path.join(os.path.dirname(archive), COMPLETE_ARCHIVE)
    lichhook.__path__.append(os.path.join(complete, "lichhook"))
    sys.path.append(complete)


# --- zipload: each of lichhook's modules read from its archive once, not twice -----------------
#
# zipimport (3.9 to 3.13) reads a module's bytes from the archive and unmarshals its code
# twice: once when the import system asks the loader for the file name (``get_filename``,
# for ``__file__``), which it can only tell by finding the code, and once more to run it
# (``get_code``). ``OneRead`` is zipimport's own loader keeping the code the first read
# found for the second: the same member, the same code, the same ``__file__``. It saves
# about 30 us a module. It relies on zipimport's ``_get_module_code``, present in every
# Python lichhook supports; without it nothing changes. It lives here, not in a module of
# its own, because every command run from an archive puts it in place first.

_module_code = getattr(zipimport, "_get_module_code", None)


class OneRead(zipimport.zipimporter):
    """zipimport's loader, reading each module once."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._codes: "Dict[str, CodeType]" = {}

    def get_filename(self, fullname: str) -> str:
        code, _package, path = _module_code(self, fullname)  # type: ignore[misc]
        self._codes[fullname] = code
        return path  # type: ignore[no-any-return]

    def get_code(self, fullname: str) -> "CodeType":
        code = self._codes.pop(fullname, None)
        return code if code is not None else super().get_code(fullname)

    def create_module(self, spec: object) -> None:
        return None  # the default module (3.9's zipimporter has no such method)

    def exec_module(self, module: "ModuleType") -> None:
        exec(self.get_code(module.__name__), module.__dict__)


def zipload() -> bool:
    """From now on, load what lichhook's own archive holds with OneRead; False (and
    nothing changed) when lichhook does not run from an archive."""
    loader = getattr(sys.modules["lichhook"], "__loader__", None)
    archive = getattr(loader, "archive", None)
    if _module_code is None or type(loader) is not zipimport.zipimporter or not isinstance(archive, str):
        return False
    inside = tuple(archive + sep for sep in ("/", "\\"))

    def hook(path: str) -> OneRead:
        if path == archive or path.startswith(inside):
            return OneRead(path)
        raise ImportError("not lichhook's archive")  # the next path hook decides

    sys.path_hooks.insert(0, hook)  # type: ignore[arg-type]
    for path in list(sys.path_importer_cache):
        if path == archive or path.startswith(inside):
            del sys.path_importer_cache[path]
    return True
