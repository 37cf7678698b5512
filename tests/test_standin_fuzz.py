"""The lich stand-in (``listen``) never fails on what a client sends: random requests over
real loopback HTTP each get an answer or a clean close, and the next report is still judged."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lichhook.standin import StandIn, content_length

QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])
LONG = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])
TOKEN = "tok"
GOOD = json.dumps({"session_id": "s1", "provider_session_id": "still-judged", "provider": "codex"}).encode()

any_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=30)
methods = st.sampled_from(["POST", "GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "BREW", ""]) | any_text
targets = st.one_of(
    st.sampled_from([f"/session-start?token={TOKEN}", "/session-start", "/session-start?token=",
                     f"/session-start?token={TOKEN}&token=x", "//[x", "*", "http://[::1/", "/%ZZ?%ZZ=%",
                     f"/session-start?token={TOKEN}#frag", ""]),
    any_text,
)
lengths = st.one_of(st.integers(-5, 6000).map(str), st.sampled_from(["", " 12 ", "1e3", "0x10", "١٢", "9" * 40]),
                    any_text)
header_names = st.sampled_from(["Content-Length", "Transfer-Encoding", "X-Lich-Plugin", "Content-Type",
                                "Expect", "Host", "Connection"]) | any_text
headers = st.lists(st.one_of(st.tuples(st.just("Content-Length"), lengths), st.tuples(header_names, any_text)),
                   max_size=6)
ids = st.one_of(any_text, st.sampled_from(["\ud800", "a\udfffb", "..", "a/b", "\x00", "ok-id", "😀"]),
                st.integers(), st.none(), st.lists(st.integers(), max_size=2))
bodies = st.one_of(
    st.binary(max_size=300),
    st.fixed_dictionaries({}, optional={"session_id": ids, "provider_session_id": ids,
                                        "provider": st.sampled_from(["codex", "kiro", "x"]) | ids})
    .map(lambda d: json.dumps(d).encode("utf-8", "surrogatepass")),
    st.integers(1, 3000).map(lambda n: b"[" * n),
)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def request_bytes(method: str, target: str, head: list, body: bytes, fix_length: bool) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in head]
    if fix_length:
        lines.append(f"Content-Length: {len(body)}")
    return encode("\r\n".join(lines) + "\r\n\r\n") + body


def exchange(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may answer and close before reading everything
            pass
        answer = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except ConnectionResetError:
            pass
        return answer


def still_judges(standin: StandIn) -> None:
    before = len(standin.reports)
    answer = exchange(standin.port, request_bytes("POST", f"/session-start?token={TOKEN}", [], GOOD, True))
    assert answer.startswith(b"HTTP/1.1 204 "), answer[:200]
    report = standin.reports[before]
    assert report.accepted and report.accepted["provider_session_id"] == "still-judged"


@pytest.fixture(scope="module")
def standin():
    with StandIn(token=TOKEN, session_id="s1", read_timeout=2.0) as server:
        yield server


def _any_request(standin, method, target, head, body, fix_length):
    raw = request_bytes(method, target, head, body, fix_length)
    answer = exchange(standin.port, raw)  # returns: an answer, or a close, never a hang
    if raw.startswith(b"POST /session-start?") and b" HTTP/1.1\r\n" in raw.split(b"\r\n", 1)[0] + b"\r\n":
        assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    assert standin.errors == []
    still_judges(standin)
    assert standin.errors == []


test_any_request_gets_an_answer = QUICK(given(methods, targets, headers, bodies, st.booleans())(_any_request))
test_any_request_gets_an_answer_long = pytest.mark.heavy(
    LONG(given(methods, targets, headers, bodies, st.booleans())(_any_request)))


@pytest.mark.parametrize("values, expected", [
    ([], 0), (["12"], 12), ([" 7 "], 7), (["3", "3"], 3), (["3", "4"], None), (["-1"], None), ([""], None),
    (["+5"], None), (["1e3"], None), (["١٢"], None), (["9" * 40], None),
])
def test_content_length_is_one_decimal_number(values, expected):
    assert content_length(values) == expected


def test_a_stalled_client_is_dropped_and_the_next_one_served():
    with StandIn(token=TOKEN, read_timeout=0.3) as standin:
        with socket.create_connection(("127.0.0.1", standin.port), timeout=10) as stalled:
            stalled.sendall(b"POST /session-start?token=tok HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
            assert stalled.recv(100) == b""  # closed by the server, not left hanging
        still_judges(standin)
        assert standin.errors == []


def test_a_lone_surrogate_is_stored_as_lich_stores_it():
    # lich's JSON decoder turns a lone surrogate escape into U+FFFD, and so does the stand-in.
    with StandIn(token=TOKEN) as standin:
        body = b'{"session_id":"s1","provider_session_id":"a\\ud800b","provider":"claude"}'
        answer = exchange(standin.port, request_bytes("POST", f"/session-start?token={TOKEN}", [], body, True))
        assert answer.startswith(b"HTTP/1.1 204 ")
        assert standin.reports[-1].accepted["provider_session_id"] == "a\ufffdb"


def test_listen_survives_what_used_to_end_it(pyz, base_env):
    proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--port", "0", "--token", TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_env)
    try:
        first = proc.stdout.readline().decode()
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", first).group(1))
        for _ in range(3):
            proc.stdout.readline()
        hostile = [
            request_bytes("POST", f"/session-start?token={TOKEN}", [], b'{"session_id":"s","provider_session_id":"x\\udc80"}', True),
            request_bytes("POST", f"/session-start?token={TOKEN}", [("Content-Length", "abc")], b"{}", False),
            request_bytes("POST", f"/session-start?token={TOKEN}", [("Content-Length", "-3")], b"{}", False),
            request_bytes("POST", "http://[x/session-start", [], b"{}", True),
        ]
        answers = [exchange(port, raw) for raw in hostile]
        assert [a.split(b" ", 2)[1] for a in answers] == [b"204", b"400", b"400", b"400"]
        assert exchange(port, request_bytes("POST", f"/session-start?token={TOKEN}", [], GOOD, True)).startswith(
            b"HTTP/1.1 204 ")
        time.sleep(0.2)
        assert proc.poll() is None
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    text = out.decode("utf-8")
    assert "provider_session_id=x\ufffd" in text and "provider_session_id=still-judged" in text
    assert b"Traceback" not in err
