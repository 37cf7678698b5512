"""Running a harness's own CLI (``claude plugin ...``, ``codex plugin ...``), always bounded.

A CLI that hangs (waiting on a network it cannot reach, a lock, a terminal) must cost
install or doctor a clear sentence, never the user's prompt: every call has a timeout,
after which the CLI and everything it started is killed (it runs in a session of its
own, so its process group goes with it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Mapping, Optional, Sequence

from lichhook.install.errors import ConfigError

# Reading state (a list, a version) is local work; changing it (a marketplace add copies
# a folder, an install copies the plugin) gets longer. lich bounds its own reads at 10 s.
READ_TIMEOUT = 10.0
CHANGE_TIMEOUT = 120.0
# A slow disk or a busy machine may need longer for a change: seconds, a positive number.
CHANGE_TIMEOUT_VARIABLE = "LICHHOOK_CLI_TIMEOUT"
# Lines of a backtrace, or of a runtime's trailer, which never say what went wrong: Node's
# "    at f (file:1:2)", caret line and "Node.js v22.1.0"; Python's "Traceback (most
# recent call last):" and '  File "x", line 1'; Rust's "stack backtrace:", "  0: frame"
# and its note on RUST_BACKTRACE.
_TRACE = re.compile(r'\s*(at |\d+: |File "|\^+\s*$|Node\.js v\d|Traceback \(most recent|stack backtrace:'
                    r'|note: .*RUST_BACKTRACE)')
MAX_SAID = 300  # characters of that line quoted: a crash may print a line of minified code


class Result:
    def __init__(self, argv: Sequence[str], returncode: int, output: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.output = output

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self) -> str:
        """The command and what it said, for a message the user reads."""
        said = said_line(self.output)
        return f"`{' '.join(self.argv)}` exited with {self.returncode}" + (f": {said}" if said else "")


def change_timeout(environ: Mapping[str, str]) -> float:
    """How long a CLI may take to change state: ``LICHHOOK_CLI_TIMEOUT`` when it is a
    positive number of seconds, else ``CHANGE_TIMEOUT``."""
    try:
        seconds = float(environ.get(CHANGE_TIMEOUT_VARIABLE, ""))
    except ValueError:
        return CHANGE_TIMEOUT
    return seconds if 0 < seconds < float("inf") else CHANGE_TIMEOUT


def said_line(output: str) -> str:
    """What a CLI's output says went wrong, in one line: its last line that names an error,
    else its last line, backtraces and runtime trailers left out."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and not _TRACE.match(line)]
    errors = [line for line in lines if "error" in line.lower()]
    line = (errors or lines or [""])[-1]
    return line if len(line) <= MAX_SAID else line[:MAX_SAID] + "..."


def run(program: str, args: Sequence[str], environ: Mapping[str, str], change: bool = False,
        cwd: Optional[str] = None, timeout: Optional[float] = None) -> Result:
    """Run ``program args``; raise ConfigError when it cannot start or outlives its time:
    ``timeout``, else ``READ_TIMEOUT``, or ``change_timeout`` for a command that changes
    the harness's state."""
    timeout = timeout or (change_timeout(environ) if change else READ_TIMEOUT)
    argv = [program, *args]
    shown = " ".join([os.path.basename(program), *args])
    kwargs: dict = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    else:
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=dict(environ), cwd=cwd, **kwargs)
    except OSError as exc:
        raise ConfigError(f"cannot run `{shown}` ({exc.strerror or exc})") from None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise ConfigError(f"`{shown}` did not finish within {timeout:g} s and was stopped; "
                          f"run it yourself to see what it waits for, then run this again (or give it longer: "
                          f"{CHANGE_TIMEOUT_VARIABLE}=<seconds>)") from None
    return Result([os.path.basename(program), *args], proc.returncode, out.decode("utf-8", "replace"))


def _kill(proc: subprocess.Popen) -> None:
    """Stop the CLI and whatever it started, then reap it."""
    try:
        if sys.platform == "win32":
            proc.kill()
        else:
            os.killpg(proc.pid, 9)
    except OSError:
        pass
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        pass
