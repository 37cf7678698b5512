"""The archive's format and its bytecode, for the build and for install.

``lichhook.pyz`` is a shebang line followed by a zip whose members are sorted, with fixed
times and modes, so that two builds of one tree are byte-identical. Beside every ``.py``
lies a legacy unchecked-hash ``.pyc`` (``mod.pyc`` next to ``mod.py``, the only layout
zipimport reads; it never reads ``__pycache__`` and never writes bytecode), stored rather
than deflated. Bytecode is for one Python minor version: any other interpreter compiles
every module from source on every run. ``recompiled`` rewrites an archive's bytecode for
the running interpreter (``recompile_command`` has another interpreter do it), ``serves``
says whether a copy already is an archive compiled for a given Python, and
``bytecode_mismatch`` says when an interpreter does not match an archive's bytecode.
"""

from __future__ import annotations

import importlib.util
import io
import marshal
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Mapping

from lichhook.coldstart.joined import JOINED

SHEBANG = b"#!/usr/bin/env python3\n"
# 1980-01-01, the earliest time a zip can hold; SOURCE_DATE_EPOCH overrides it.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
# The member whose bytecode stands for the whole archive's.
PROBE_MEMBER = "lichhook/__init__.pyc"

# Members kept uncompressed: bytecode, and the hooks archive's joined bytecode
# (lichhook.coldstart.joined.JOINED).
STORED = (".pyc", JOINED)

_UNCHECKED_HASH = 0b01  # .pyc flags: hash-based, never checked against the source

# CPython's bytecode magic numbers, by the ranges each minor version used during its
# development (Lib/importlib/_bootstrap_external.py): first, last, version.
_MAGIC_RANGES = (
    (3400, 3419, "3.8"),
    (3420, 3429, "3.9"),
    (3430, 3449, "3.10"),
    (3450, 3499, "3.11"),
    (3500, 3549, "3.12"),
    (3550, 3599, "3.13"),
    (3600, 3649, "3.14"),
    (3650, 3699, "3.15"),
)


def legacy_pyc(name: str, source: bytes) -> bytes:
    """An unchecked-hash .pyc of ``source`` for this interpreter, as zipimport reads it
    beside ``name``."""
    code = compile(source, name, "exec", dont_inherit=True)
    data = bytearray(importlib.util.MAGIC_NUMBER)
    data += _UNCHECKED_HASH.to_bytes(4, "little")
    data += importlib.util.source_hash(source)
    data += marshal.dumps(code)
    return bytes(data)


def with_bytecode(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """``files`` with each ``.py`` given a ``.pyc`` for this interpreter beside it (any
    ``.pyc`` already there is replaced)."""
    out = dict(files)
    for name in [n for n in files if n.endswith(".py")]:
        out[name[:-3] + ".pyc"] = legacy_pyc(name, files[name])
    return out


def zip_time(environ: Mapping[str, str] = os.environ) -> tuple[int, int, int, int, int, int]:
    """The time every member carries: FIXED_TIME, or SOURCE_DATE_EPOCH when set."""
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return FIXED_TIME
    import time

    t = time.gmtime(max(int(epoch), 315532800))  # zip cannot hold times before 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def archive_bytes(files: Mapping[str, bytes], shebang: bytes = SHEBANG,
                  stamp: tuple[int, int, int, int, int, int] | None = None) -> bytes:
    """``files`` as a zipapp's bytes, deterministically: sorted members (but the joined
    bytecode first, where lichhook.coldstart finds it), each with ``stamp`` (``zip_time()``
    when None) and fixed modes."""
    stamp = stamp or zip_time()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in sorted(files, key=lambda name: (name != JOINED, name)):
            info = zipfile.ZipInfo(name, date_time=stamp)
            # Bytecode is stored: every hook run reads its .pyc (or the hooks archive's
            # joined bytecode), and inflating them costs an import of zlib plus a
            # decompression per module. The .py, only read by other Python versions, stay
            # deflated.
            info.compress_type = zipfile.ZIP_STORED if name.endswith(STORED) else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, so the mode reads the same everywhere
            zf.writestr(info, files[name], compresslevel=6)
    return shebang + buffer.getvalue()


def write_archive(files: Mapping[str, bytes], out: Path, shebang: bytes = SHEBANG) -> None:
    """Write ``files`` as a zipapp at ``out``, deterministically, replacing it atomically."""
    _write_atomically(archive_bytes(files, shebang), out)


def _write_atomically(data: bytes, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)


def read_archive(archive: Path) -> tuple[bytes, dict[str, bytes]]:
    """The shebang line (or b"") and every member of ``archive``."""
    return members(Path(archive).read_bytes())


def members(data: bytes) -> tuple[bytes, dict[str, bytes]]:
    """The shebang line (or b"") and every member of the archive whose bytes are ``data``."""
    shebang = data[: data.index(b"\n") + 1] if data.startswith(b"#!") and b"\n" in data else b""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return shebang, {name: zf.read(name) for name in zf.namelist() if not name.endswith("/")}


def _stamp(archive: Path | bytes) -> tuple[int, int, int, int, int, int] | None:
    source = io.BytesIO(archive) if isinstance(archive, bytes) else archive
    with zipfile.ZipFile(source) as zf:
        infos = zf.infolist()
    return infos[0].date_time if infos else None


def hooks_archive(complete: bytes) -> bytes:
    """The hooks archive of the archive whose bytes are ``complete``: the same format,
    shebang and member times, holding only the members lichhook.coldstart.HOOK_MEMBERS
    names (what hooks and wait ops import), their bytecode joined in one member
    (lichhook.coldstart.joined); it reaches the rest in the complete archive
    beside it."""
    from lichhook.coldstart import HOOK_MEMBERS
    from lichhook.coldstart.joined import join_bytecode

    shebang, files = members(complete)
    hot = {name: data for name, data in files.items() if name.startswith(HOOK_MEMBERS)}
    return archive_bytes(join_bytecode(hot), shebang, _stamp(complete))


def recompiled(archive: Path) -> bytes:
    """``archive`` with bytecode for the running interpreter, as bytes.

    Same members, shebang, member times and format otherwise: recompiling with the
    interpreter that built the archive gives it back byte for byte (on Python 3.11 and
    later; 3.9 and 3.10 write a frozenset's items in an order that varies from process to
    process, so their bytes vary while the code is the same). Raises OSError,
    zipfile.BadZipFile or SyntaxError (a module this Python cannot compile).
    """
    shebang, files = read_archive(archive)
    return archive_bytes(with_bytecode(files), shebang, _stamp(archive))


def recompile(archive: Path, out: Path) -> Path:
    """Write ``archive`` to ``out`` with bytecode for the running interpreter (``recompiled``)."""
    _write_atomically(recompiled(archive), out)
    return out


def bytecode_of(files: Mapping[str, bytes]) -> bytes | None:
    """The magic number of the bytecode beside every ``.py`` of ``files`` (a hooks
    archive's joined in one member), or None when a ``.py`` has no bytecode or they are
    for different Pythons."""
    from lichhook.coldstart.joined import joined_members

    joined: dict[str, bytes] = {}
    if JOINED in files:
        magic, names = joined_members(files[JOINED])
        joined = dict.fromkeys(names, magic)
    magics = set()
    for name in files:
        if name.endswith(".py"):
            pyc = files.get(name[:-3] + ".pyc")
            if pyc is None and name[:-3] + ".pyc" in joined:
                magics.add(joined[name[:-3] + ".pyc"])
                continue
            if pyc is None or len(pyc) < 4:
                return None
            magics.add(pyc[:4])
    return magics.pop() if len(magics) == 1 else None


def same_program(a: Mapping[str, bytes], b: Mapping[str, bytes]) -> bool:
    """Whether two archives' members are the same but for their bytecode."""
    def program(files: Mapping[str, bytes]) -> dict[str, bytes]:
        return {name: data for name, data in files.items() if not name.endswith(".pyc")}

    return program(a) == program(b)


def serves(copy: Path, source: Path, magic: bytes) -> bool:
    """Whether ``copy`` is ``source`` (same shebang and members) with bytecode for the
    Python of ``magic`` throughout: then recompiling would change nothing that matters."""
    try:
        theirs, mine = read_archive(copy), read_archive(source)
    except (OSError, ValueError, zipfile.BadZipFile):
        return False
    return theirs[0] == mine[0] and same_program(theirs[1], mine[1]) and bytecode_of(theirs[1]) == magic


def bytecode_magic(archive: Path) -> bytes | None:
    """The magic number of ``archive``'s bytecode (a hooks archive's joined bytecode's),
    or None when it carries none."""
    try:
        with zipfile.ZipFile(archive) as zf:
            probe = PROBE_MEMBER if PROBE_MEMBER in zf.NameToInfo else JOINED
            with zf.open(probe) as member:
                magic = member.read(4)
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return magic if len(magic) == 4 else None


def python_version_of_magic(magic: bytes) -> str | None:
    """The Python version ("3.11") a bytecode magic number belongs to, or None."""
    number = int.from_bytes(magic[:2], "little")
    for first, last, version in _MAGIC_RANGES:
        if first <= number <= last:
            return version
    return None


def python_of_magic(magic: bytes) -> str:
    """The Python a magic number belongs to, for people: "Python 3.11"."""
    version = python_version_of_magic(magic)
    if version:
        return f"Python {version}"
    return f"an unknown Python (bytecode magic number {int.from_bytes(magic[:2], 'little')})"


# Run by an interpreter other than the one asking: isolated, without site, standard library only.
_MAGIC_SCRIPT = "import importlib.util, sys; sys.stdout.write(importlib.util.MAGIC_NUMBER.hex())"
_RECOMPILE_SCRIPT = (
    "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
    "from lichhook.archive import recompile; recompile(Path(sys.argv[1]), Path(sys.argv[2]))"
)


def interpreter_magic(python: str, timeout: float = 30) -> bytes | None:
    """The bytecode magic number of the interpreter at ``python``, or None if it cannot
    be run."""
    try:
        done = subprocess.run([python, "-I", "-S", "-c", _MAGIC_SCRIPT], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=timeout, check=False)
        return bytes.fromhex(done.stdout.decode("ascii")) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def recompile_command(python: str, archive: Path, out: Path) -> list[str]:
    """The command that writes ``archive`` to ``out`` with bytecode for ``python``: run
    it with the interpreter a hook will be registered with. The archive's own code does
    the work, read from its sources when its bytecode is for another Python."""
    return [python, "-I", "-S", "-c", _RECOMPILE_SCRIPT, str(archive), str(out)]


def bytecode_mismatch(archive: Path, python: str, magic: bytes | None = None) -> str | None:
    """Why ``python`` cannot use ``archive``'s bytecode, as a sentence with the fix; None
    when it can (or when ``archive`` carries no bytecode to match). ``magic``: that
    Python's own, when already known."""
    theirs = bytecode_magic(archive)
    if theirs is None:
        return None
    mine = magic or interpreter_magic(python)
    if mine is None:
        return f"{python} cannot be run to check that it matches the bytecode in {archive}"
    if mine == theirs:
        return None
    return (f"{archive} carries bytecode for {python_of_magic(theirs)}, but its hooks run "
            f"{python} ({python_of_magic(mine)}), which compiles every module from source on "
            f"every run; install again with that interpreter to recompile the archive for it")
