"""Joined bytecode: the hooks archive's modules in one member, and its ``__main__``.

Each module imported from an archive costs the import system a walk of sys.meta_path and
the path finders, lookups in the archive's table of contents, and an open, seek and two
reads of the archive for its bytes: about 30 us a module before its code runs; and every
member of an archive costs about 4 us at its first import, when zipimport reads the table
of contents. So the hooks archive (``lichhook.archive.hooks_archive``) carries the
bytecode of its modules joined in one member, JOINED, stored first in the archive (where
it is found without the table of contents), instead of a ``.pyc`` member each
(``join_bytecode``), and this module, compiled, is its ``__main__``: before anything of
lichhook is imported it puts ``Joined`` first on sys.meta_path (``serve``), which reads
the index once and each module's code with one read when it is imported, and gives the
spec, file name and package path zipimport would give; anything else a loader is asked
(package data, sources) is zipimport's own answer. The ``.py`` stay in the archive: a
Python the bytecode is not for (the member names it) finds no finder in place and
compiles them, as it would from any archive.

The member: the bytecode magic number (4 bytes), the index's length (4 bytes, little
endian), the index, ``marshal.dumps({module: (.pyc member, is_package, start, size)})``,
then each module's code (what follows the header of its unchecked-hash ``.pyc``),
``start`` counted from the member's first byte.

Imported by name, it only writes the member (for install, through lichhook.archive).
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType, ModuleType
    from typing import Any, Dict, Mapping, Optional

JOINED = "lichhook/coldstart/joined.bytecode"
SOURCE = "lichhook/coldstart/joined.py"  # this module, the hooks archive's __main__
_UNCHECKED_HASH_PYC = b"\x01\x00\x00\x00"  # the flags of the .pyc lichhook.archive writes
_ZIP_LOCAL_HEADER = 30  # bytes before a zip member's name (PKWARE APPNOTE 4.3.7)


def join_bytecode(files: "Mapping[str, bytes]") -> "Dict[str, bytes]":
    """``files`` (the hooks archive's members) with the bytecode of its ``lichhook`` modules
    joined in the member JOINED instead of a ``.pyc`` each, and this module as its
    ``__main__``; unchanged when their ``.pyc`` are not all unchecked-hash ones for one
    Python."""
    codes, magics = {}, set()
    for name in sorted(files):
        data = files[name]
        if not (name.startswith("lichhook/") and name.endswith(".pyc")):
            continue
        if data[4:8] != _UNCHECKED_HASH_PYC:
            return dict(files)
        codes[name] = data[16:]
        magics.add(data[:4])
    main = SOURCE[:-3] + ".pyc"
    if len(magics) != 1 or SOURCE not in files or main not in files:
        return dict(files)

    def layout(base: int) -> "Dict[str, tuple]":
        index, at = {}, base
        for name, code in codes.items():
            module = name[:-4].replace("/", ".")
            package = module.endswith(".__init__")
            index[module[:-9] if package else module] = (name, package, at, len(code))
            at += len(code)
        return index

    # The index holds the offsets that follow it: lay it out until its length settles.
    size = -1
    while True:
        index = marshal.dumps(layout(8 + size))
        if len(index) == size:
            break
        size = len(index)
    out = {name: data for name, data in files.items() if name not in codes}
    out["__main__.py"], out["__main__.pyc"] = files[SOURCE], files[main]
    out[JOINED] = magics.pop() + size.to_bytes(4, "little") + index + b"".join(codes.values())
    return out


def joined_members(member: bytes) -> "tuple":
    """(magic, the ``.pyc`` members it stands for) of the bytes of a JOINED member."""
    size = int.from_bytes(member[4:8], "little")
    index = marshal.loads(member[8:8 + size])
    return member[:4], {entry[0] for entry in index.values()}


class Joined:
    """The meta path finder of the modules joined in an archive, and their loader: one
    per folder of the archive (``folder``), as zipimport has one per folder."""

    def __init__(self, archive: str, folder: str, fd: int, base: int, index: "Dict[str, tuple]",
                 loaders: "Dict[str, Joined]") -> None:
        self.archive = archive
        self._folder, self._fd, self._base, self._index, self._loaders = folder, fd, base, index, loaders
        self._zip: "Any" = None

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        entry = self._index.get(fullname)
        if entry is None:
            return None
        member, package = entry[0], entry[1]
        # What zipimport would give: the loader of the folder the module is found in, the
        # .pyc's path in the archive as origin (and cached), a package's folder as its path.
        location = _member_path(self.archive, member)
        folder = "/".join(member.split("/")[:-2 if package else -1])
        loader = self._loaders.get(folder)
        if loader is None:
            loader = self._loaders[folder] = Joined(self.archive, folder, self._fd, self._base, self._index,
                                                   self._loaders)
        spec = _ModuleSpec(fullname, loader, origin=location)  # type: ignore[arg-type]
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [location.rsplit(os.sep, 1)[0]]
        return spec

    def create_module(self, spec: object) -> None:
        return None  # the default module

    def exec_module(self, module: "ModuleType") -> None:
        exec(self.get_code(module.__name__), module.__dict__)

    def get_code(self, fullname: str) -> "CodeType":
        entry = self._index.get(fullname)
        if entry is None:
            return self._zipimporter().get_code(fullname)  # type: ignore[no-any-return]
        os.lseek(self._fd, self._base + entry[2], os.SEEK_SET)
        data = os.read(self._fd, entry[3])
        if len(data) != entry[3]:
            raise ImportError(f"{self.archive} ended while {fullname} was read from it", name=fullname)
        return marshal.loads(data)  # type: ignore[no-any-return]

    def get_filename(self, fullname: str) -> str:
        entry = self._index.get(fullname)
        return _member_path(self.archive, entry[0]) if entry is not None else self._zipimporter().get_filename(fullname)

    def __getattr__(self, name: str) -> "Any":
        # Everything else (prefix, get_data, get_source, is_package, the resource reader)
        # is zipimport's own answer for this folder.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._zipimporter(), name)

    def _zipimporter(self) -> "Any":
        if self._zip is None:
            from zipimport import zipimporter

            self._zip = zipimporter(_member_path(self.archive, self._folder) if self._folder else self.archive)
        return self._zip

    def __repr__(self) -> str:
        return f"<Joined {_member_path(self.archive, self._folder) if self._folder else self.archive}>"


def _member_path(archive: str, member: str) -> str:
    """The path zipimport gives ``member`` of ``archive`` (its table of contents' own)."""
    return archive + os.sep + member.replace("/", os.sep)


_ModuleSpec = type(sys.__spec__)  # importlib.machinery.ModuleSpec, without importing it


def serve(archive: object) -> bool:
    """Put a Joined finder first on sys.meta_path when ``archive`` begins (after its
    shebang line) with joined bytecode for this Python, and nothing asks for bytecode to
    be checked against its source."""
    import _imp

    from _frozen_importlib_external import MAGIC_NUMBER  # type: ignore[import-not-found]

    if not isinstance(archive, str) or _imp.check_hash_based_pycs == "always":
        return False
    try:
        fd = os.open(archive, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return False
    try:
        head = os.read(fd, 16384)
        # The shebang line, then the first member's local header: signature, stored, name.
        at = head.index(b"\n") + 1 if head[:2] == b"#!" else 0
        name = JOINED.encode()
        name_size = int.from_bytes(head[at + 26:at + 28], "little")
        extra_size = int.from_bytes(head[at + 28:at + 30], "little")
        if (head[at:at + 4] != b"PK\x03\x04" or head[at + 8:at + 10] != b"\x00\x00"
                or head[at + _ZIP_LOCAL_HEADER:at + _ZIP_LOCAL_HEADER + name_size] != name):
            raise ValueError("no joined bytecode first")
        base = at + _ZIP_LOCAL_HEADER + name_size + extra_size
        size = int.from_bytes(head[base + 4:base + 8], "little")
        if head[base:base + 4] != MAGIC_NUMBER:
            raise ValueError("joined bytecode for another Python")
        index = head[base + 8:base + 8 + size]
        if len(index) < size:
            os.lseek(fd, base + 8, os.SEEK_SET)
            index = os.read(fd, size)
        table = marshal.loads(index)
    except (OSError, ValueError, EOFError, TypeError):
        os.close(fd)
        return False
    # The file stays open, and is read through this descriptor, for the life of the
    # process: an archive replaced meanwhile (an upgrade) is not mixed with this one.
    sys.meta_path.insert(0, Joined(archive, "", fd, base, table, {}))  # type: ignore[arg-type]
    return True


if __name__ == "__main__":  # the hooks archive's __main__
    serve(getattr(globals().get("__loader__"), "archive", None))
    from lichhook.cli import entry

    entry()
