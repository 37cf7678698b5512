"""How this program names itself, for commands it prints or writes into configs."""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hooks that print commands about 8 ms
    from typing import List, Optional


def running_archive() -> "Optional[str]":
    """The absolute path of the .pyz this code runs from, or None when run from source."""
    # The package, read where Python keeps it (it is imported before any module in it)
    # rather than imported: lichhook/__init__.py is the face plugins import, above every
    # module of lichhook, and no module below it imports it back.
    archive = getattr(getattr(sys.modules["lichhook"], "__loader__", None), "archive", None)
    if archive:
        # A hooks run reads its archive through a path of its own (lichhook/__main__.py).
        archive = getattr(sys.modules.get("__main__"), "LICHHOOK_ARCHIVE", None) or archive
    return os.path.abspath(archive) if archive else None


def interpreter_flags() -> "List[str]":
    """The isolation flags this interpreter runs with (``-I``, ``-S``), to pass on to the
    commands it starts or prints, so they run as it does."""
    return [flag for flag, on in (("-I", sys.flags.isolated), ("-S", sys.flags.no_site)) if on]


def self_command() -> "List[str]":
    """argv that runs this same lichhook with this same Python, started the same way."""
    archive = running_archive()
    if archive:
        return [sys.executable, *interpreter_flags(), archive]
    return [sys.executable, *interpreter_flags(), "-m", "lichhook"]


def python_word() -> str:
    """How help text spells the interpreter: ``py`` (the Windows launcher) on Windows,
    ``python3`` elsewhere, where ``python`` may not be a command at all (Debian and
    Ubuntu without python-is-python3, macOS)."""
    return "py" if sys.platform == "win32" else "python3"
