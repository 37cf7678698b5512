"""What a failed hook leaves behind: a few lines in the state folder, for ``doctor`` to show.

A hook stays silent whatever happens (its stdout and stderr belong to the harness), so
without a trace a hook that cannot run on some Python, or whose adapter raises, looks
exactly like one that had nothing to send. Each failure appends one JSON line (when,
provider, event, the error and where it was raised) to ``<user state dir>/failures.jsonl``
(``~/.local/state/lichhook/failures.jsonl`` on Linux), created private (0600 in a 0700
folder; nothing is written while another user could change that folder: lichhook.trust).
The file is bounded: once it passes MAX_BYTES it becomes ``failures.1.jsonl``, replacing
the one before, so at most two files of about MAX_BYTES each are ever kept and the newest
failures are always there. When that file cannot be replaced (a folder stands there), the
record file is emptied once it reaches twice MAX_BYTES: bounded either way.

Only a failure imports this module: a hook that succeeds pays nothing for it. Writing a
record never raises; a hook that cannot record its failure still exits 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import List, Mapping, Optional

from lichhook.coldstart import user_state_dir
from lichhook.coldstart.quickjson import json_or_none
from lichhook.diskio import read_regular
from lichhook.trust import make_private

NAME = "failures.jsonl"
OLDER = "failures.1.jsonl"
MAX_BYTES = 32 * 1024
MAX_ERROR = 400  # characters of an error message kept; a record stays well under 1 KiB
MAX_FIELD = 60  # characters of a provider or event name kept
_O_BINARY = getattr(os, "O_BINARY", 0)


def folder(environ: Mapping[str, str]) -> str:
    return user_state_dir(environ)


def record(environ: Mapping[str, str], provider: str, event: Optional[str], error: BaseException | str) -> None:
    """Append one failure record; never raises. ``error``: the exception caught, or a sentence."""
    try:
        _record(environ, provider, event, error)
    except Exception:  # the hook's own failure is what matters; a record is best effort
        pass


def _record(environ: Mapping[str, str], provider: str, event: Optional[str], error: BaseException | str) -> None:
    where = folder(environ)
    if make_private(where):
        return
    if isinstance(error, BaseException):
        text = f"{type(error).__name__}: {error}"
        at = _raised_at(error)
    else:
        text, at = str(error), None
    entry = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "provider": str(provider)[:MAX_FIELD],
        "event": (str(event)[:MAX_FIELD] if event else None),
        "error": text[:MAX_ERROR],
        "at": at,
        "python": "%d.%d.%d" % sys.version_info[:3],
    }
    # One write of one line, in append mode: lines of concurrent hooks do not interleave.
    line = (json.dumps(entry, ensure_ascii=True) + "\n").encode("ascii")
    path = os.path.join(where, NAME)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_BINARY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, line)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        try:
            os.replace(path, os.path.join(where, OLDER))
        except FileNotFoundError:  # another hook rotated it first
            pass
        except OSError:  # Windows holds it open, or the rotation target cannot be replaced
            if size > 2 * MAX_BYTES:  # not once but over and over: start afresh rather than grow
                _empty(path)


def _empty(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | _O_BINARY | getattr(os, "O_NOFOLLOW", 0))
    try:
        if os.fstat(fd).st_size > 2 * MAX_BYTES:  # still that file, not one another hook has just started
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def _raised_at(error: BaseException) -> Optional[str]:
    """``file:line in function`` of the innermost frame, the file's name alone."""
    tb = error.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{os.path.basename(code.co_filename)}:{tb.tb_lineno} in {code.co_name}"


def recent(environ: Mapping[str, str], limit: int = 10) -> List[dict]:
    """The newest ``limit`` records, oldest first; lines that are not records are skipped."""
    where = folder(environ)
    lines: List[bytes] = []
    for name in (OLDER, NAME):
        try:
            raw = read_regular(os.path.join(where, name), limit=4 * MAX_BYTES)
        except OSError:
            raw = None
        if raw:
            lines.extend(raw.splitlines())
    found: List[dict] = []
    for line in lines:
        entry = json_or_none(line)
        if isinstance(entry, dict) and isinstance(entry.get("error"), str):
            found.append(entry)
    return found[-limit:] if limit > 0 else []


def describe(entry: dict) -> str:
    """One record as a line for people."""
    what = " ".join(str(entry.get(k)) for k in ("provider", "event") if entry.get(k))
    at = f" ({entry['at']})" if entry.get("at") else ""
    python = f" on Python {entry['python']}" if entry.get("python") else ""
    return f"{entry.get('when', '?')}  {what}: {entry['error']}{at}{python}"
