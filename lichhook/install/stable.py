"""The per-user copy of the archive that every registration runs."""

from __future__ import annotations

import os

from lichhook.install import files
from lichhook.install.jsonmerge import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from lichhook.install.ownership import Owners


def stable_archive() -> str:
    """<platformdirs user data dir>/lichhook.pyz"""
    from lichhook.paths import user_data_dir

    return os.path.join(user_data_dir(), "lichhook.pyz")


def copy_needed(source: str, dest: str) -> bool:
    if os.path.abspath(source) == os.path.abspath(dest):
        return False
    try:
        current = files.read(dest)
    except ConfigError:
        return True
    with open(source, "rb") as f:
        return f.read() != current


def copy_archive(source: str, dest: str, owners: Optional[Owners] = None) -> None:
    """Copy atomically, so a hook starting meanwhile runs the old archive or the new one.
    The copy belongs to the user whose home it is in (``owners``), even when root copies it."""
    with open(source, "rb") as f:
        data = f.read()
    try:
        files.write_whole(dest, data, 0o755, owners)
    except OSError as exc:
        raise ConfigError(f"cannot write {dest}: {exc.strerror or exc}; check that folder's permissions.")


def running_archive_or_none() -> Optional[str]:
    from lichhook.selfcmd import running_archive

    return running_archive()
