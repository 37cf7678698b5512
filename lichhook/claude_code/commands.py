"""The ``wait`` command lines the hooks print for the model to run as they stand.

They are written for a POSIX shell, which is what Claude Code's Bash tool runs (Git Bash on
Windows). The interpreter is the absolute path of the Python running this hook: it has
just run this archive, whereas a bare ``python`` is missing on stock macOS and Debian and
may be the Microsoft Store stub on Windows.
"""

from __future__ import annotations

import sys


def quote(arg: str) -> str:
    """``arg`` in POSIX double quotes, so that spaces, ``$`` and backquotes stay literal.

    On Windows backslashes become forward slashes, which Windows and Python accept and
    which survive Git Bash, PowerShell and cmd alike.
    """
    if sys.platform == "win32":
        arg = arg.replace("\\", "/")
    for ch in ("\\", '"', "$", "`"):
        arg = arg.replace(ch, "\\" + ch)
    return '"' + arg + '"'


def program() -> str:
    """How to run this lichhook again: interpreter and archive, both quoted."""
    from lichhook.selfcmd import running_archive

    python = quote(sys.executable) if sys.executable else "python"
    archive = running_archive()
    if archive:
        return f"{python} {quote(archive)}"
    return f"{python} -m lichhook"


def wait_command(prefix: str, op: str, by: str, session: str, folder: object,
                 tail: str = "") -> str:
    """``<prefix> wait <op> --by <by> --session <session> [tail] [--waits-dir DIR]``.

    ``by`` and ``session`` must have passed the waits module's checks (letters, digits,
    ``_ - . @``), so they need no quoting. ``folder`` is a claude_code.Folder; a folder
    the operator chose is named, since the model's shell may not share this environment.
    """
    words = [prefix, "wait", op, "--by", by, "--session", session]
    if tail:
        words.append(tail)
    if getattr(folder, "explicit", False):
        words += ["--waits-dir", quote(folder.path)]  # type: ignore[attr-defined]
    return " ".join(words)


def clean(text: str, limit: int) -> str:
    """``text`` on one line, control characters made spaces, at most ``limit`` characters."""
    from lichhook.ids import is_control

    one = "".join(" " if is_control(c) else c for c in text)
    one = " ".join(one.split())
    if len(one) > limit:
        one = one[: limit - 3].rstrip() + "..."
    return one
