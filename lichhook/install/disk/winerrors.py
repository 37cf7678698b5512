"""What a refused file operation on a harness config means on Windows, in the user's
terms and with the fix: a Windows error's own text ("Access is denied") names neither
the read-only attribute, nor the program holding the file, nor the path-length limit."""

from __future__ import annotations

import os
import sys
from typing import Optional

# Windows' limit on a path's length for a program, unless long paths are enabled.
MAX_PATH = 260
# The errors Windows gives when another program has the file open without sharing it,
# or holds a lock on the bytes read.
SHARING_VIOLATION, LOCK_VIOLATION = 32, 33


def windows_problem(path: str, exc: OSError, writing: bool, windows: bool = sys.platform == "win32") -> Optional[str]:
    """On Windows, what ``exc`` (raised reading or ``writing`` ``path``) means, with its
    fix; None elsewhere, or when nothing more is known than the error's own text."""
    if not windows:
        return None
    if len(path) >= MAX_PATH and not isinstance(exc, PermissionError):
        return (f"the path is {len(path)} characters long, and Windows refuses paths of {MAX_PATH} or more "
                "unless long paths are enabled; enable them (as administrator, in PowerShell: New-ItemProperty "
                "-Path HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem -Name LongPathsEnabled -Value 1 "
                "-PropertyType DWORD -Force) or use a shorter folder, then run again")
    if not isinstance(exc, PermissionError) or not os.path.isfile(path):
        return None
    if writing and not os.access(path, os.W_OK):  # on Windows: the read-only attribute
        return ("the file is read-only; if lichhook may change it, clear that (in PowerShell: Set-ItemProperty "
                f"-LiteralPath '{path}' -Name IsReadOnly -Value $false), then run again")
    if writing or getattr(exc, "winerror", None) in (SHARING_VIOLATION, LOCK_VIOLATION):
        # Writing: the new bytes went into the same folder, and the file is not
        # read-only, so what refuses the swap is another program holding the file.
        return ("another program has the file open or locked (the harness itself, an editor, a sync or backup "
                "tool); close it, then run again")
    return None
