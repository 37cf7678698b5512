"""The project's own Windows-relevant tests, run by pytest under the Windows Python (the
embeddable 3.13) in the Windows lane's wine profile.

pytest and its pure-Python dependencies come from PyPI as Windows wheels (pip download
--platform win_amd64), unpacked beside a copy of the embeddable Python whose ``._pth``
names them and this checkout; the copy leaves out ``_wmi.pyd``, since CPython 3.12+'s
``platform.win32_ver()`` asks WMI through it and that aborts wine 8. hypothesis is left
out too (it calls ``platform.system()`` at import), and with it the property tests.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable, Dict, Optional

from testkit.constants import ROOT

# Test files whose tests either hold on Windows or say why they are POSIX's (skipif).
FILES = ["tests/test_paths.py", "tests/test_windows_output.py", "tests/test_waits_lock.py",
         "tests/test_diskio.py", "tests/test_waits_winacl.py"]
WHEELS = ["pytest", "pytest-subprocess", "colorama"]


def test_python(cache: Path, python: Path, log: Callable[[str], None]) -> Path:
    """A copy of the embeddable ``python`` (python.exe's folder) that imports pytest and this checkout."""
    folder = cache / "python3.13-tests"
    site = cache / "site3.13"
    if not (site / "pytest").is_dir():
        log("pip download " + " ".join(WHEELS) + " (win_amd64)")
        wheels = cache / "wheels3.13"
        subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
                        "--only-binary=:all:", "--platform", "win_amd64", "--python-version", "3.13",
                        "--implementation", "cp", *WHEELS, "-d", str(wheels)], check=True)
        shutil.rmtree(site, ignore_errors=True)
        for wheel in sorted(wheels.glob("*.whl")):
            if not wheel.name.startswith(("hypothesis", "sortedcontainers")):
                with zipfile.ZipFile(wheel) as z:
                    z.extractall(site)
    if not (folder / "python.exe").exists():
        shutil.copytree(python.parent, folder)
        (folder / "_wmi.pyd").unlink(missing_ok=True)
    return folder / "python.exe"


def run_tests(wine, programs: Dict[str, Path], log: Callable[[str], None],  # type: ignore[no-untyped-def]
              cache: Path) -> Optional[str]:
    """Run the Windows-relevant test files under the Windows Python 3.13 (its packages in
    ``cache``); None, or why they failed."""
    exe = test_python(cache, programs["3.13"], log)
    pth = next(exe.parent.glob("python3*._pth"))
    zipped = next(exe.parent.glob("python3*.zip")).name
    pth.write_text("\n".join([zipped, ".", wine.win(cache / "site3.13"), wine.win(ROOT)]) + "\n", encoding="utf-8")
    done = subprocess.run(["wine", str(exe), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *FILES],
                          input=b"", capture_output=True, cwd=ROOT, env=wine.env, timeout=600)
    text = done.stdout.decode("utf-8", "replace")
    summary = [line for line in text.splitlines() if " passed" in line or " failed" in line]
    if done.returncode != 0:
        return f"pytest under the Windows Python exited {done.returncode}:\n{text[-4000:]}"
    log(f"  ok  tests under the Windows Python 3.13: {summary[-1] if summary else text[-200:]}")
    return None
