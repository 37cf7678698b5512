"""Files lichhook owns outright (a plugin folder's files, a JS module): written whole,
recognised only by proof that lichhook wrote them (``is_ours``: a sentence only lichhook
writes, or the exact shape of its file), never overwriting or deleting a file someone
else put there, even one that names lichhook."""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence

from lichhook.install.disk import files
from lichhook.install.config.jsonmerge import ConfigError


def write_owned(path: str, content: bytes, is_ours: Callable[[bytes], bool], prune_dirs: Sequence[str] = ()) -> files.Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is not None and raw != content and not is_ours(raw):
            raise ConfigError(f"{path} exists and was not written by lichhook; move it away, then run again. It was left untouched.")
        return content

    return files.Edit(path, transform, backup=False, prune_dirs=prune_dirs)


def remove_owned(path: str, is_ours: Callable[[bytes], bool], prune_dirs: Sequence[str] = ()) -> files.Edit:
    def transform(raw: Optional[bytes], notes: List[str]) -> Optional[bytes]:
        if raw is None or not is_ours(raw):
            if raw is not None:
                notes.append(f"left {path}: lichhook did not write it")
            return raw  # absent, or someone else's: leave it
        return None

    return files.Edit(path, transform, backup=False, prune_dirs=prune_dirs)


def holding(marker: bytes) -> Callable[[bytes], bool]:
    """``is_ours`` for a file lichhook marks with a sentence no one else writes."""
    return lambda raw: marker in raw
