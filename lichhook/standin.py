"""``lichhook listen``: a loopback stand-in for lich that judges reports as lich does.

Use it to see what an adapter sends without running lich: start it, export the LICH_*
values it prints, and run a hook in that shell.
"""

from __future__ import annotations

import argparse
import hmac
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, NamedTuple
from urllib.parse import parse_qs, urlsplit

from lichhook import contract
from lichhook.textout import tolerant_stdio

ENDPOINT = "/session-start"
READ_TIMEOUT = 5.0  # seconds a client may take between bytes of one request


class Report(NamedTuple):
    """One request as the stand-in saw and judged it."""

    status: int
    verdict: str  # "accepted", or lich's reason for refusing
    accepted: dict | None  # the normalised report, when accepted
    release: str | None  # the X-Lich-Plugin header
    body: bytes


class StandIn:
    """A lich stand-in on 127.0.0.1, serving in a background thread."""

    def __init__(self, port: int = 0, token: str | None = None, session_id: str = "lichhook-demo",
                 on_report: Callable[[Report], None] | None = None, read_timeout: float = READ_TIMEOUT) -> None:
        self.token = token or secrets.token_urlsafe(18)
        self.session_id = session_id
        self.reports: list[Report] = []
        # Requests whose handling raised: none ever should (the tests hold it empty).
        self.errors: list[str] = []
        self._changed = threading.Condition()
        self._on_report = on_report
        self._server = _Server(("127.0.0.1", port), self._handler_class(read_timeout), self.errors)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    def environ(self) -> dict:
        return {"LICH_PORT": str(self.port), "LICH_TOKEN": self.token, "LICH_SESSION_ID": self.session_id}

    def start(self) -> "StandIn":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "StandIn":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, count: int, timeout: float) -> list[Report]:
        """Block until ``count`` reports arrived or ``timeout`` passed; return them all."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.reports) >= count, timeout)
            return list(self.reports)

    def _record(self, report: Report) -> None:
        with self._changed:
            self.reports.append(report)
            self._changed.notify_all()
        if self._on_report:
            try:
                self._on_report(report)
            except Exception as exc:  # showing a report must not cost the client its answer
                self.errors.append(f"showing a report: {type(exc).__name__}: {exc}")

    def judge(self, method: str, target: str, release: str | None, body: bytes) -> Report:
        """lich's transport, in order: method, path, token, body size, body."""
        try:
            url = urlsplit(target)
        except ValueError:  # "//[x": urlsplit refuses what it takes for a bad IPv6 host
            return Report(400, "malformed request target", None, release, body)
        if method != "POST":
            return Report(405, "method not allowed", None, release, body)
        if url.path != ENDPOINT:
            return Report(404, "not found", None, release, body)
        token = parse_qs(url.query, keep_blank_values=True).get("token", [""])[0]
        if not hmac.compare_digest(token.encode("utf-8"), self.token.encode("utf-8")):
            return Report(401, "invalid token", None, release, body)
        try:
            accepted = contract.parse_session_start(body)
        except contract.Rejected as exc:
            return Report(400, str(exc), None, release, body)
        return Report(204, "accepted", accepted, release, body)

    def _handler_class(self, read_timeout: float) -> type:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = read_timeout  # a client that stalls mid-request is dropped

            def _serve(self) -> None:
                release = self.headers.get("X-Lich-Plugin")
                try:
                    report = self._read_and_judge(release)
                except OSError:  # the client went away or stalled: nobody to answer
                    self.close_connection = True
                    return
                # Recorded before answering: once a client has its answer, the report is visible.
                standin._record(report)
                reason = b"" if report.status == 204 else report.verdict.encode("utf-8") + b"\n"
                self.send_response(report.status)
                self.send_header("Content-Length", str(len(reason)))
                self.send_header("Connection", "close")
                self.end_headers()
                if reason:
                    self.wfile.write(reason)
                self.close_connection = True

            def _read_and_judge(self, release: str | None) -> Report:
                if self.headers.get("Transfer-Encoding") is not None:
                    # lich (Go's net/http) would decode a chunked body; the stand-in does not.
                    return Report(501, "Transfer-Encoding is not supported by the stand-in; "
                                       "send Content-Length", None, release, b"")
                length = content_length(self.headers.get_all("Content-Length") or [])
                if length is None:
                    return Report(400, "Content-Length must be one decimal number", None, release, b"")
                if length > contract.BODY_LIMIT:
                    body = self.rfile.read(contract.BODY_LIMIT + 1)
                    return Report(400, f"body must be at most {contract.BODY_LIMIT} bytes", None, release, body)
                body = self.rfile.read(length) if length else b""
                return standin.judge(self.command, self.path, release, body)

            do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


class _Server(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], handler: type, errors: list[str]) -> None:
        super().__init__(address, handler)
        self.errors = errors

    def handle_error(self, request: object, client_address: object) -> None:
        # One line, where socketserver would print a traceback; the next request is served.
        kind, exc = sys.exc_info()[:2]
        line = f"a request from {client_address} failed: {kind.__name__ if kind else '?'}: {exc}"
        self.errors.append(line)
        try:
            sys.stderr.write(f"lichhook listen: {line}\n")
        except (AttributeError, OSError, ValueError):
            pass


def content_length(values: list[str]) -> int | None:
    """The body length the Content-Length headers give (0 when absent), or None when they
    are not one decimal number, as Go's net/http refuses them."""
    if not values:
        return 0
    if len(set(v.strip() for v in values)) != 1:
        return None
    text = values[0].strip()
    if not text or len(text) > 18 or any(c not in "0123456789" for c in text):
        return None
    return int(text)


def describe(report: Report) -> str:
    """One line for a report, as ``listen`` prints it."""
    if report.accepted:
        a = report.accepted
        line = f"{report.status} accepted  provider={a['provider']}  provider_session_id={a['provider_session_id']}"
    else:
        line = f"{report.status} refused   {report.verdict}"
    if report.status == 204 and not contract.release_supported(report.release):
        line += f"  (lich would warn: plugin release {report.release or 'absent'} outside its supported range)"
    return line


def exports(standin: StandIn) -> str:
    env = standin.environ()
    posix = " ".join(f"{k}={_sh_quote(v)}" for k, v in env.items())
    powershell = "; ".join(f"$env:{k} = '{v}'" for k, v in env.items())
    return f"  POSIX shells:  export {posix}\n  PowerShell:    {powershell}\n"


def _sh_quote(value: str) -> str:
    import shlex

    return shlex.quote(value)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lichhook listen", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--token", help="token reports must carry (default: a random one)")
    parser.add_argument("--session", default="lichhook-demo", help="the LICH_SESSION_ID to export")
    args = parser.parse_args(argv)
    tolerant_stdio()

    def show(report: Report) -> None:
        print(describe(report), flush=True)

    try:
        standin = StandIn(args.port, args.token, args.session, on_report=show)
    except OSError as exc:
        print(f"lichhook listen: cannot listen on 127.0.0.1:{args.port}: {exc}; pick another --port", file=sys.stderr)
        return 2
    standin.start()
    print(f"lich stand-in listening on http://127.0.0.1:{standin.port}{ENDPOINT}")
    print("Export these in the shell that runs a hook:")
    print(exports(standin), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        standin.stop()
    return 0
