"""A second, throw-away user for tests run as root: made with ``useradd``, removed after."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from typing import Iterator

import pytest


@contextlib.contextmanager
def throwaway_user(prefix: str) -> Iterator[object]:
    """The pwd entry of a new system user without a home; skips the test where that
    cannot be done (not root, not Linux, no useradd)."""
    if sys.platform == "win32" or os.geteuid() != 0:
        pytest.skip("acting as a second user needs root")
    if not (shutil.which("useradd") and shutil.which("userdel")):
        pytest.skip("useradd and userdel are needed to act as a second user")
    import pwd

    name = f"{prefix}{os.getpid() % 100000}"
    made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                          capture_output=True)
    if made.returncode:
        pytest.skip(f"useradd failed: {made.stderr.decode()[:200]}")
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)

