"""The shared file operations: atomic writes and reads that never block."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from lichhook import diskio


def test_write_atomic_replaces_and_is_private(tmp_path):
    target = tmp_path / "f.json"
    target.write_bytes(b"old")
    diskio.write_atomic(str(target), b"new")
    assert target.read_bytes() == b"new"
    if sys.platform != "win32":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["f.json"]


def test_write_atomic_applies_a_mode(tmp_path):
    target = tmp_path / "tool"
    diskio.write_atomic(str(target), b"#!", 0o755)
    if sys.platform != "win32":
        assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "in-the-way"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(OSError):
        diskio.write_atomic(str(target), b"data")
    assert sorted(os.listdir(tmp_path)) == ["in-the-way"]
    assert not [n for n in os.listdir(tmp_path) if diskio.is_temporary(n)]


def test_read_regular_reads_up_to_a_limit(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"0123456789")
    assert diskio.read_regular(str(f)) == b"0123456789"
    assert diskio.read_regular(str(f), 4) == b"0123"
    with pytest.raises(FileNotFoundError):
        diskio.read_regular(str(tmp_path / "missing"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
def test_read_regular_does_not_block_on_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert diskio.read_regular(str(fifo)) is None  # would hang forever with open()
    assert diskio.read_regular(str(tmp_path)) is None


def test_temporary_target_knows_only_write_atomics_own_names():
    assert diskio.temporary_target(".s1.json.4242.0badf00d.tmp") == "s1.json"
    assert diskio.temporary_target(".store.json.1.deadbeef.tmp") == "store.json"
    for other in (".s1.json.4242.abcd.tmp", ".notes.tmp", "s1.json.1.deadbeef.tmp", ".x.y.0badf00d.tmp",
                  ".s1.json.42x.0badf00d.tmp", ".s1.json.42.0BADF00D.tmp", ".s1.json"):
        assert diskio.temporary_target(other) is None, other


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX reaches entries through the folder's descriptor")
def test_posix_folders_are_held_by_descriptor(tmp_path):
    # Without it every entry would be reached by path again, and a folder swapped after its
    # checks could redirect the writes.
    with diskio.Dir.open(str(tmp_path)) as d:
        assert d.fd >= 0


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32",
                    reason="no symbolic links here (Windows makes them only with a privilege, wine not at all)")
def test_a_held_folder_never_follows_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("keep")
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "link").symlink_to(outside / "victim")
    (inside / "dir-link").symlink_to(outside)
    (inside / "dangling").symlink_to(outside / "created")
    with diskio.Dir.open(str(inside)) as d:
        for name in ("link", "dangling"):
            with pytest.raises(diskio.NotAFile) as caught:
                d.open_file(name, os.O_RDWR | os.O_CREAT)
            assert caught.value.filename == str(inside / name) and "a symbolic link" in caught.value.strerror
        with pytest.raises(diskio.NotAFile):
            d.subdir("dir-link")
        d.write_atomic("link", b"new")  # replaces the link itself
    assert (outside / "victim").read_text() == "keep" and not (outside / "created").exists()
    assert (inside / "link").read_bytes() == b"new" and not (inside / "link").is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
@pytest.mark.parametrize("flags", [os.O_RDONLY, os.O_WRONLY | os.O_CREAT, os.O_RDWR | os.O_CREAT])
def test_a_held_folder_refuses_a_fifo_at_once(tmp_path, flags):
    os.mkfifo(tmp_path / "fifo")
    with diskio.Dir.open(str(tmp_path)) as d:
        with pytest.raises(diskio.NotAFile) as caught:
            d.open_file("fifo", flags)  # a plain open would wait for the other end forever
    assert "a FIFO" in caught.value.strerror


def test_the_path_form_windows_uses_reads_writes_and_refuses_non_files(tmp_path):
    """Windows reaches entries by path (fd -1); the same calls, run here."""
    d = diskio.Dir(str(tmp_path), -1)
    d.write_atomic("a.json", b"{}")
    assert d.read("a.json") == b"{}" and sorted(d.names()) == ["a.json"]
    sub = d.subdir("sub", create=True)
    assert sub.path == str(tmp_path / "sub") and sub.fd == -1
    with pytest.raises(diskio.NotAFile):
        d.read("sub")
    assert d.unlink("a.json") and not d.unlink("a.json")


def test_the_path_form_refuses_a_reparse_point(tmp_path, monkeypatch):
    """What Windows reports for a link or junction (FILE_ATTRIBUTE_REPARSE_POINT in
    st_file_attributes, as os.lstat gives it there) is refused before any open."""
    (tmp_path / "linked").write_text("x")
    real_lstat = os.lstat

    class Reported:
        def __init__(self, st: os.stat_result) -> None:
            self.st_mode = st.st_mode
            self.st_file_attributes = 0x400

    def lstat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        st = real_lstat(path, *args, **kwargs)
        return Reported(st) if str(path).endswith("linked") else st

    monkeypatch.setattr(diskio.os, "lstat", lstat)
    d = diskio.Dir(str(tmp_path), -1)
    for call in (lambda: d.read("linked"), lambda: d.write_atomic("linked", b"y"), lambda: d.subdir("linked")):
        with pytest.raises(diskio.NotAFile) as caught:
            call()
        assert "reparse point" in caught.value.strerror
    monkeypatch.undo()
    assert (tmp_path / "linked").read_text() == "x"


def test_a_replace_is_retried_on_windows_for_one_second(monkeypatch):
    """While a reader holds the target open Windows refuses the rename; lichhook retries
    for REPLACE_RETRY_SECONDS, on a clock faked here, then gives up with the error."""
    clock = {"now": 0.0, "tries": 0}

    def refused(src, dst, **kw):  # type: ignore[no-untyped-def]
        clock["tries"] += 1
        raise PermissionError(13, "The process cannot access the file", dst)

    def sleep(seconds: float) -> None:
        clock["now"] += seconds

    import time

    monkeypatch.setattr(diskio.sys, "platform", "win32")
    monkeypatch.setattr(diskio.os, "replace", refused)
    monkeypatch.setattr(time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(time, "sleep", sleep)
    with pytest.raises(PermissionError):
        diskio.replace("a.tmp", "a")
    assert diskio.REPLACE_RETRY_SECONDS == 1.0
    assert 0.9 <= clock["now"] <= 1.0 and clock["tries"] > 5
    # A reader that lets go in time: the replace goes through.
    clock.update(now=0.0, tries=0)
    monkeypatch.setattr(diskio.os, "replace", lambda src, dst, **kw: clock.update(tries=clock["tries"] + 1)
                        if clock["now"] > 0.5 else refused(src, dst))
    diskio.replace("a.tmp", "a")
    assert 0.5 < clock["now"] < 1.0


def test_the_windows_readme_gives_the_retries_the_code_uses():
    from pathlib import Path

    from lichhook.install.copies.stable import ARCHIVE_RETRY_SECONDS

    readme = (Path(__file__).resolve().parent.parent / "windows" / "README.md").read_text(encoding="utf-8")
    assert "retries for one second" in readme
    assert diskio.REPLACE_RETRY_SECONDS == 1.0
    assert "waits up to two seconds for the archives" in readme
    assert ARCHIVE_RETRY_SECONDS == 2.0
