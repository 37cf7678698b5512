"""The folders install made, so that uninstall takes away those and only those.

A folder install creates (``~/.claude`` for a first ``settings.json``, the data folder of
the archive copies, ``~/.local/share`` above it) is recorded, by its path, in
``folders-made.json`` in the data folder. Uninstall removes each recorded folder that is
empty by then, deepest first. One that holds anything stays: recorded while lichhook is
still installed (it may hold lichhook's own files), forgotten once the last copy is gone
(what it holds then is someone else's). Every folder lichhook did not make stays,
empty or not.
"""

from __future__ import annotations

import json
import os
from typing import List, Optional

from lichhook.coldstart.quickjson import json_or_none
from lichhook.install.copies import stable
from lichhook.install.disk import files
from lichhook.install.disk.ownership import Owners, make_folders

RECORD = "folders-made.json"


def _read(root: str) -> List[str]:
    try:
        raw = files.read(os.path.join(root, RECORD))
    except files.ConfigError:
        return []
    if raw is None:
        return []
    found = json_or_none(raw)
    return [p for p in found if isinstance(p, str) and os.path.isabs(p)] if isinstance(found, list) else []


def _write(root: str, folders: List[str], owners: Optional[Owners]) -> None:
    path = os.path.join(root, RECORD)
    if not folders:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        return
    files.write_whole(path, (json.dumps(sorted(set(folders)), indent=1) + "\n").encode("utf-8"), 0o600, owners)


def remember(root: str, made: List[str], owners: Optional[Owners]) -> None:
    """Add the folders install just made to the record in ``root`` (the data folder)."""
    if made:
        _write(root, _read(root) + [os.path.abspath(p) for p in made], owners)


def prune(root: str, owners: Optional[Owners] = None) -> List[str]:
    """Remove each recorded folder that is empty now, deepest first; keep the record of
    the others. The record itself goes first, so that the data folder can go too. What
    was removed, a line per folder."""
    recorded = _read(root)
    if not recorded:
        return []
    try:
        os.remove(os.path.join(root, RECORD))
    except OSError:
        return []
    kept, said = [], []
    for folder in sorted(set(recorded), key=lambda p: (p.count(os.sep), p), reverse=True):
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue  # gone already, or no longer the folder install made
        try:
            os.rmdir(folder)
        except OSError:
            kept.append(folder)  # it holds something now
            continue
        said.append(f"removed folder {folder} (install made it; it is empty now)")

    if not stable.copies(root):
        try:
            os.rmdir(root)  # lichhook's own data folder, which the record alone kept (stable.remove_copy)
        except OSError:
            pass
    if kept and stable.copies(root):
        # lichhook is still installed: a folder holding lichhook's own files now may be
        # emptied by a later uninstall. Once no copy is left, what is in a made folder is
        # someone else's, and the folder theirs: it is forgotten.

        make_folders(root, owners)
        _write(root, kept, owners)
    return said
