"""The archive's format and its bytecode, for the build and for install.

``lichhook.pyz`` is a shebang line followed by a zip whose members are sorted, with fixed
times and modes, so that two builds of one tree are byte-identical. Beside every ``.py``
lies a legacy unchecked-hash ``.pyc`` (``mod.pyc`` next to ``mod.py``, the only layout
zipimport reads; it never reads ``__pycache__`` and never writes bytecode), stored rather
than deflated. Bytecode is for one Python minor version: any other interpreter compiles
every module from source on every run.

An archive is compiled for a Python by that Python alone, in a process of its own that
runs the same few lines whoever asks (``compile_for``): the bytes of the bytecode
depend on the interpreter's state as it compiles (``marshal`` marks objects shared at
that moment), so the copy install gives a Python is byte for byte the same whichever
Python runs install. ``serves`` says whether a copy already is an archive compiled for a
given Python, and ``bytecode_mismatch`` says when an interpreter does not match an
archive's bytecode. A Python is known by what it answers when asked
(``interpreter_bytecode``): its version and its bytecode's magic number.

Standard library only: ``compile_for`` runs this module's source from the archive
being compiled, without lichhook on the path.
"""

from __future__ import annotations

import importlib.util
import io
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Mapping, NamedTuple

SHEBANG = b"#!/usr/bin/env python3\n"
# 1980-01-01, the earliest time a zip can hold; SOURCE_DATE_EPOCH overrides it.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
# The archive's entry point: a copy of lichhook/__main__.py, its first member.
ENTRY_POINT = "__main__.py"
# The member whose bytecode stands for the whole archive's.
PROBE_MEMBER = "lichhook/__init__.pyc"


_UNCHECKED_HASH = 0b01  # .pyc flags: hash-based, never checked against the source


class Bytecode(NamedTuple):
    """A Python as its bytecode knows it: its version ("3.12") and its magic number."""

    version: str
    magic: bytes


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
    t = time.gmtime(max(int(epoch), 315532800))  # zip cannot hold times before 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def archive_bytes(files: Mapping[str, bytes], shebang: bytes = SHEBANG,
                  stamp: tuple[int, int, int, int, int, int] | None = None) -> bytes:
    """``files`` as a zipapp's bytes, deterministically: sorted members, each with
    ``stamp`` (``zip_time()`` when None) and fixed modes."""
    stamp = stamp or zip_time()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=stamp)
            # Bytecode is stored: every hook run reads its .pyc, and inflating them costs
            # an import of zlib plus a decompression per module. So is the entry point,
            # which Python may read before any lichhook code can put the standard
            # library's zlib ahead of a user's (lichhook/__main__.py). The other .py, only
            # read by other Python versions, stay deflated.
            stored = name.endswith(".pyc") or name == ENTRY_POINT
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
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
    try:
        tmp.write_bytes(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a failed write leaves nothing beside ``out``
        raise


def read_archive(archive: Path) -> tuple[bytes, dict[str, bytes]]:
    """The shebang line (or b"") and every member of ``archive``."""
    return members(Path(archive).read_bytes())


def members(data: bytes) -> tuple[bytes, dict[str, bytes]]:
    """The shebang line (or b"") and every member of the archive whose bytes are ``data``."""
    shebang = data[: data.index(b"\n") + 1] if data.startswith(b"#!") and b"\n" in data else b""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return shebang, {name: zf.read(name) for name in zf.namelist() if not name.endswith("/")}


def stamp(archive: Path | bytes) -> tuple[int, int, int, int, int, int] | None:
    source = io.BytesIO(archive) if isinstance(archive, bytes) else archive
    with zipfile.ZipFile(source) as zf:
        infos = zf.infolist()
    return infos[0].date_time if infos else None


def recompiled(archive: Path) -> bytes:
    """``archive`` with bytecode for the running interpreter, as bytes.

    Same members, shebang, member times and format otherwise. Run through
    ``compile_for``, the bytes depend only on the archive's sources and the Python.
    Raises OSError, zipfile.BadZipFile or SyntaxError (a module this Python cannot compile).
    """
    shebang, files = read_archive(archive)
    return archive_bytes(with_bytecode(files), shebang, stamp(archive))


def recompile(archive: Path, out: Path) -> Path:
    """Write ``archive`` to ``out`` with bytecode for the running interpreter (``recompiled``)."""
    _write_atomically(recompiled(archive), out)
    return out


def bytecode_of(files: Mapping[str, bytes]) -> bytes | None:
    """The magic number of the bytecode beside every ``.py`` of ``files``, or None when a
    ``.py`` has no bytecode or they are for different Pythons."""
    magics = set()
    for name in files:
        if name.endswith(".py"):
            pyc = files.get(name[:-3] + ".pyc")
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
    """The magic number of ``archive``'s bytecode, or None when it carries none."""
    try:
        with zipfile.ZipFile(archive) as zf:
            with zf.open(PROBE_MEMBER) as member:
                magic = member.read(4)
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return magic if len(magic) == 4 else None


# Run by the interpreter asked: isolated, without site, standard library only.
_ASK_SCRIPT = ("import importlib.util, sys; "
               "sys.stdout.write('%d.%d %s' % (sys.version_info[0], sys.version_info[1], "
               "importlib.util.MAGIC_NUMBER.hex()))")
# Compiles SOURCE to COMPILED, both in the folder it runs in, with this module's source
# as the archive holds it, imported by nothing but the standard library: the process is
# in the same state whoever starts it, wherever the archive was (pathlib interns the
# parts of a path, and an interned name a module also uses is marshalled differently).
SOURCE, COMPILED = "source.pyz", "compiled.pyz"
_COMPILE_SCRIPT = (
    "import zipfile; from pathlib import Path; "
    f"source = zipfile.ZipFile({SOURCE!r}).read('lichhook/archive.py'); "
    "space = {'__name__': 'lichhook_archive'}; "
    "exec(compile(source, 'lichhook/archive.py', 'exec', dont_inherit=True), space); "
    f"space['recompile'](Path({SOURCE!r}), Path({COMPILED!r}))"
)


class CompileError(Exception):
    """An interpreter could not compile an archive for itself; the message says why."""


def running_bytecode() -> Bytecode:
    """The running Python's version and magic number."""
    return Bytecode("%d.%d" % sys.version_info[:2], importlib.util.MAGIC_NUMBER)


def interpreter_bytecode(python: str, timeout: float = 30) -> Bytecode | None:
    """The version and magic number of the interpreter at ``python``, as it answers them,
    or None if it cannot be run."""
    try:
        done = subprocess.run([python, "-I", "-S", "-c", _ASK_SCRIPT], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=timeout, check=False)
        version, magic = done.stdout.decode("ascii").split()
        return Bytecode(version, bytes.fromhex(magic)) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def compile_for(python: str, archive: Path, timeout: float = 300) -> bytes:
    """``archive`` with bytecode for ``python``, compiled by that Python in a process of
    its own: the same bytes whoever asks, from any build of the same sources. The
    process gets this environment without PYTHON* settings and with a fixed hash seed
    (Python 3.9 and 3.10 write a set's items in the order of their hashes). Raises
    CompileError."""
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith("PYTHON")}
    env["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory(prefix="lichhook-") as tmp:
        try:
            shutil.copyfile(archive, os.path.join(tmp, SOURCE))
            done = subprocess.run([python, "-S", "-c", _COMPILE_SCRIPT], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False)
            if done.returncode != 0:
                lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
                raise CompileError(f"{python} could not compile {archive} for itself: "
                                   f"{lines[-1] if lines else f'exit status {done.returncode}'}")
            try:
                with open(os.path.join(tmp, COMPILED), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                raise CompileError(f"{python} exited without writing the archive it was asked to compile for "
                                   "itself; is it a Python?") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CompileError(f"cannot run {python} to compile {archive} for it: {exc}") from None


def bytecode_mismatch(archive: Path, python: str, bytecode: Bytecode | None = None) -> str | None:
    """Why ``python`` cannot use ``archive``'s bytecode, as a sentence with the fix; None
    when it can (or when ``archive`` carries no bytecode to match). ``bytecode``: that
    Python's own, when already known."""
    theirs = bytecode_magic(archive)
    if theirs is None:
        return None
    mine = bytecode or interpreter_bytecode(python)
    if mine is None:
        return f"{python} cannot be run to check that it matches the bytecode in {archive}"
    if mine.magic == theirs:
        return None
    return (f"{archive} carries bytecode for another Python than the one its hooks run, {python} "
            f"(Python {mine.version}), which compiles every module from source on every run; "
            f"install again with that interpreter to recompile the archive for it")
