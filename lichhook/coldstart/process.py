"""How a short-lived command (a hook, a wait op) starts and ends.

The plain way is to leave the garbage collector on, ``print`` and ``sys.exit``. Here:
- the cyclic collector is off: such a process frees nearly everything by reference
  counting, and the collections its imports would trigger cost about 0.3 ms;
- writing to or flushing a stdout whose reader went away is not an error: a hook has
  nothing to say to anyone else, and must still exit 0;
- once everything is written and flushed, the process ends with ``os._exit``, skipping
  the interpreter's teardown of every module and object (about 1.5 ms), but only when
  no code but lichhook's ran (a plugin's open files or exit handlers need the orderly
  exit).
``tests/test_coldstart.py`` holds the outcome (exit status, stdout, stderr) equal to the
plain way's.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


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
    import atexit

    count = getattr(atexit, "_ncallbacks", None)
    return count is not None and count() == 0
