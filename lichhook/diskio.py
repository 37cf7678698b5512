"""Small file operations every part of lichhook shares: atomic writes, a Windows-safe
replace, reads that never block on something that is not a regular file, and ``Dir``, a
folder whose entries are reached without ever following a link.

Only what every run has loaded already at import (``os``, the ``stat`` it loads, ``sys``,
``time``): the hooks and wait ops load this on every run, and ``errno`` (about 0.05 ms to
import) is needed only once something has failed.
"""

import os
import stat
import sys
import time

TMP_SUFFIX = ".tmp"  # temporary files are ".<target>.<pid>.<8 hex digits>.tmp" beside their target
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

# How long a replace is retried on Windows while another process holds the target open.
# The longest holder of a file lichhook rewrites is a hook reading a mirror: it opens the
# file, reads at most 8 MiB and closes it, which takes milliseconds, or a few hundred
# where the disk is slow or the machine busy. One second covers that with room to spare.
# (The archives a hook runs are held for the hook's whole life: their copy waits longer,
# lichhook.install.copies.stable.ARCHIVE_RETRY_SECONDS.)
REPLACE_RETRY_SECONDS = 1.0


def replace(src: str, dst: str, dir_fd: "int | None" = None, seconds: float = REPLACE_RETRY_SECONDS) -> None:
    """``os.replace``, retried for up to ``seconds`` on Windows, which refuses to replace a
    file while any process (a hook reading it, an indexer) holds it open."""
    if sys.platform != "win32":
        os.replace(src, dst, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    deadline = time.monotonic() + seconds
    delay = 0.01
    while True:
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def temporary_name(base: str) -> str:
    """A fresh name for a temporary file beside ``base``, in the shape ``temporary_target`` reads."""
    return f".{base}.{os.getpid()}.{os.urandom(4).hex()}{TMP_SUFFIX}"


def write_atomic(path: str, data: bytes, mode: "int | None" = None, seconds: float = REPLACE_RETRY_SECONDS) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never part.

    The temporary file sits in the same folder (a rename across file systems is not
    atomic), has a name no other process uses, is created 0600 (or gets ``mode``) and is
    flushed to disk before it replaces the target (``replace``, waiting up to ``seconds``).
    Raises OSError; leaves no temporary file behind.
    """
    folder, base = os.path.split(path)
    _write_replace(folder, base, data, mode, None, seconds=seconds)


def _write_replace(folder: str, base: str, data: bytes, mode: "int | None", dir_fd: "int | None",
                   durable: bool = True, seconds: float = REPLACE_RETRY_SECONDS) -> None:
    tmp = temporary_name(base)
    where = tmp if dir_fd is not None else os.path.join(folder, tmp)
    # O_EXCL: a link planted at this name is refused, never followed.
    fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY,
                 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(where, mode, dir_fd=dir_fd)
        try:
            replace(where, base if dir_fd is not None else os.path.join(folder, base), dir_fd, seconds)
        except OSError as exc:
            # Name the file in the way, not the temporary one.
            raise OSError(exc.errno, exc.strerror, os.path.join(folder, base)) from None
    except BaseException:
        try:
            os.unlink(where, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def temporary_target(name: str) -> "str | None":
    """The file a temporary of write_atomic was for, or None when ``name`` is not one.

    Only the exact shape write_atomic makes counts, so that a cleanup never takes a file
    some other program happened to name with a leading dot and ``.tmp``.
    """
    if not (name.startswith(".") and name.endswith(TMP_SUFFIX)):
        return None
    parts = name[1:-len(TMP_SUFFIX)].rsplit(".", 2)
    if len(parts) != 3:
        return None
    base, pid, rand = parts
    if not base or not pid.isdigit() or not pid.isascii() or len(rand) != 8:
        return None
    if any(c not in "0123456789abcdef" for c in rand):
        return None
    return base


def is_temporary(name: str) -> bool:
    """Whether a folder entry is one of write_atomic's temporary files."""
    return temporary_target(name) is not None


class NotAFile(OSError):
    """Something other than a regular file (a link, FIFO, folder, device) where one belongs,
    or other than a folder where a folder belongs; ``kind`` says what, in words."""

    kind = "not a regular file"


def kind_of(mode: int) -> str:
    """What a stat mode says an entry is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _not_a_file(path: str, kind: str, wanted: str = "a regular file") -> "NotAFile":
    import errno

    exc = NotAFile(errno.ENOTDIR if wanted == "a folder" else errno.EINVAL, f"it is {kind}, not {wanted}", path)
    exc.kind = kind
    return exc


def read_regular(path: str, limit: "int | None" = None) -> "bytes | None":
    """The bytes of ``path`` (at most ``limit``), or None when it is not a regular file."""
    return read_status(path, limit)[1]


def read_status(path: str, limit: "int | None" = None) -> "tuple[os.stat_result, bytes | None]":
    """The status of what ``path`` names (links followed) and its bytes (at most
    ``limit``), or None for the bytes when it is not a regular file.

    Opened without blocking: a FIFO or a device put where a file belongs must not hang
    the caller waiting for a writer. Raises OSError as open() does.
    """
    fd = os.open(path, os.O_RDONLY | _O_BINARY | _O_NONBLOCK | _O_CLOEXEC)
    try:
        st = os.fstat(fd)
        return st, read_fd(fd, limit) if stat.S_ISREG(st.st_mode) else None
    finally:
        os.close(fd)


def read_fd(fd: int, limit: "int | None" = None) -> bytes:
    """Everything left in ``fd``, or its first ``limit`` bytes."""
    chunks, total = [], 0
    while limit is None or total < limit:
        chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


# Windows marks links and junctions with this attribute (stat.FILE_ATTRIBUTE_REPARSE_POINT).
_REPARSE_POINT = 0x400


def _by_descriptor() -> bool:
    """Whether this OS reaches a folder's entries through the folder's descriptor."""
    # os.replace is rename(2) with overwriting, and is listed under os.rename.
    return (os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd
            and os.unlink in os.supports_dir_fd and os.mkdir in os.supports_dir_fd
            and os.stat in os.supports_dir_fd)


class Dir:
    """A folder held open, whose entries are opened, replaced and removed without ever
    following a link.

    POSIX: the folder is held by a descriptor and every entry is reached relative to it,
    with ``O_NOFOLLOW``; a folder swapped or renamed after it was checked cannot redirect
    anything. Windows has no such calls: each entry is checked with ``lstat`` for a reparse
    point (a link or a junction) just before use. Errors are OSError naming the full path.
    """

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd  # -1 where entries are reached by path

    @classmethod
    def open(cls, path: str) -> "Dir":
        """Open the folder at ``path`` (a link at ``path`` itself is followed: the caller
        decides whether to trust it). Raises NotADirectoryError, FileNotFoundError..."""
        if not _by_descriptor():
            if not stat.S_ISDIR(os.stat(path).st_mode):
                import errno

                raise NotADirectoryError(errno.ENOTDIR, "not a folder", path)
            return cls(path, -1)
        return cls(path, os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "Dir":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def join(self, name: str) -> str:
        return os.path.join(self.path, name)

    def _where(self, name: str) -> tuple:
        if self.fd >= 0:
            return name, self.fd
        return self.join(name), None

    def _named(self, exc: "OSError", name: str) -> "OSError":
        return OSError(exc.errno, exc.strerror, self.join(name))

    def _no_reparse(self, name: str) -> None:
        """Windows: refuse a link or junction at ``name`` (a missing entry is fine)."""
        try:
            st = os.lstat(self.join(name))
        except FileNotFoundError:
            return
        if getattr(st, "st_file_attributes", 0) & _REPARSE_POINT:
            raise _not_a_file(self.join(name), "a link (a reparse point)")

    def stat(self) -> "os.stat_result":
        """The folder's own status."""
        return os.fstat(self.fd) if self.fd >= 0 else os.stat(self.path)

    def lstat(self, name: str) -> "os.stat_result":
        where, dir_fd = self._where(name)
        try:
            return os.stat(where, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            raise self._named(exc, name) from None

    def names(self) -> list:
        try:
            return os.listdir(self.fd if self.fd >= 0 else self.path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, self.path) from None

    def subdir(self, name: str, create: bool = False) -> "Dir":
        """The folder ``name`` inside this one, never through a link; made 0700 if
        ``create`` and missing. Raises FileNotFoundError when missing, NotAFile when
        something else is there."""
        where, dir_fd = self._where(name)
        if create:
            try:
                os.mkdir(where, 0o700, dir_fd=dir_fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise self._named(exc, name) from None
        if dir_fd is None:
            self._no_reparse(name)
            try:
                mode = os.lstat(where).st_mode
            except OSError as exc:
                raise self._named(exc, name) from None
            if not stat.S_ISDIR(mode):
                raise _not_a_file(where, kind_of(mode), "a folder")
            return Dir(where, -1)
        try:
            fd = os.open(where, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            # Missing is the common failure: answered without the errno module.
            if not isinstance(exc, FileNotFoundError) and (
                    exc.errno in _link_errnos() or exc.errno == _errno("ENOTDIR")):  # a link, a file, a FIFO...
                mode = self.lstat(name).st_mode
                raise _not_a_file(self.join(name), kind_of(mode), "a folder") from None
            raise self._named(exc, name) from None
        return Dir(self.join(name), fd)

    def open_file(self, name: str, flags: int, mode: int = 0o600) -> int:
        """A descriptor for the regular file ``name``; NotAFile for a link, FIFO, folder or
        device, at once (``O_NONBLOCK``: a FIFO is never waited on). With ``os.O_CREAT``
        the file is created ``mode`` if missing, never through a link."""
        where, dir_fd = self._where(name)
        if dir_fd is None:
            self._no_reparse(name)
        try:
            fd = os.open(where, flags | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY, mode, dir_fd=dir_fd)
        except OSError as exc:
            # ENXIO: O_WRONLY | O_NONBLOCK on a FIFO nobody reads. EISDIR: a folder.
            if not isinstance(exc, FileNotFoundError) and (
                    exc.errno in _link_errnos() or exc.errno in (_errno("ENXIO"), _errno("EISDIR"))):
                try:
                    kind = kind_of(self.lstat(name).st_mode)
                except OSError:
                    kind = "not a regular file"
                if kind != "a regular file":
                    raise _not_a_file(self.join(name), kind) from None
            if sys.platform == "win32" and isinstance(exc, PermissionError):
                try:
                    if stat.S_ISDIR(self.lstat(name).st_mode):
                        raise _not_a_file(self.join(name), "a folder") from None
                except FileNotFoundError:
                    pass
            raise self._named(exc, name) from None
        try:
            st_mode = os.fstat(fd).st_mode
        except BaseException:
            os.close(fd)
            raise
        if not stat.S_ISREG(st_mode):
            os.close(fd)
            raise _not_a_file(self.join(name), kind_of(st_mode))
        return fd

    def read(self, name: str, limit: "int | None" = None) -> bytes:
        """The bytes of the regular file ``name``, at most ``limit``. Raises
        FileNotFoundError, NotAFile, OSError."""
        fd = self.open_file(name, os.O_RDONLY)
        try:
            return read_fd(fd, limit)
        finally:
            os.close(fd)

    def write_atomic(self, name: str, data: bytes, durable: bool = True) -> None:
        """Replace ``name`` with ``data`` as write_atomic does; whatever was at ``name``
        (a file, a link, a FIFO) is replaced, never written through. A folder there
        stays, and the error names it. ``durable=False`` skips flushing the data to disk
        before the rename: still all or nothing for a process that is killed, but after a
        power cut the file may be found empty (for data whose loss does no harm)."""
        if self.fd < 0:
            self._no_reparse(name)  # Windows: a rename over a link replaces the link; be sure
        _write_replace(self.path, name, data, None, self.fd if self.fd >= 0 else None, durable)

    def unlink(self, name: str) -> bool:
        """Remove the entry ``name`` (a link itself, never its target); False if missing."""
        where, dir_fd = self._where(name)
        try:
            os.unlink(where, dir_fd=dir_fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self._named(exc, name) from None
        return True

    def sync(self) -> None:
        """Flush the folder's entries (the renames) to disk where the OS allows it."""
        if self.fd < 0:
            return  # Windows: no descriptor for a folder; NTFS journals its metadata
        try:
            os.fsync(self.fd)
        except OSError:
            pass


def _errno(name: str) -> int:
    import errno

    return int(getattr(errno, name))


def _link_errnos() -> tuple:
    """What O_NOFOLLOW on a link fails with: ELOOP on Linux and macOS, EMLINK on FreeBSD,
    EFTYPE on NetBSD."""
    import errno

    return tuple(getattr(errno, n) for n in ("ELOOP", "EMLINK", "EFTYPE") if hasattr(errno, n))
