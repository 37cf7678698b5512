"""windows/install.ps1, checked without PowerShell: the Python probe it passes to each
candidate interpreter must reach that interpreter intact and do its job."""

from __future__ import annotations

import re
import subprocess
import sys

from testkit.constants import ROOT
from testkit.windows import crt_split

SCRIPT = ROOT / "windows" / "install.ps1"


def probe() -> str:
    found = re.findall(r"^\s*\$probe = '((?:[^']|'')*)'\s*$", SCRIPT.read_text(encoding="utf-8"), re.M)
    assert len(found) == 1, "install.ps1 no longer sets $probe on one line"
    return found[0].replace("''", "'")


def windows_powershell_51_line(argv: list) -> str:
    """The command line Windows PowerShell 5.1 builds for a native program: an argument
    holding a space or a tab is wrapped in double quotes, and double quotes inside it
    are passed as they are, not escaped."""
    return " ".join(f'"{a}"' if (not a or " " in a or "\t" in a) else a for a in argv)


def test_the_probe_reaches_python_intact_through_windows_powershell_51():
    argv = ["python.exe", "-c", probe()]
    assert crt_split(windows_powershell_51_line(argv)) == argv


def test_the_probe_prints_the_interpreter_path_on_3_9_and_later():
    out = subprocess.run([sys.executable, "-c", probe()], capture_output=True, timeout=30, check=True).stdout
    assert out.decode().strip() == sys.executable
