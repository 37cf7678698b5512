"""Loopback servers the tests and the benchmark point hooks at: lich's stand-in, a quick
lich for timing, and one that misbehaves."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from typing import List

from testkit.constants import LICH_SESSION, TOKEN


def standin(token: str = TOKEN, session_id: str = LICH_SESSION):
    """lichhook's own lich stand-in (it judges reports as lich does); use it with ``with``."""
    from lichhook.standin import StandIn

    return StandIn(token=token, session_id=session_id)


class QuickLich:
    """A lich that answers every request at once, 204, as lich's Go server answers on
    loopback within a tenth of a millisecond, and judges it later with the stand-in's
    rules (``StandIn.judge``): ``take()`` gives the judgments, so a report lich would
    refuse is still seen as refused. The benchmark times hooks against it: the stand-in
    itself takes about 0.4 ms per request to answer (a thread and an email parser per
    request), which would be counted against the hook. A request is kept before it is
    answered, so once a hook has exited, all it sent is there. One thread serves the
    connections in turn; stop it with ``close()``.
    """

    def __init__(self, token: str = TOKEN, session_id: str = LICH_SESSION) -> None:
        from lichhook.standin import Judge

        self.judge = Judge(token)
        self.token, self.session_id = token, session_id
        self.received: list = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                self.received.append(self._read(conn))
                conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            finally:
                conn.close()

    @staticmethod
    def _read(conn: socket.socket) -> bytes:
        conn.settimeout(5)
        return read_request(conn)

    def take(self) -> list:
        """How lich would have answered each request received since the last take."""
        from lichhook.contracts import BODY_LIMIT

        raws, self.received = self.received, []
        reports = []
        for raw in raws:
            head, _, body = raw.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target = (lines[0].split(" ") + ["", ""])[:2]
            release = None
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "x-lich-plugin" and release is None:
                    release = value.strip(" \t")
            reports.append(self.judge.judge(method, target, release, body[:BODY_LIMIT]))
        return reports

    def environ(self) -> dict:
        return {"LICH_PORT": str(self.port), "LICH_TOKEN": self.token, "LICH_SESSION_ID": self.session_id}

    def close(self) -> None:
        self.sock.close()


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class FaultServer:
    """A raw loopback server that misbehaves on purpose.

    mode: "status" answers ``status``; "silent" accepts and never answers; "slow" answers
    after ``delay`` seconds. Every request's raw bytes are kept in ``requests``.
    """

    def __init__(self, mode: str = "status", status: int = 204, delay: float = 0.0) -> None:
        self.mode, self.status, self.delay = mode, status, delay
        self.requests: List[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._held: List[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            self.requests.append(read_request(conn))
            if self.mode == "silent":
                self._held.append(conn)
                return
            if self.mode == "slow":
                time.sleep(self.delay)
            conn.sendall(f"HTTP/1.1 {self.status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        except OSError:
            pass
        if self.mode != "silent":
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        for c in self._held:
            c.close()


def read_request(conn: socket.socket) -> bytes:
    """One request's bytes, head and body (as long as its Content-Length says), from a
    client that sends it whole; what arrived when the client stops early."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def post(port, path, token, body: bytes, method="POST", headers=None):
    """One request to a loopback server, never through a proxy: (status, body)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}?token={token}", data=body, method=method,
                                 headers=headers or {"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
