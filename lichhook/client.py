"""The client side of lich's hook transport: one POST to 127.0.0.1 per report.

Every contract (``lichhook.contracts``) rides the same request: the token in the query
string, ``X-Lich-Plugin``, a JSON body. It speaks HTTP/1.1 over a plain socket.
``http.client`` would cost ~40 ms of imports on every hook run (it pulls in ``email`` and
``ssl``) and ``requests`` far more; neither is needed for one loopback request, and a
plain socket can never be sent through a proxy, whatever HTTP_PROXY, ALL_PROXY or the
Windows registry say.
"""

import os
import time

from lichhook.contracts import RELEASE
from lichhook.selfcmd import running_archive

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

HOST = "127.0.0.1"  # always loopback; never taken from the environment
TIMEOUT = 1.0  # seconds for the whole exchange, as lich's own scripts use
CLAIMS = "claims"  # beside the hooks archive: the release install claimed per harness

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def percent_encode(text: str) -> str:
    """Percent-encode every byte of ``text``'s UTF-8 except RFC 3986 unreserved ones."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8"))


def claimed(provider: str) -> str:
    """The release to name in X-Lich-Plugin for ``provider``: the one install claimed for it,
    written beside the archive this hook runs (``lichhook.install.plugin.claim``, the same number
    as the harness's manifest or marker), else RELEASE. Read only when a report is sent."""
    archive = running_archive()
    found = read_claims(claims_path(archive)) if archive else {}
    return found.get(provider, RELEASE)


def claims_path(archive: str) -> str:
    """The claims file beside ``archive`` (a copy's hooks archive or its complete one)."""
    return os.path.join(os.path.dirname(archive), CLAIMS)


def read_claims(path: str) -> "Dict[str, str]":
    """``harness -> release`` from the claims file at ``path`` (install writes one beside the
    hooks archive); a line that is not two words, the second a ``plain`` version, is skipped."""
    try:
        with open(path, "rb") as f:
            text = f.read(4096).decode("ascii", "replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and plain(words[1]):
            out[words[0]] = words[1]
    return out


def plain(version: str) -> bool:
    """A version lichhook writes into files and headers (all ASCII): short, a digit first,
    then ASCII letters, digits and ``.+-``."""
    return 0 < len(version) <= 40 and version[:1].isdigit() and all(c in _PLAIN for c in version)


_PLAIN = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-")


def build_request(port: int, token: str, path: str, body: bytes, release: str = RELEASE) -> bytes:
    """The bytes of one POST, token in the query string as lich reads it."""
    head = (
        f"POST {path}?token={percent_encode(token)} HTTP/1.1\r\n"
        f"Host: {HOST}:{port}\r\n"
        "Content-Type: application/json\r\n"
        f"X-Lich-Plugin: {release}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


def parse_status(response: bytes) -> "int | None":
    """The status code of an HTTP response's first line (three digits, RFC 9110), or
    None if there is none: a reply whose status is anything else is no reply."""
    line = response.split(b"\r\n", 1)[0].split(b" ")
    if len(line) >= 2 and line[0].startswith(b"HTTP/") and len(line[1]) == 3 and line[1].isdigit():
        return int(line[1])
    return None


def post(port: int, request: bytes, timeout: float = TIMEOUT) -> "int | None":
    """Send ``request`` to 127.0.0.1:``port`` and return lich's status code.

    The whole exchange (connect, send, first line back) is bounded by ``timeout``.
    Raises OSError (refused, reset, timed out); returns None on a reply without a status.
    """
    # _socket is the C module under socket.py; importing socket.py costs ~5 ms more
    # (selectors, enum) for nothing this one request needs.
    import _socket

    deadline = time.monotonic() + timeout
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect((HOST, port))
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(request)
        response = b""
        while b"\r\n" not in response and len(response) < 8192:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("lich did not answer in time")
            sock.settimeout(remaining)
            chunk = sock.recv(4096)
            if not chunk:
                break
            response += chunk
        return parse_status(response)
    finally:
        sock.close()
