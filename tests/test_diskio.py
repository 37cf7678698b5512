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
