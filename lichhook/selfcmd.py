"""How this program names itself, for commands it prints or writes into configs."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hooks that print commands about 8 ms
    from typing import List, Optional


def running_archive() -> Optional[str]:
    """The absolute path of the .pyz this code runs from, or None when run from source."""
    import lichhook

    archive = getattr(getattr(lichhook, "__loader__", None), "archive", None)
    return os.path.abspath(archive) if archive else None


def self_command() -> List[str]:
    """argv that runs this same lichhook with this same Python."""
    archive = running_archive()
    if archive:
        return [sys.executable, archive]
    return [sys.executable, "-m", "lichhook"]


def python_word() -> str:
    """How help text spells the interpreter: ``py`` (the Windows launcher) on Windows,
    ``python3`` elsewhere, where ``python`` may not be a command at all (Debian and
    Ubuntu without python-is-python3, macOS)."""
    return "py" if sys.platform == "win32" else "python3"
