"""Keep a long-running process importing from the archive it started from.

zipimport reads the archive's table of contents once, then opens the file by name for
every later import. When ``install`` replaces the archive under a running ``lichhook
mcp``, the next lazy import reads the new file at the old file's offsets and fails
(``ZipImportError: bad local file header``), or worse, mixes two versions. ``hold()``
reads the archive into memory once and serves every later import of its modules from
that copy, so the process keeps running the version it started with until it ends.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import io
import marshal
import os
import sys
import types
import zipfile
from typing import Sequence

from lichhook.selfcmd import running_archive

_HASH_BASED = 0b01  # the .pyc flag word: hash-based; lichhook writes unchecked-hash .pyc


class ArchiveSnapshot(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Finds and loads the modules of ``archive`` from ``data``, a copy of its bytes."""

    def __init__(self, archive: str, data: bytes) -> None:
        self.archive = archive
        self._zip = zipfile.ZipFile(io.BytesIO(data))
        self._names = frozenset(self._zip.namelist())

    # -- finding ------------------------------------------------------------------------

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        base = fullname.replace(".", "/")
        folder = base.rpartition("/")[0]
        if path is None:
            if not sys.path or not self._same(sys.path[0], self.archive):
                return None  # a top-level module is the archive's only when it leads sys.path
        elif not any(self._same(entry, self._join(folder)) for entry in path):
            return None
        for member, is_package in ((base + "/__init__", True), (base, False)):
            if member + ".py" in self._names or member + ".pyc" in self._names:
                spec = importlib.machinery.ModuleSpec(fullname, self, origin=self._join(member + ".py"),
                                                      is_package=is_package)
                if is_package:
                    spec.submodule_search_locations = [self._join(base)]
                spec.has_location = True
                return spec
        return None

    def _join(self, member: str) -> str:
        return os.path.join(self.archive, *member.split("/")) if member else self.archive

    @staticmethod
    def _same(a: str, b: str) -> bool:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))

    # -- loading ------------------------------------------------------------------------

    def _member(self, fullname: str) -> str:
        base = fullname.replace(".", "/")
        package = base + "/__init__"
        return package if package + ".py" in self._names or package + ".pyc" in self._names else base

    def is_package(self, fullname: str) -> bool:
        return self._member(fullname).endswith("/__init__")

    def get_code(self, fullname: str) -> types.CodeType:
        member = self._member(fullname)
        if member + ".pyc" in self._names:
            data = self._zip.read(member + ".pyc")
            flags = int.from_bytes(data[4:8], "little")
            # Bytecode for this interpreter, not checked against a source: as zipimport
            # would use it. Anything else is compiled from the source beside it.
            if data[:4] == importlib.util.MAGIC_NUMBER and flags == _HASH_BASED or member + ".py" not in self._names:
                code = marshal.loads(data[16:])
                if isinstance(code, types.CodeType):
                    return code
        source = self._zip.read(member + ".py")
        code = compile(source, self._join(member + ".py"), "exec", dont_inherit=True)
        return code

    def get_source(self, fullname: str) -> str | None:
        member = self._member(fullname) + ".py"
        if member not in self._names:
            return None
        return importlib.util.decode_source(self._zip.read(member))

    def get_data(self, path: str) -> bytes:
        prefix = self.archive + os.sep
        if not path.startswith(prefix):
            raise OSError(f"{path} is not in {self.archive}")
        member = path[len(prefix):].replace(os.sep, "/")
        try:
            return self._zip.read(member)
        except KeyError:
            raise FileNotFoundError(path) from None


def hold(archive: str | None = None) -> ArchiveSnapshot | None:
    """Serve the rest of this process's imports from the archive it runs from, as it is
    now; None when it runs from source or the archive cannot be read."""
    archive = archive or running_archive()
    if not archive:
        return None
    try:
        with open(archive, "rb") as f:
            snapshot = ArchiveSnapshot(archive, f.read())
    except (OSError, zipfile.BadZipFile):
        return None
    sys.meta_path.insert(0, snapshot)
    return snapshot
