"""The files layer under install: a write that lands between lichhook's read and its
replace is never lost, whichever way the file changes, on the exchange path and on the
portable check-then-rename path."""

from __future__ import annotations

import json
import os

import pytest

from lichhook.install.disk import files
from lichhook.install.errors import ConfigError


@pytest.fixture(params=["exchange", "rename"])
def swap(request, monkeypatch):
    """Run each test with the atomic exchange, and again with the check-then-rename path
    every other system takes."""
    if request.param == "rename":
        monkeypatch.setattr(files, "_exchange_fn", [None])
    return request.param


def harness_writes_once(path, content: bytes):
    """A transform that, the first time lichhook plans, lets "the harness" replace the
    file (atomically, as harnesses do) right after lichhook read it."""
    calls = []

    def transform(raw, notes):
        calls.append(raw)
        if len(calls) == 1:
            tmp = str(path) + ".harness"
            with open(tmp, "wb") as f:
                f.write(content)
            os.replace(tmp, path)
        data = json.loads(raw) if raw else {}
        data["lichhook"] = True
        return json.dumps(data).encode()
    return transform, calls


def test_a_write_after_the_read_is_merged_not_lost(tmp_path, swap):
    path = tmp_path / "state.json"
    path.write_bytes(b'{"n": 1}')
    transform, calls = harness_writes_once(path, b'{"n": 2, "new": "from the harness"}')
    planned = files.apply(files.Edit(str(path), transform))
    assert json.loads(path.read_bytes()) == {"n": 2, "new": "from the harness", "lichhook": True}
    assert len(calls) == 2 and planned.before == b'{"n": 2, "new": "from the harness"}'
    assert (tmp_path / "state.json.lichhook-backup").read_bytes() == b'{"n": 1}'  # the first read is backed up


def test_a_file_created_after_the_read_is_merged_not_overwritten(tmp_path, swap):
    path = tmp_path / "new.json"
    transform, calls = harness_writes_once(path, b'{"theirs": 1}')
    files.apply(files.Edit(str(path), transform))
    assert json.loads(path.read_bytes()) == {"theirs": 1, "lichhook": True}


def test_a_file_written_after_the_read_is_not_deleted(tmp_path, swap):
    path = tmp_path / "ours.json"
    path.write_bytes(b'{"lichhook": true}')
    seen = []

    def transform(raw, notes):
        seen.append(raw)
        if len(seen) == 1:
            path.write_bytes(b'{"lichhook": true, "theirs": 1}')  # in place, this time
            return None
        return raw if b"theirs" in raw else None
    files.apply(files.Edit(str(path), transform))
    assert path.read_bytes() == b'{"lichhook": true, "theirs": 1}'


def test_a_file_that_never_stops_changing_is_refused(tmp_path, swap):
    path = tmp_path / "busy.json"
    path.write_bytes(b"{}")
    count = [0]

    def transform(raw, notes):
        count[0] += 1
        path.write_bytes(b'{"n": %d}' % count[0])
        return b'{"lichhook": true}'
    with pytest.raises(ConfigError) as info:
        files.apply(files.Edit(str(path), transform))
    assert "kept changing" in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == b'{"n": %d}' % count[0]  # theirs stands


def test_a_file_with_two_hard_links_is_refused(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(b"{}")
    os.link(path, tmp_path / "other-name.json")
    with pytest.raises(ConfigError) as info:
        files.apply(files.Edit(str(path), lambda raw, notes: b'{"a": 1}'))
    assert "2 hard links" in str(info.value)
    assert path.read_bytes() == b"{}"


def test_a_link_loop_is_refused(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(ConfigError) as info:
        files.read(str(a))
    assert f"{a} is a symbolic link that cannot be followed" in str(info.value)


def test_nothing_is_left_behind_in_the_folder(tmp_path, swap):
    path = tmp_path / "state.json"
    path.write_bytes(b'{"n": 1}')
    transform, _ = harness_writes_once(path, b'{"n": 2}')
    files.apply(files.Edit(str(path), transform, backup=False))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_folder_put_where_a_file_being_deleted_stood_stays_where_it_was(tmp_path):
    path = tmp_path / "module.js"
    path.write_bytes(b"// lichhook\n")

    def transform(raw, notes):
        if raw is not None and path.is_file():
            # lichhook read the file; another program puts a folder of its own there
            path.unlink()
            path.mkdir()
            (path / "theirs.txt").write_bytes(b"theirs\n")
        return None

    with pytest.raises(ConfigError) as info:
        files.apply(files.Edit(str(path), transform, backup=False))
    assert f"{path} is a folder" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["module.js"]
    assert (path / "theirs.txt").read_bytes() == b"theirs\n"
