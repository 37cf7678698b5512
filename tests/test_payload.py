"""Reading a hook's stdin: what ends the read, and what it returns."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from lichhook.payload import PayloadError, parse_payload, read_line, read_stdin

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="reads a pipe with select()")


def read_in_background(fd: int, **kwargs) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(read_stdin(fd, **kwargs)), daemon=True)
    thread.start()
    return thread, out


@pytest.mark.parametrize("payload", [b'{"session_id": "kept-open"}', b'\xef\xbb\xbf{"a": [1, {"b": "}"}]}\n',
                                     b'{"n": ' + b"1" * 5000 + b"}"])
def test_a_whole_object_ends_the_read_while_the_pipe_stays_open(payload):
    read, write = os.pipe()
    try:
        thread, out = read_in_background(read, deadline=time.monotonic() + 60)
        os.write(write, payload)
        thread.join(20)  # far less than the 60 s the deadline would allow
        assert not thread.is_alive() and out == [payload]
    finally:
        os.close(write)
        os.close(read)


def test_an_object_written_in_pieces_is_read_whole():
    read, write = os.pipe()
    try:
        thread, out = read_in_background(read, deadline=time.monotonic() + 60)
        for piece in (b'{"session_id": ', b'"s-1", "nested": {"a": 1}', b"}"):
            os.write(write, piece)
            time.sleep(0.05)
            if piece != b"}":
                assert thread.is_alive()  # "{... {"a": 1}" ends in a brace but is not whole
        thread.join(20)
        assert out == [b'{"session_id": "s-1", "nested": {"a": 1}}']
        assert parse_payload(out[0])["session_id"] == "s-1"
    finally:
        os.close(write)
        os.close(read)


def test_an_unfinished_payload_is_returned_at_the_deadline():
    read, write = os.pipe()
    try:
        os.write(write, b'{"session_id": "cut')
        assert read_stdin(read, deadline=time.monotonic() + 0.2) == b'{"session_id": "cut'
        assert read_stdin(read, deadline=time.monotonic() - 1) == b""  # already past it
    finally:
        os.close(write)
        os.close(read)


@POSIX_ONLY
def test_end_of_input_ends_the_read_and_too_much_is_refused():
    read, write = os.pipe()
    os.write(write, b"[1, 2]")
    os.close(write)
    assert read_stdin(read, deadline=time.monotonic() + 60) == b"[1, 2]"
    os.close(read)
    read, write = os.pipe()
    os.write(write, b"x" * 2000)
    try:
        with pytest.raises(PayloadError, match="larger than 1000 bytes"):
            read_stdin(read, limit=1000, deadline=time.monotonic() + 60)
    finally:
        os.close(write)
        os.close(read)


@pytest.mark.parametrize("data", [
    b'{"session_id": "s-1", "tool_response": "' + b"x" * 200_000 + b'"}',
    b"\xef\xbb\xbf" + b'{"session_id": "bom"}',
    b'{"n": ' + b"9" * 5000 + b"}",
    b'{"cut": ',
    b"",
    b"[1, 2]",
])
@POSIX_ONLY
def test_read_payload_is_parse_payload_of_read_stdin(data):
    from lichhook.payload import read_payload

    def feed(w: int) -> None:
        try:
            os.write(w, data)
        except OSError:
            pass
        finally:
            os.close(w)

    outcomes = []
    for reader in (lambda fd: parse_payload(read_stdin(fd, deadline=time.monotonic() + 2)),
                   lambda fd: read_payload(fd, deadline=time.monotonic() + 2)):
        r, w = os.pipe()
        writer = threading.Thread(target=feed, args=(w,), daemon=True)
        writer.start()
        try:
            outcomes.append(("value", reader(r)))
        except PayloadError as exc:
            outcomes.append(("error", str(exc)))
        writer.join(5)
        os.close(r)
    plain, once = outcomes
    assert plain == once


def test_a_line_over_the_limit_is_skipped_whole_and_the_next_is_read(tmp_path):
    # The line reader of the serve path and the MCP server: the limit counts a line
    # without its end of line; a longer one is read to its end in bounded chunks.
    lines = tmp_path / "lines"
    lines.write_bytes(b"x" * 10 + b"\n" + b"y" * 11 + b"\n" + b"z" * 25 + b"\nlast" + b"w" * 11)
    with open(lines, "rb") as stream:
        assert read_line(stream, 10) == b"x" * 10 + b"\n"
        for _ in range(2):
            with pytest.raises(PayloadError, match="more than 10 bytes"):
                read_line(stream, 10)
        with pytest.raises(PayloadError):
            read_line(stream, 10)  # the last line, over the limit and without an end of line
        assert read_line(stream, 10) == b""
