"""``lichhook listen``: a loopback stand-in for lich that judges reports as lich does.

Use it to see what an adapter sends without running lich: start it, export the LICH_*
values it prints, and run a hook in that shell. It serves every hook contract
(``lichhook.contracts``) and answers as lich's transport does: the route, then POST
only, then the token, then the body cut to 4 KiB and parsed by the contract's own rules.
It serves lich's mod endpoints too (``lichhook.standin_mods``): a Claude Code mod polls
it for commands, which a person types at ``listen`` (``prompt run the tests``, ``abort``).
"""

from __future__ import annotations

import argparse
import hmac
import json
import select
import secrets
import shlex
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple
from urllib.parse import unquote_to_bytes, urlsplit

from lichhook import contracts
from lichhook.contracts import release as releases
from lichhook.standin_mods import ENDPOINTS, FORMS, POLL_WAIT, Endpoint, Mods, parse_line
from lichhook.textout import tolerant_stdio

READ_TIMEOUT = 5.0  # seconds a client may take between bytes of one request
DRAIN_LIMIT = 256 * 1024  # bytes past the cut read and dropped, as Go's server does before answering


class Report(NamedTuple):
    """One request as the stand-in saw and judged it."""

    status: int
    verdict: str  # "accepted", or lich's reason for refusing
    accepted: Optional[dict]  # the normalised report, when accepted
    release: Optional[str]  # the X-Lich-Plugin header
    body: bytes  # what lich read of the body: at most 4 KiB
    contract: str = ""  # "session-start", "session-state", ... ("" for a request no contract serves)
    warning: str = ""  # what lich would log about the release, when it would
    answer: bytes = b""  # the JSON body of a 200 (a mod's poll or status read)


class Judge:
    """lich's transport and parse, for one token: what lich answers each request.
    ``compacting``: take the session-state ``compacting``, as a lich of that contract
    does (False answers 400, as an older lich). ``poll_wait``: how long an empty poll of
    /mod/commands is held (lich: 25 s)."""

    def __init__(self, token: str, compacting: bool = True, poll_wait: float = POLL_WAIT) -> None:
        self.token = token
        self.compacting = compacting
        self.mods = Mods(poll_wait)
        self._releases: Dict[str, str] = {}  # session -> the release its reports last named
        self._lock = threading.Lock()

    def judge(self, method: str, target: str, release: str | None, body: bytes,
              gone: Callable[[], bool] = lambda: False) -> Report:
        """lich's transport, in order: route, method, token, then the (already cut) body.
        ``gone`` says whether the client hung up (a held poll then drains nothing)."""
        try:
            path, query = route(target)
        except ValueError:  # "//[x": urlsplit refuses what it takes for a bad IPv6 host
            return Report(400, "malformed request target", None, release, body)
        endpoint = endpoint_of(path)
        if endpoint is None:
            return Report(404, "not found", None, release, body)
        name = endpoint.name
        if method != endpoint.method:
            return Report(405, "method not allowed", None, release, body, name)
        token = query_value(query, "token")
        if token is None or not hmac.compare_digest(token, self.token.encode("utf-8")):
            return Report(401, "invalid token", None, release, body, name)
        if endpoint.parse is None:
            return self._read(endpoint, query, release, body, gone)
        try:
            accepted = endpoint.parse(body)
        except contracts.Rejected as exc:
            return Report(400, str(exc), None, release, body, name)
        if accepted.get("state") == "compacting" and not self.compacting:
            return Report(400, 'hook has unknown state "compacting"', None, release, body, name)
        warning = self._note(accepted["session_id"], release or "")
        return Report(204, "accepted", accepted, release, body, name, warning)

    def _read(self, endpoint: Endpoint, query: str, release: str | None, body: bytes,
              gone: Callable[[], bool]) -> Report:
        """A mod's GET: a poll of /mod/commands, or a read of /mod/status."""
        name = endpoint.name
        session = (query_value(query, "session_id") or b"").decode("utf-8", "replace")
        if not session:
            return Report(400, "session_id is required", None, release, body, name)
        warning = self._note(session, release or "")
        answer: Any = self.mods.status_of(session) if name == "mod-status" else self.mods.take(session, gone)
        verdict = "answered" if answer is not None else "the client went away: nothing drained"
        accepted = {"session_id": session, "commands" if name == "mod-commands" else "status": answer or []}
        # Go's json.Encoder: compact, a newline after.
        return Report(200, verdict, accepted, release, body, name, warning,
                      json.dumps(answer if answer is not None else [], separators=(",", ":")).encode() + b"\n")

    def _note(self, session: str, release: str) -> str:
        """lich's pluginVersions.note: a warning once a session names a release outside the
        supported range, again only when it changes."""
        with self._lock:
            previous = self._releases.get(session)
            self._releases[session] = release
        if previous == release or releases.compatible(release):
            return ""
        return (f"lich would warn: plugin release {release or 'absent'} is outside "
                f"[{releases.FLOOR}, {releases.CEILING})")


class StandIn(Judge):
    """A lich stand-in on 127.0.0.1, serving in a background thread."""

    def __init__(self, port: int = 0, token: str | None = None, session_id: str = "lichhook-demo",
                 on_report: Callable[[Report], None] | None = None, read_timeout: float = READ_TIMEOUT,
                 compacting: bool = True, poll_wait: float = POLL_WAIT) -> None:
        super().__init__(token or secrets.token_urlsafe(18), compacting, poll_wait)
        self.session_id = session_id
        self.reports: List[Report] = []
        # Requests whose handling raised: none ever should (the tests hold it empty).
        self.errors: List[str] = []
        self._changed = threading.Condition()
        self._on_report = on_report
        self._server = _Server(("127.0.0.1", port), self._handler_class(read_timeout), self.errors)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    def enqueue(self, command: Dict[str, Any], session: str | None = None) -> Dict[str, Any]:
        """Queue a mod command (``{"kind": "prompt", "text": ...}``) for ``session``
        (default: this stand-in's): the command with its id, or ValueError with lich's reason."""
        return self.mods.enqueue(session or self.session_id, command)

    def environ(self) -> dict:
        return {"LICH_PORT": str(self.port), "LICH_TOKEN": self.token, "LICH_SESSION_ID": self.session_id}

    def start(self) -> StandIn:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, count: int, timeout: float) -> List[Report]:
        """Block until ``count`` reports arrived or ``timeout`` passed; return them all."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.reports) >= count, timeout)
            return list(self.reports)

    def of(self, contract: str) -> List[Report]:
        """The reports so far that hit ``contract`` ("session-state", ...)."""
        with self._changed:
            return [r for r in self.reports if r.contract == contract]

    def _record(self, report: Report) -> None:
        with self._changed:
            self.reports.append(report)
            self._changed.notify_all()
        if self._on_report:
            try:
                self._on_report(report)
            except Exception as exc:  # showing a report must not cost the client its answer
                self.errors.append(f"showing a report: {type(exc).__name__}: {exc}")

    def _handler_class(self, read_timeout: float) -> type:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = read_timeout  # a client that stalls mid-request is dropped

            def __getattr__(self, name: str):
                # Go's server hands every method to the handler, which answers 405.
                if name.startswith("do_"):
                    return self._serve
                raise AttributeError(name)

            def _serve(self) -> None:
                # Go's Header.Get: the first value, without surrounding blanks.
                release = self.headers.get("X-Lich-Plugin")
                release = release.strip(" \t") if release is not None else None
                try:
                    report = self._read_and_judge(release)
                except OSError:  # the client went away or stalled: nobody to answer
                    self.close_connection = True
                    return
                # Recorded before answering: once a client has its answer, the report is visible.
                standin._record(report)
                reason = b"" if report.status == 204 else report.answer or report.verdict.encode("utf-8") + b"\n"
                self.send_response(report.status)
                if report.answer:
                    self.send_header("Content-Type", "application/json")
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
                # From 3.15 a request line without a version (HTTP/0.9) gets a plain dict of no
                # headers, not a message; as before, no headers means no body.
                get_all = getattr(self.headers, "get_all", None)
                length = content_length((get_all("Content-Length") if get_all else None) or [])
                if length is None:
                    return Report(400, "Content-Length must be one decimal number", None, release, b"")
                # lich reads at most 4 KiB (io.LimitReader; 64 KiB for a mod's ack or answer)
                # and parses that: a longer body is cut, not refused.
                try:
                    endpoint = endpoint_of(route(self.path)[0])
                except ValueError:
                    endpoint = None
                limit = endpoint.limit if endpoint and endpoint.limit else contracts.BODY_LIMIT
                body = self.rfile.read(min(length, limit)) if length else b""
                rest = length - len(body)
                while 0 < rest and length - rest < limit + DRAIN_LIMIT:
                    chunk = self.rfile.read(min(rest, 65536))
                    if not chunk:
                        break
                    rest -= len(chunk)
                return standin.judge(self.command, self.path, release, body, lambda: hung_up(self.connection))

            do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


class _Server(ThreadingHTTPServer):
    def __init__(self, address: Tuple[str, int], handler: type, errors: List[str]) -> None:
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


def route(target: str) -> Tuple[str, str]:
    """The path (percent-decoded) and raw query of a request target; ValueError for one
    urlsplit refuses ("//[x" reads as a bad IPv6 host)."""
    raw_path, _, query = target.partition("?")
    return unquote_to_bytes(urlsplit(raw_path).path).decode("utf-8", "replace"), query


def endpoint_of(path: str) -> Endpoint | None:
    """What lich serves at ``path``: a hook contract (POST, 4 KiB, its own parse) or a mod endpoint."""
    contract = contracts.by_path(path)
    return Endpoint(contract.NAME, "POST", contracts.BODY_LIMIT, contract.parse) if contract else ENDPOINTS.get(path)


def hung_up(conn: socket.socket) -> bool:
    """Whether the client closed its end: readable, and nothing to read."""
    try:
        return bool(select.select([conn], [], [], 0)[0]) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def query_value(query: str, key: str) -> bytes | None:
    """``r.URL.Query().Get(key)`` as Go reads a raw query (latin-1 text, one char per byte):
    pairs split on ``&`` only; a pair holding ``;`` or a bad ``%`` escape is skipped; ``+``
    is a space; the first value wins. None when the key is absent."""
    wanted = key.encode("latin-1")
    for pair in query.split("&"):
        if not pair or ";" in pair:
            continue
        raw_key, _, raw_value = pair.partition("=")
        name, value = _query_unescape(raw_key), _query_unescape(raw_value)
        if name is None or value is None:
            continue
        if name == wanted:
            return value
    return None


def _query_unescape(text: str) -> bytes | None:
    data = text.encode("latin-1", "replace")
    out = bytearray()
    i = 0
    while i < len(data):
        c = data[i]
        if c == 0x25:  # %
            pair = data[i + 1:i + 3]
            if len(pair) < 2 or not all(h in b"0123456789abcdefABCDEF" for h in pair):
                return None
            out.append(int(pair, 16))
            i += 3
            continue
        out.append(0x20 if c == 0x2B else c)
        i += 1
    return bytes(out)


def content_length(values: List[str]) -> int | None:
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
    if not report.accepted:
        line = f"{report.status} refused   {report.contract or '-'}: {report.verdict}"
    else:
        a = report.accepted
        if report.contract == contracts.START:
            said = f"provider={a['provider']}  provider_session_id={a['provider_session_id']}"
        elif report.contract == contracts.STATE:
            said = a["state"] + "".join(f"  {k}={a[k]}" for k in ("tool", "detail", "reason") if a[k])
        elif report.contract == contracts.TITLE:
            said = f"title={a['title']}"
        else:
            said = _mod_said(report.contract, a)
        verb = "answered" if report.status == 200 else "accepted"
        line = f"{report.status} {verb}  {report.contract}  {said}".rstrip()
    if report.warning:
        line += f"  ({report.warning})"
    return line


def _mod_said(contract: str, a: dict) -> str:
    if contract == "mod-commands":
        return ", ".join(f"{c['id']} {c['kind']}" for c in a["commands"]) or "nothing queued"
    if contract == "mod-acks":
        said = f"{a['id']} {a['kind']} " + ("ok" if a["ok"] else f"failed: {a['error'] or '(no reason)'}")
        if a["answer"]:
            said += f"  answer={contracts.shown(a['answer'])}"
        return said + ("  (lich ends the turn: interrupted)" if a["ok"] and a["kind"] == "abort" else "")
    if contract == "mod-usage":
        c = a["context"]
        said = f"context window={c['window']}" + "".join(f" {k}={c[k]}" for k in ("tokens", "percent") if c[k] is not None)
        said += "".join(f"  {r['kind']}={r['percent_used']}%" for r in a["rate_limits"])
        return said + (f"  cost_usd={a['cost_usd']}" if a["cost_usd"] is not None else "")
    if contract == "mod-answer":
        return f"unanswered={a['unanswered']}" if a["unanswered"] else f"text={contracts.shown(a['text'])}"
    return ""


def exports(standin: StandIn) -> str:
    env = standin.environ()
    posix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    powershell = "; ".join(f"$env:{k} = '{v}'" for k, v in env.items())
    return f"  POSIX shells:  export {posix}\n  PowerShell:    {powershell}\n"


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="lichhook listen", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--token", help="token reports must carry (default: a random one)")
    parser.add_argument("--session", default="lichhook-demo", help="the LICH_SESSION_ID to export")
    parser.add_argument("--before-compacting", action="store_true",
                        help="answer the session-state 'compacting' with 400, as a lich older than that state")
    parser.epilog = ("Commands for a Claude Code mod: while it runs, type one per line, for the --session card: "
                     f"{FORMS}; and 'status <json>' sets what /mod/status answers "
                     '(e.g. status {"owed":[{"ticket":"t1","from":"docs","asked":"the plan?"}]}).')
    args = parser.parse_args(argv)
    tolerant_stdio()

    def show(report: Report) -> None:
        # A held poll that ends empty, and a status read, come every few seconds: not news.
        if report.status == 200 and (report.contract == "mod-status" or not (report.accepted or {}).get("commands")):
            return
        print(describe(report), flush=True)

    try:
        standin = StandIn(args.port, args.token, args.session, on_report=show, compacting=not args.before_compacting)
    except OSError as exc:
        print(f"lichhook listen: cannot listen on 127.0.0.1:{args.port}: {exc}; pick another --port", file=sys.stderr)
        return 2
    standin.start()
    paths = ", ".join([contracts.module(name).PATH for name in contracts.NAMES] + list(ENDPOINTS))
    print(f"lich stand-in listening on http://127.0.0.1:{standin.port}{paths}")
    print("Export these in the shell that runs a hook:")
    print(exports(standin), flush=True)
    print(f"A mod's commands: type one per line here: {FORMS} (listen --help).", flush=True)
    try:
        for line in sys.stdin:
            if line.strip():
                print(typed(standin, line), flush=True)
        threading.Event().wait()  # stdin closed: keep serving
    except KeyboardInterrupt:
        pass
    finally:
        standin.stop()
    return 0


def typed(standin: StandIn, line: str) -> str:
    """What ``listen`` does with a line a person typed: queue a command, or set the status."""
    try:
        if line.split(None, 1)[0] == "status":
            status = json.loads(line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "{}")
            if not isinstance(status, dict):
                raise ValueError("status takes a JSON object with owed, open and ready lists")
            standin.mods.status[standin.session_id] = status
            return f"/mod/status now answers {json.dumps(standin.mods.status_of(standin.session_id))}"
        queued = standin.enqueue(parse_line(line))
    except ValueError as exc:
        return f"not queued: {exc}"
    return f"queued {queued['id']} {queued['kind']} for {standin.session_id}: {json.dumps(queued)}"
