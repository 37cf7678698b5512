"""lichhook's Claude Code mods inside the real Claude Code (the pinned 2.1.332): installed
through the plugin route, its TUI in a pseudo-terminal against the fake model, and a
loopback lich that serves lich's mod endpoints (docs/hooks/mod-*.md: the held poll, acks,
usage, status; session-state's /hook) and keeps every request it got."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional
from urllib.parse import parse_qs, urlsplit

import pytest

from lichhook.contracts import RELEASE
from testkit.constants import LICH_SESSION
from testkit.models import hold, text

pytestmark = pytest.mark.e2e

HOLD = 25.0  # lich holds an empty poll this long
NO_ERRANDS = {"owed": [], "open": [], "ready": []}


class ModLich:
    """lich's mod endpoints on loopback: ``send(command)`` queues a command for the next
    poll, ``status`` is what /mod/status answers; every request is kept in ``seen``."""

    def __init__(self, token: str = "tok") -> None:
        self.token = token
        self.seen: List[dict] = []
        self.queue: List[dict] = []
        self.status: dict = NO_ERRANDS
        self.ids = 0
        self.cond = threading.Condition()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        with self.cond:
            self.queue = []
            self.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()

    def send(self, kind: str, **fields: object) -> str:
        with self.cond:
            self.ids += 1
            command = {"id": f"m{self.ids}", "kind": kind, **fields}
            self.queue.append(command)
            self.cond.notify_all()
            return str(command["id"])

    def to(self, path: str) -> List[dict]:
        with self.cond:
            return [r for r in self.seen if r["path"] == path]

    def wait(self, found: Callable[["ModLich"], object], timeout: float = 60, what: str = "") -> object:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                self.cond.release()
                try:
                    value = found(self)
                finally:
                    self.cond.acquire()
                if value:
                    return value
                left = deadline - time.monotonic()
                assert left > 0, f"lich never saw {what}; it got:\n" + "\n".join(
                    f"{r['method']} {r['path']} {r['body']}" for r in self.seen)
                self.cond.wait(min(left, 0.5))

    def ack(self, command_id: str, timeout: float = 60) -> dict:
        return self.wait(lambda lich: next((r["body"] for r in lich.to("/mod/acks") if r["body"].get("id") == command_id),
                                           None), timeout, f"the ack of {command_id}")  # type: ignore[return-value]

    def _handler(self) -> type:
        lich = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self, status: int, value: object = None) -> None:
                data = b"" if value is None else json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _keep(self) -> dict:
                url = urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                row = {"method": self.command, "path": url.path, "query": {k: v[0] for k, v in parse_qs(url.query).items()},
                       "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body, "at": time.monotonic()}
                with lich.cond:
                    lich.seen.append(row)
                    lich.cond.notify_all()
                return row

            def do_GET(self) -> None:
                row = self._keep()
                if row["query"].get("token") != lich.token:
                    return self._answer(401)
                if row["path"] == "/mod/status":
                    return self._answer(200, lich.status)
                if row["path"] != "/mod/commands":
                    return self._answer(404)
                with lich.cond:
                    lich.cond.wait_for(lambda: lich.queue, HOLD)
                    taken, lich.queue = lich.queue, []
                self._answer(200, taken)

            def do_POST(self) -> None:
                row = self._keep()
                self._answer(401 if row["query"].get("token") != lich.token else 204)

        return Handler


@pytest.fixture
def mod_lich():
    lich = ModLich()
    yield lich
    lich.close()


def polls_from_the_mod(lich: ModLich) -> List[dict]:
    return lich.to("/mod/commands")


def tui_session(sandbox, lich: ModLich):
    """Claude Code with lichhook installed through its plugin manager, its TUI at the
    prompt inside ``lich``."""
    box = sandbox("claude").plugin_route()
    box.install()
    box.standin = lich  # the LICH_* variables point at it (testkit.environment.lich_env)
    return box


def model_requests(box) -> List[dict]:
    return [r.body for r in box.model.model_requests()]


def test_lich_drives_a_tui_session_and_hears_its_figures(sandbox, mod_lich):
    box = tui_session(sandbox, mod_lich)
    mod_lich.status = {"owed": [{"ticket": "b1", "from": "docs", "asked": "which file?"}],
                       "open": [{"ticket": "c2", "target": "tests", "state": "busy"}], "ready": []}
    with box.harness.tui(box) as tui:
        first = mod_lich.wait(lambda lich: polls_from_the_mod(lich), 90, "a poll")[0]  # type: ignore[index]
        assert first["method"] == "GET" and first["query"] == {"token": "tok", "session_id": LICH_SESSION}
        assert first["headers"]["x-lich-plugin"] == RELEASE
        # the footer: lich's errands, read every 5 s
        tui.wait_for(r'lich: owes "docs" an answer, 1 task out', 30)

        # a prompt becomes a turn, and is acked once it entered
        box.model.script(text("Hello from the fake model."))
        sent = mod_lich.send("prompt", text="say hello to lich")
        assert mod_lich.ack(sent) == {"session_id": LICH_SESSION, "id": sent, "kind": "prompt", "ok": True}
        tui.wait_for(r"Hello from the fake model\.", 60)
        assert any("say hello to lich" in json.dumps(body) for body in model_requests(box))

        # after the turn, Claude Code's own figures
        usage = mod_lich.wait(lambda lich: [r for r in lich.to("/mod/usage") if r["body"]["context"].get("tokens")],
                              60, "a usage report after the turn")[-1]  # type: ignore[index]
        body = usage["body"]
        assert body["session_id"] == LICH_SESSION and body["conversation_id"]
        assert body["context"]["window"] > 0 and body["context"]["tokens"] > 0
        assert "cost_usd" in body and usage["headers"]["x-lich-plugin"] == RELEASE

        # model and effort reach the next model request
        for kind, value in (("model", "claude-opus-4-6"), ("effort", "low")):
            assert mod_lich.ack(mod_lich.send(kind, **{kind: value}))["ok"] is True
        box.model.script(text("Overridden."))
        before = len(model_requests(box))
        assert mod_lich.ack(mod_lich.send("prompt", text="once more"))["ok"] is True
        tui.wait_for(r"Overridden\.", 60)
        request = next(b for b in model_requests(box)[before:] if "once more" in json.dumps(b))
        assert request["model"] == "claude-opus-4-6", request.get("model")
        # a model that takes effort (Claude Code sends none to one that does not)
        assert request.get("output_config", {}).get("effort") == "low", \
            {k: v for k, v in request.items() if k not in ("messages", "system", "tools")}

        # /compact: compacting, then done
        box.model.script(text("Summary of the conversation.", when=lambda r: True))
        tui.type_line("/compact")
        mod_lich.wait(lambda lich: [r for r in lich.to("/hook") if (r["body"] or {}).get("state") == "compacting"],
                      90, "compacting")
        states = mod_lich.wait(lambda lich: (lambda s: s[s.index("compacting"):] if "done" in s[s.index("compacting"):]
                                             else None)([(r["body"] or {}).get("state") for r in lich.to("/hook")]),
                               90, "done after compacting")
        assert states[:2] == ["compacting", "done"], states


def test_abort_command_and_ask_from_lich(sandbox, mod_lich):
    box = tui_session(sandbox, mod_lich)
    with box.harness.tui(box) as tui:
        mod_lich.wait(lambda lich: polls_from_the_mod(lich), 90, "a poll")
        # abort stops a long turn
        box.model.script(hold(120, text("too late")))
        assert mod_lich.ack(mod_lich.send("prompt", text="take your time"))["ok"] is True
        box.model.wait_for(lambda rs: any("take your time" in r.text() for r in rs), 60)
        aborted = mod_lich.ack(mod_lich.send("abort"))
        assert aborted["ok"] is True, aborted
        # the session is free at once: the next prompt is answered long before the held reply
        box.model.script(text("Free again."))
        assert mod_lich.ack(mod_lich.send("prompt", text="are you free?"), 30)["ok"] is True
        tui.wait_for(r"Free again\.", 30)
        assert "too late" not in tui.text()

        # a built-in slash command runs
        ran = mod_lich.ack(mod_lich.send("command", name="clear"), 90)
        assert ran["ok"] is True, ran

        # ask: answered from a fork of the session's transcript
        box.model.script(text("First answer."))
        assert mod_lich.ack(mod_lich.send("prompt", text="remember the word kumquat"))["ok"] is True
        tui.wait_for(r"First answer\.", 60)
        time.sleep(1)
        box.model.script(text("You asked about kumquat.", when=lambda r: "side question" in r.text()))
        asked = mod_lich.ack(mod_lich.send("ask", question="what word?"), 90)
        assert asked["ok"] is True and asked["answer"] == "You asked about kumquat.", asked


def test_headless_runs_send_nothing_to_the_mod_endpoints(sandbox, mod_lich):
    box = sandbox("claude").plugin_route()
    box.install()
    box.standin = mod_lich
    mod_lich.send("prompt", text="must never run")
    box.run(box.harness.headless("Say hi."))
    time.sleep(3)
    mods = [r for r in mod_lich.seen if r["path"].startswith("/mod/")]
    assert mods == [], mods
    assert not [r for r in mod_lich.to("/hook") if (r["body"] or {}).get("state") == "compacting"]
