"""The last-title record (lichhook.titles) and the bounded transcript readers
(lichhook.transcripts): safe names from unchecked ids, private folders, atomic writes,
no waiting on what is not a regular file, and no reading past the limit."""

from __future__ import annotations

import os
import stat
import sys
import threading
import time

import pytest

from lichhook import titles, transcripts
from testkit.hostile import FILE_UNSAFE_IDS

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes, owners and FIFOs")


def card(tmp_path, session="lich-s1") -> dict:
    return {"XDG_STATE_HOME": str(tmp_path / "state"), "LICH_SESSION_ID": session, "HOME": str(tmp_path)}


def test_a_title_is_kept_per_card(tmp_path):
    one, two = card(tmp_path), card(tmp_path, "lich-s2")
    assert titles.last(one) is None
    assert titles.remember(one, "First") and titles.remember(two, "Second")
    assert (titles.last(one), titles.last(two)) == ("First", "Second")
    assert titles.remember(one, "Renamed") and titles.last(one) == "Renamed"
    titles.forget(one, "lich-s1")
    assert titles.last(one) is None and titles.last(two) == "Second"


@pytest.mark.parametrize("session", [s for s in FILE_UNSAFE_IDS if isinstance(s, str) and s] +
                         ["a" * 5000, "\ud800", "lich/../../x", "CON", "Lich-S1"])
def test_any_session_id_is_a_safe_file_name(tmp_path, session):
    env = card(tmp_path, session)
    assert titles.remember(env, "T")
    assert titles.last(env) == "T"
    (name,) = os.listdir(titles.folder(env))
    assert len(name) == 21 and name.endswith(".json") and all(c in "0123456789abcdef" for c in name[:16])
    assert titles.last(card(tmp_path, "lich-s1")) is None


def test_two_ids_sharing_a_name_do_not_share_a_title(tmp_path):
    env = card(tmp_path, "one")
    titles.remember(env, "T")
    # Another id written into the same file, as if its hash collided: read back as nothing.
    path = os.path.join(titles.folder(env), titles.key("one") + ".json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"session": "two", "title": "Not mine"}')
    assert titles.last(env) is None


@POSIX_ONLY
def test_the_folder_is_private_and_never_a_link(tmp_path):
    env = card(tmp_path)
    titles.remember(env, "T")
    assert stat.S_IMODE(os.stat(titles.folder(env)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.join(titles.folder(env), titles.key("lich-s1") + ".json")).st_mode) == 0o600
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = card(tmp_path / "linked")
    os.makedirs(os.path.dirname(titles.folder(linked)))
    os.symlink(elsewhere, titles.folder(linked))
    assert titles.remember(linked, "T") is False
    assert list(elsewhere.iterdir()) == []


@POSIX_ONLY
@pytest.mark.parametrize("changed", ["the folder", "a folder above"])
def test_a_folder_others_can_write_is_not_used(tmp_path, changed):
    """Whoever can write the titles folder, or rename one above it, decides which title
    lich is spared: the records stay out of it, as the waits stay out of such a folder."""
    env = card(tmp_path)
    assert titles.remember(env, "T")
    folder = titles.folder(env)
    os.chmod(folder if changed == "the folder" else os.path.dirname(folder), 0o777)
    assert titles.remember(env, "Renamed") is False
    assert titles.last(env) == "T"


@POSIX_ONLY
def test_every_folder_it_makes_is_private_whatever_the_umask(tmp_path):
    env = card(tmp_path)
    old = os.umask(0)
    try:
        assert titles.remember(env, "T")
    finally:
        os.umask(old)
    for made in (titles.folder(env), os.path.dirname(titles.folder(env)), str(tmp_path / "state")):
        assert stat.S_IMODE(os.stat(made).st_mode) == 0o700, made


@POSIX_ONLY
def test_a_fifo_where_the_record_belongs_is_not_waited_on(tmp_path):
    env = card(tmp_path)
    os.makedirs(titles.folder(env))
    os.mkfifo(os.path.join(titles.folder(env), titles.key("lich-s1") + ".json"))
    began = time.monotonic()
    assert titles.last(env) is None
    assert time.monotonic() - began < 2


def test_garbage_in_the_record_reads_as_no_title(tmp_path):
    env = card(tmp_path)
    titles.remember(env, "T")
    path = os.path.join(titles.folder(env), titles.key("lich-s1") + ".json")
    for junk in (b"", b"{", b"[]", b'{"session": "lich-s1", "title": 5}', b"\xff" * 10, b"x" * 20000):
        with open(path, "wb") as f:
            f.write(junk)
        assert titles.last(env) is None


def test_old_records_are_pruned_when_a_title_is_written(tmp_path):
    env = card(tmp_path)
    titles.remember(card(tmp_path, "old"), "Old")
    titles.remember(card(tmp_path, "recent"), "Recent")
    old = os.path.join(titles.folder(env), titles.key("old") + ".json")
    stale = time.time() - titles.MAX_AGE_SECONDS - 60
    os.utime(old, (stale, stale))
    (tmp_path / "state" / "lichhook" / "titles" / "notes.txt").write_text("not ours")
    titles.remember(env, "New")
    left = sorted(os.listdir(titles.folder(env)))
    assert left == sorted([titles.key("recent") + ".json", titles.key("lich-s1") + ".json", "notes.txt"])


def test_temporaries_a_killed_writer_left_are_swept_once_old(tmp_path):
    """A hook killed mid-write leaves ``.<record>.<pid>.<hex>.tmp``: swept when a title is
    next written, once two minutes old (a younger one may be a writer at work); files not
    shaped like lichhook's stay."""
    env = card(tmp_path)
    titles.remember(env, "First")
    where = titles.folder(env)
    record = titles.key("other") + ".json"
    old_tmp = os.path.join(where, f".{record}.4242.0123abcd.tmp")
    young_tmp = os.path.join(where, f".{record}.4243.89abcdef.tmp")
    foreign = os.path.join(where, ".notes.txt.1.zzzz.tmp")
    for path in (old_tmp, young_tmp, foreign):
        with open(path, "w") as f:
            f.write('{"session": "other", "ti')
    stale = time.time() - titles.TEMPORARY_AGE_SECONDS - 5
    for path in (old_tmp, foreign):
        os.utime(path, (stale, stale))
    titles.remember(env, "Second")
    left = set(os.listdir(where))
    assert os.path.basename(old_tmp) not in left
    assert {os.path.basename(young_tmp), os.path.basename(foreign)} <= left


def test_without_a_lich_session_nothing_is_kept(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    assert titles.remember(env, "T") is False and titles.last(env) is None
    assert not (tmp_path / "state").exists()


def test_concurrent_writers_leave_one_whole_record(tmp_path):
    env = card(tmp_path)
    errors = []

    def write(n):
        try:
            for i in range(30):
                titles.remember(env, f"title {n} {i}")
        except Exception as exc:  # pragma: no cover - the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert titles.last(env).startswith("title ")
    assert [n for n in os.listdir(titles.folder(env)) if n.endswith(".tmp")] == []


# --- transcripts ---------------------------------------------------------------------------

def test_the_last_matching_line_is_found_across_chunks(tmp_path):
    path = tmp_path / "t.jsonl"
    long_line = '{"type":"ai-title","aiTitle":"' + "x" * (3 * transcripts.CHUNK) + '"}'
    path.write_text('{"type":"ai-title","aiTitle":"first"}\n' + long_line + "\n" + '{"type":"user"}\n' * 1000)
    assert transcripts.last_line_with(str(path), b'"ai-title"') == long_line.encode()


def test_nothing_is_read_past_the_limit(tmp_path):
    path = tmp_path / "t.jsonl"
    filler = ('{"type":"user","text":"' + "y" * 200 + '"}\n') * 10000  # about 2.2 MB
    path.write_text('{"type":"ai-title","aiTitle":"early"}\n' + filler)
    assert transcripts.last_line_with(str(path), b'"ai-title"', limit=1 << 20) is None
    assert transcripts.last_line_with(str(path), b'"ai-title"', limit=1 << 22) == b'{"type":"ai-title","aiTitle":"early"}'
    head = tmp_path / "h.jsonl"
    head.write_text(filler + '{"marker": 1}\n')
    assert list(transcripts.lines_with(str(head), (b'"marker"',), limit=1 << 20)) == []
    assert list(transcripts.lines_with(str(head), (b'"marker"',), limit=1 << 22)) == [b'{"marker": 1}']


def test_a_last_line_without_a_newline_counts(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"marker":2}')
    assert list(transcripts.lines_with(str(path), (b"marker",))) == [b'{"marker":2}']
    assert transcripts.last_line_with(str(path), b"marker") == b'{"marker":2}'


@pytest.mark.parametrize("path", [None, 5, "", "relative/t.jsonl", "/no/such/file", "/tmp\x00/x"])
def test_no_file_no_lines(path):
    assert transcripts.last_line_with(path, b"x") is None
    assert list(transcripts.lines_with(path, (b"x",))) == []


@POSIX_ONLY
def test_a_fifo_or_a_folder_is_never_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    began = time.monotonic()
    assert transcripts.last_line_with(str(fifo), b"x") is None
    assert list(transcripts.lines_with(str(fifo), (b"x",))) == []
    assert transcripts.last_line_with(str(tmp_path), b"x") is None
    assert time.monotonic() - began < 2
