"""Shared fixtures: the built archive, a clean hook environment, loopback servers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_CONTRACT = ROOT.parent / "shared" / "lich-contract" / "session-start.jsonl"
if str(ROOT) not in sys.path:  # build_zipapp.py and bench/ live at the top of the checkout
    sys.path.insert(0, str(ROOT))

# Variables that would leak the developer's own setup into a hook under test.
_SCRUBBED = ("LICH_", "LICHHOOK_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
             "http_proxy", "https_proxy", "all_proxy", "no_proxy", "CRUSH_", "CLAUDE", "CODEX_HOME",
             "XDG_", "PYTHONPATH")


@pytest.fixture(scope="session")
def pyz(tmp_path_factory) -> Path:
    """dist/lichhook.pyz built from this tree by the real build script, once per run."""
    out = tmp_path_factory.mktemp("dist") / "lichhook.pyz"
    subprocess.run([sys.executable, str(ROOT / "build_zipapp.py"), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return out


@pytest.fixture
def home(tmp_path) -> Path:
    """A fresh home folder for one test."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def base_env(home) -> dict:
    """An environment outside lich, with every per-user folder inside ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED)}
    env.update({
        "HOME": str(home),
        "USERPROFILE": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


class Run:
    """Runs the archive as a harness would: a subprocess, payload on stdin."""

    def __init__(self, pyz: Path, env: dict) -> None:
        self.pyz = pyz
        self.env = env

    def __call__(self, *args: str, stdin: bytes | str = b"", env: dict | None = None,
                 timeout: float = 30, python: str = sys.executable) -> subprocess.CompletedProcess:
        if isinstance(stdin, str):
            stdin = stdin.encode("utf-8")
        full_env = dict(self.env)
        full_env.update(env or {})
        return subprocess.run([python, str(self.pyz), *args], input=stdin, env=full_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


@pytest.fixture
def run(pyz, base_env) -> Run:
    return Run(pyz, base_env)


@pytest.fixture
def standin():
    """lichhook's own lich stand-in on a free loopback port (judges reports as lich does)."""
    from lichhook.standin import StandIn

    with StandIn(token="t&k=n #ü", session_id="lich-s1") as server:
        yield server


class FaultServer:
    """A raw loopback server that misbehaves on purpose.

    mode: "status" answers ``status``; "silent" accepts and never answers; "slow" answers
    after ``delay`` seconds. Every request's raw bytes are kept in ``requests``.
    """

    def __init__(self, mode: str = "status", status: int = 204, delay: float = 0.0) -> None:
        self.mode, self.status, self.delay = mode, status, delay
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
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
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                body += chunk
            self.requests.append(head + b"\r\n\r\n" + body)
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


@pytest.fixture
def fault_server():
    servers = []

    def make(mode: str = "status", status: int = 204, delay: float = 0.0) -> FaultServer:
        s = FaultServer(mode, status, delay)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def lich_env(server, session_id: str = "lich-s1", token: str | None = None) -> dict:
    """The LICH_* variables pointing at ``server`` (a StandIn or a FaultServer)."""
    return {
        "LICH_PORT": str(server.port),
        "LICH_TOKEN": token if token is not None else getattr(server, "token", "tok"),
        "LICH_SESSION_ID": session_id,
    }
