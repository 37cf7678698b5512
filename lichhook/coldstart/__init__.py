"""The shortcuts that buy start-up time, kept in one place.

A hook is a new process hundreds of times a day, and nearly all it costs is the
interpreter starting and importing modules. Each shortcut here does what a plain line
of Python would do, for less at start-up, with public APIs only, and
``tests/test_coldstart.py`` holds each one equal to that plain way:

- process: how a short-lived command starts and ends: no cyclic garbage collection,
  a stdout whose reader went away is not an error, no interpreter teardown when only
  lichhook's own code ran;
- folders: platformdirs' user config and state folders on Linux and macOS, without
  importing platformdirs;
- resolve: a built-in adapter without pluggy when no plugin can replace it, and its
  verdict outside lich without loading its module;
- hooks archive: the registered hooks run an archive holding only the hot set
  (``lichhook.hotset``), and reach the rest in the complete archive beside it;
- ``quickjson`` (a module of its own: the no-op path does without it): ``json.loads``
  and ``json.dumps`` for plain JSON without importing ``json``, which hands everything
  else to ``json``.

The first four share this one module because every hot command needs them, and each
module a command imports costs about 0.1 ms of the import machinery, whatever it holds.

The modules of the hot set also keep ``typing`` off the hooks' path: no ``from
__future__ import annotations`` (it imports ``__future__`` at run time), annotations
that name ``typing`` types spelt as strings behind ``TYPE_CHECKING = False``, and
imports a command may not need inside the functions that need them. Only the hot set
does so (``lichhook.hotset`` says why); everything else is ordinary Python.
"""

# No ``from __future__ import annotations``: see above.

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
    interpreter's orderly exit) and nothing imported ``atexit``, so no exit handler can
    have been registered (the hot commands never import it)."""
    return "lichhook.host" not in sys.modules and "atexit" not in sys.modules


# --- folders: platformdirs' user config and state folders, without importing it ----------
#
# ``import platformdirs`` costs about 10 ms, more than a hook's whole budget above the
# interpreter. On Linux and macOS the answer is a few environment variables and a join;
# on Windows, whose folders come from the shell API, platformdirs is asked.

APP = "lichhook"


def _folder(environ: "Mapping[str, str]", kind: str, variable: str, default: str) -> str:
    if sys.platform == "darwin":  # config and state alike
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":
        import platformdirs

        return getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False)
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


# --- resolve: a built-in adapter without the pluggy host, when nothing can replace it ------
#
# The host imports pluggy and every built-in adapter, and may scan installed entry points:
# several milliseconds a hook does not need when the provider is built in and the plugin
# folder holds no plugin file (only a plugin-folder adapter may replace a built-in). Then
# the adapter comes straight from its module, the very object the host would give;
# outside lich even that module is not loaded, since the verdict (from the harness's
# descriptor) is all there is to print.

HOST = ""  # builtin_module's answer when the pluggy host must decide


def builtin_module(provider: str, environ: "Mapping[str, str]") -> str:
    """The module of the built-in adapter that serves ``provider`` unaided, or HOST when the
    pluggy host must decide: not a built-in, or the plugin folder holds plugin files (which
    may replace it) or is refused."""
    from lichhook.adapters import BUILTIN
    from lichhook.paths import plugin_dir, plugin_files

    module = BUILTIN.get(provider, HOST)
    if module:
        folder = plugin_dir(environ)
        if folder is None or plugin_files(folder):
            return HOST
    return module


def builtin_adapter(module: str) -> object:
    """The ADAPTER of ``lichhook.adapters.<module>``, a name builtin_module gave."""
    from importlib import import_module

    return import_module(f"lichhook.adapters.{module}").ADAPTER


def builtin_verdict(provider: str, event: "str | None" = None) -> str:
    """What the built-in hook for ``provider`` prints for ``event`` (None: the bare
    command), from its harness's descriptor, without loading the adapter's module."""
    from lichhook.adapters import BY_PROVIDER

    descriptor = BY_PROVIDER.get(provider)
    return descriptor.verdict(event) if descriptor is not None else ""


# --- hooks archive: the modules hooks and wait ops import, the rest beside it ------------------
#
# Before the first import from an archive, zipimport reads its whole table of contents,
# about 4 us per member: 1 ms for the complete archive, most of it for modules no hook
# imports (install, tomlkit, pluggy, the MCP server). So install puts two archives in each
# Python's folder: the complete one (``lichhook.pyz``, which the MCP server and every
# other command run) and a hooks archive (``hooks.pyz``) holding only the hot set
# (``lichhook.hotset``), which the registered hooks run. Any other module a hooks run
# needs (a plugin's pluggy, say) comes from the complete archive beside it, exactly as if it ran that one.

HOOKS_ARCHIVE = "hooks.pyz"
COMPLETE_ARCHIVE = "lichhook.pyz"


def reach_complete_archive() -> None:
    """When this run started from a hooks archive, let imports find what it does not
    hold in the complete archive beside it: lichhook's other modules, and the packages
    vendored at the top (pluggy, platformdirs, tomlkit)."""
    import lichhook

    archive = getattr(getattr(lichhook, "__loader__", None), "archive", None)
    if not archive or os.path.basename(archive) != HOOKS_ARCHIVE:
        return
    complete = os.path.join(os.path.dirname(archive), COMPLETE_ARCHIVE)
    lichhook.__path__.append(os.path.join(complete, "lichhook"))
    sys.path.append(complete)
