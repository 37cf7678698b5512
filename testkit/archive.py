"""The archive under test: built by the real build script, run as a harness runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List, Mapping, Optional, Union

from testkit.constants import ROOT


def installed_copy(home: Path, python: str = sys.executable) -> Path:
    """Where ``install`` run by ``python`` puts its copy of the complete archive (what the
    MCP server runs), in ``home``'s data folder on Linux: ``.local/share/lichhook/py3.X/lichhook.pyz``."""
    from lichhook.archive import interpreter_bytecode
    from lichhook.install.copies.stable import ARCHIVE_NAME, version_folder

    bytecode = interpreter_bytecode(python)
    assert bytecode is not None, f"{python} cannot be run"
    return home / ".local" / "share" / "lichhook" / version_folder(bytecode) / ARCHIVE_NAME


def installed_hooks(home: Path, python: str = sys.executable) -> Path:
    """The hooks archive beside ``installed_copy``: what the registered hooks run."""
    from lichhook.install.copies.stable import HOOKS_NAME

    return installed_copy(home, python).with_name(HOOKS_NAME)


def build(out: Path) -> Path:
    """``lichhook.pyz`` built from this checkout by ``build_zipapp.py`` at ``out``."""
    subprocess.run([sys.executable, str(ROOT / "build_zipapp.py"), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return out


class Run:
    """Runs the archive as a harness would: a subprocess, payload on stdin."""

    def __init__(self, pyz: Path, env: Mapping[str, str]) -> None:
        self.pyz = pyz
        self.env = dict(env)

    def __call__(self, *args: str, stdin: Union[bytes, str] = b"", env: Optional[Mapping[str, str]] = None,
                 timeout: float = 30, python: str = sys.executable) -> subprocess.CompletedProcess:
        if isinstance(stdin, str):
            stdin = stdin.encode("utf-8")
        full_env = dict(self.env)
        full_env.update(env or {})
        return subprocess.run([python, str(self.pyz), *args], input=stdin, env=full_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def same_copy(a: bytes, b: bytes) -> bool:
    """Whether two archives are the same copy: byte for byte on 3.11 and newer; on 3.9 and
    3.10, whose marshal marks a string as shared when anything else in the compiling
    process holds it (which varies from run to run), the same shebang, members and
    program, the bytecode's marks aside (docs/install.md, the release archive)."""
    if a == b or sys.version_info >= (3, 11):
        return a == b
    from lichhook.archive import members, same_program

    (head_a, files_a), (head_b, files_b) = members(a), members(b)
    return head_a == head_b and files_a.keys() == files_b.keys() and same_program(files_a, files_b)


# A hook from the archive argv[1] whose table of contents was read (as Python reads it
# as it starts) before the archive was replaced: it reads the table, says so, waits for
# argv[2] to exist, then runs the archive's __main__ as Python would have.
STALE_START = r"""
import os, runpy, sys, time, zipimport
archive = sys.argv[1]
sys.path_importer_cache[archive] = zipimport.zipimporter(archive)
print("read", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
sys.argv = [archive] + sys.argv[3:]
runpy.run_path(archive, run_name="__main__")
"""


def hook_options(*words: str) -> List[str]:
    """The interpreter options install writes before the hooks archive for the hook
    ``words`` (``claude PreToolUse``): ``-I -S -c <launcher>``."""
    from lichhook.install.copies.target import INTERPRETER_FLAGS, hook_verdict, launcher

    return [*INTERPRETER_FLAGS, "-c", launcher(hook_verdict(words))]


def hook_line(python: str, hooks: str, *words: str) -> str:
    """The POSIX command line install writes for the hook ``words``."""
    from lichhook.install.quoting import sh_join

    return sh_join([python, *hook_options(*words), hooks, *words])


def absolute(text: str, home: Path) -> str:
    """What install and uninstall print, with the paths they show from the home (``~/``)
    written out again, for tests that look for a path."""
    return text.replace("~/", f"{home}/")
