"""Files lichhook owns outright (a plugin folder's files, a JS module): written whole,
recognised by a marker, never overwriting a file someone else put there."""

from __future__ import annotations

from lichhook.install import files
from lichhook.install.jsonmerge import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Sequence


def write_owned(path: str, content: bytes, marker: bytes, prune_dirs: Sequence[str] = ()) -> files.Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is not None and marker not in raw:
            raise ConfigError(f"{path} exists and was not written by lichhook; move it away, then run again. It was left untouched.")
        return content

    return files.Edit(path, transform, backup=False, prune_dirs=prune_dirs)


def remove_owned(path: str, marker: bytes, prune_dirs: Sequence[str] = ()) -> files.Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is None or marker not in raw:
            return raw  # absent, or someone else's: leave it
        return None

    return files.Edit(path, transform, backup=False, prune_dirs=prune_dirs)
