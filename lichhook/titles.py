"""The last title lichhook gave lich for each card, so a title goes out only when it changes.

One small JSON file per lich session, ``{"session": <LICH_SESSION_ID>, "title": ...}``,
in ``<user state dir>/titles/`` (``~/.local/state/lichhook/titles`` on Linux): never in
a shared temporary folder. The file is named after a hash of the session id (16 hex
digits), never after the id itself, which comes from the environment unchecked; the id
stored inside is compared on every read, so two ids that share a hash only cost a title
sent twice. Writes are atomic (``lichhook.diskio.write_atomic``); the folder is created
private (0700) and used only while no other user can change it (``lichhook.trust``). Files untouched for
30 days, and temporaries a killed writer left (two minutes old), are removed when a new
title is written.
"""

import os
import stat
import time

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)
from lichhook.coldstart.quickjson import json_or_none
from lichhook.coldstart import user_state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional

FOLDER = "titles"
MAX_BYTES = 8192  # far above an 80-character title and its session id
MAX_AGE_SECONDS = 30 * 24 * 3600
# A temporary of write_atomic this old was left by a writer that was killed (a write
# takes microseconds); a younger one may be a writer at work.
TEMPORARY_AGE_SECONDS = 120
_SUFFIX = ".json"
_O_BINARY = getattr(os, "O_BINARY", 0)


def folder(environ: "Mapping[str, str]") -> str:
    return os.path.join(user_state_dir(environ), FOLDER)


def key(session_id: str) -> str:
    """The file name for ``session_id``: FNV-1a (64 bits) of its UTF-8, in hex."""
    value = 0xCBF29CE484222325
    for byte in session_id.encode("utf-8", "surrogatepass"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def _path(environ: "Mapping[str, str]", session_id: str) -> str:
    return os.path.join(folder(environ), key(session_id) + _SUFFIX)


def last(environ: "Mapping[str, str]") -> "Optional[str]":
    """The last title recorded for the card in LICH_SESSION_ID, or None."""
    session_id = environ.get("LICH_SESSION_ID", "")
    if not session_id:
        return None
    try:
        fd = os.open(_path(environ, session_id), os.O_RDONLY | _O_BINARY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_BYTES)
    finally:
        os.close(fd)
    record = json_or_none(raw)
    if not isinstance(record, dict) or record.get("session") != session_id:
        return None
    title = record.get("title")
    return title if isinstance(title, str) else None


def remember(environ: "Mapping[str, str]", title: str) -> bool:
    """Record ``title`` as the card's last; False when there is nowhere safe to keep it."""
    session_id = environ.get("LICH_SESSION_ID", "")
    if not session_id:
        return False
    from lichhook.trust import make_private

    where = folder(environ)
    if make_private(where):
        return False
    from lichhook.diskio import write_atomic

    data = json.dumps({"session": session_id, "title": title}).encode("utf-8", "surrogatepass")
    write_atomic(_path(environ, session_id), data)
    _prune(where)
    return True


def forget(environ: "Mapping[str, str]", session_id: str) -> None:
    """Remove what is recorded for ``session_id`` (demo cleans up after itself)."""
    try:
        os.unlink(_path(environ, session_id))
    except OSError:
        pass


def _prune(where: str) -> None:
    from lichhook.diskio import temporary_target  # loaded already: the record was just written

    now = time.time()
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        if _is_record(name):
            cutoff = now - MAX_AGE_SECONDS
        elif _is_record(temporary_target(name) or ""):
            cutoff = now - TEMPORARY_AGE_SECONDS
        else:
            continue
        path = os.path.join(where, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass


def _is_record(name: str) -> bool:
    return len(name) == 16 + len(_SUFFIX) and name.endswith(_SUFFIX)
