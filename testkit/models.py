"""Fake model servers on 127.0.0.1 for the harness CLIs the end-to-end tests run.

One server speaks the three wire formats the harnesses use, each chosen by the request
path, always streamed as server-sent events when the request asks for a stream:

- Anthropic Messages, ``POST /v1/messages`` (Claude Code);
- OpenAI Responses, ``POST /v1/responses`` (Codex);
- OpenAI chat completions, ``POST /v1/chat/completions`` (opencode, omp).

Every request is logged with its body. A test scripts the answers in order: plain text,
a tool call (any tool the harness offers: its shell, an MCP tool, its sub-agent tool), or
either of those held back for a while. Each scripted answer goes to the first request that
offers tools (a turn of the conversation, not a side request such as a title), or to the
first one its own ``when`` accepts; any other request gets a short text answer, so side
requests never stall a run.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Union

DEFAULT_TEXT = "Done."
MODEL = "fake-model"

Matcher = Callable[["Request"], bool]
# A tool call's arguments, or a function of the request that claims it (for what only
# the harness knows, such as its session id).
Arguments = Union[None, dict, Callable[["Request"], dict]]


def offers_tools(request: "Request") -> bool:
    """A turn of the conversation itself: harnesses send their tools with it, and not with
    side requests such as a title or a summary."""
    return bool(request.tool_names())


def anything(request: "Request") -> bool:
    return True


class Reply:
    """One scripted answer: ``text``, or a call of ``tool`` with ``arguments``; sent after
    ``delay`` seconds; claimed by the first request ``when`` accepts (by default one that
    offers tools)."""

    def __init__(self, text: Optional[str] = None, tool: Optional[str] = None,
                 arguments: Arguments = None, delay: float = 0.0, when: Optional[Matcher] = None) -> None:
        if (text is None) == (tool is None):
            raise ValueError("a reply is either text or a tool call")
        self.text, self.tool = text, tool
        self._arguments = arguments
        self.arguments: dict = {}
        self.delay, self.when = delay, when or offers_tools

    def __repr__(self) -> str:
        what = f"text={self.text!r}" if self.tool is None else f"tool={self.tool!r} {self.arguments!r}"
        return f"Reply({what}, delay={self.delay})"


def text(value: str, when: Optional[Matcher] = None) -> Reply:
    return Reply(text=value, when=when)


def tool_call(name: str, arguments: Arguments = None, when: Optional[Matcher] = None) -> Reply:
    return Reply(tool=name, arguments=arguments, when=when)


def hold(seconds: float, reply: Reply) -> Reply:
    """``reply``, sent only after ``seconds``: a slow model, or a session kept open."""
    reply.delay = seconds
    return reply


class Request:
    """One request as the fake server received it."""

    def __init__(self, method: str, path: str, headers: Dict[str, str], raw: bytes) -> None:
        self.method, self.path, self.headers, self.raw = method, path, headers, raw
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.body: dict = body if isinstance(body, dict) else {}
        self.reply: Optional[Reply] = None

    @property
    def api(self) -> str:
        path = self.path.split("?", 1)[0]
        for suffix, name in (("/messages", "anthropic"), ("/responses", "responses"),
                             ("/chat/completions", "chat")):
            if path.endswith(suffix):
                return name
        return ""

    def tool_names(self) -> List[str]:
        """The names of the tools this request offers the model, in any of the three formats."""
        names = []
        for entry in self.body.get("tools") or []:
            if not isinstance(entry, dict):
                continue
            name = entry.get("name") or (entry.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
        return names

    def namespace_of(self, tool: str) -> Optional[str]:
        """The namespace that offers ``tool`` in a Responses request (Codex groups each MCP
        server's tools under one, ``mcp__<server>``), or None when the tool stands alone."""
        for entry in self.body.get("tools") or []:
            if isinstance(entry, dict) and entry.get("type") == "namespace" and any(
                    isinstance(t, dict) and t.get("name") == tool for t in entry.get("tools") or []):
                return entry.get("name") if isinstance(entry.get("name"), str) else None
        return None

    def is_freeform(self, tool: str) -> bool:
        """Whether a Responses request offers ``tool`` as a freeform tool (``"type": "custom"``:
        Codex's ``apply_patch`` for the models it knows), whose call carries one string."""
        return any(isinstance(entry, dict) and entry.get("type") == "custom" and entry.get("name") == tool
                   for entry in self.body.get("tools") or [])

    def text(self) -> str:
        """The body as text, for looking for what reached the model."""
        return self.raw.decode("utf-8", "replace")

    def tool_results(self) -> List[str]:
        """The text of every tool result this request carries back to the model."""
        found: List[str] = []
        body = self.body
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "tool":
                found.append(_flatten(message.get("content")))
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append(_flatten(block.get("content")))
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                found.append(_flatten(item.get("output")))
        return found


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_flatten(v) for v in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"]
        return json.dumps(value)
    return "" if value is None else str(value)


class FakeModel:
    """The three model APIs on one loopback port; ``script(...)`` queues the answers."""

    def __init__(self, default: str = DEFAULT_TEXT) -> None:
        self.default = default
        self.requests: List[Request] = []
        self._script: List[Reply] = []
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "FakeModel":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> "FakeModel":
        with self._lock:
            self._script.extend(replies)
        return self

    def pending(self) -> List[Reply]:
        with self._lock:
            return list(self._script)

    def model_requests(self) -> List[Request]:
        """The requests that asked the model for an answer (not model lists, counts...)."""
        with self._lock:
            return [r for r in self.requests if r.reply is not None]

    def log(self) -> str:
        """Every request's path and body, for a failing assertion's message."""
        with self._lock:
            return "\n".join(f"{r.method} {r.path} -> {r.reply!r}\n  {r.text()[:3000]}" for r in self.requests)

    def wait_for(self, predicate: Callable[[List[Request]], bool], timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: predicate(self.requests), timeout)

    def _claim(self, request: Request) -> Reply:
        with self._lock:
            for i, reply in enumerate(self._script):
                if reply.when(request):
                    request.reply = self._script.pop(i)
                    given = reply._arguments
                    reply.arguments = dict(given(request) if callable(given) else given or {})
                    return request.reply
            request.reply = Reply(text=self.default, when=anything)
            return request.reply

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def _handler_class(self) -> type:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                request = Request("GET", self.path, dict(self.headers.items()), b"")
                fake._record(request)
                path = self.path.split("?", 1)[0]
                if path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                                  "owned_by": "fake", "type": "model",
                                                                  "display_name": MODEL}]})
                else:
                    self._json(404, {"error": {"type": "not_found_error", "message": f"no {path} here"}})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = Request("POST", self.path, dict(self.headers.items()), raw)
                api = request.api
                if not api:
                    fake._record(request)
                    path = self.path.split("?", 1)[0]
                    if path.endswith("/count_tokens"):
                        self._json(200, {"input_tokens": 1})
                    else:
                        self._json(404, {"error": {"type": "not_found_error", "message": f"no {path} here"}})
                    return
                reply = fake._claim(request)
                fake._record(request)
                if reply.delay:
                    time.sleep(reply.delay)
                n = next(fake._ids)
                stream = bool(request.body.get("stream"))
                if api == "anthropic":
                    events = anthropic_events(reply, n)
                    if stream:
                        self._sse([(name, data) for name, data in events])
                    else:
                        self._json(200, anthropic_message(reply, n))
                elif api == "responses":
                    self._sse(responses_events(reply, n, request.namespace_of(reply.tool or ""),
                                               request.is_freeform(reply.tool or "")))
                else:
                    if stream:
                        self._sse([(None, data) for data in chat_chunks(reply, n)] + [(None, "[DONE]")])
                    else:
                        self._json(200, chat_completion(reply, n))

            def _json(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for name, data in events:
                    payload = data if isinstance(data, str) else json.dumps(data)
                    chunk = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
                    try:
                        self.wfile.write(chunk.encode())
                        self.wfile.flush()
                    except OSError:
                        return

        return Handler


# --- Anthropic Messages ----------------------------------------------------------------


def _usage() -> dict:
    return {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def anthropic_message(reply: Reply, n: int) -> dict:
    if reply.tool is None:
        content = [{"type": "text", "text": reply.text}]
        stop = "end_turn"
    else:
        content = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": reply.tool, "input": reply.arguments}]
        stop = "tool_use"
    return {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": MODEL, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": _usage()}


def anthropic_events(reply: Reply, n: int) -> list:
    start = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": MODEL, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": dict(_usage(), output_tokens=1)}
    events: list = [("message_start", {"type": "message_start", "message": start})]
    if reply.tool is None:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": reply.text}}),
        ]
        stop = "end_turn"
    else:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": f"toolu_{n:04d}", "name": reply.tool, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(reply.arguments)}}),
        ]
        stop = "tool_use"
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


# --- OpenAI Responses -----------------------------------------------------------------


def responses_events(reply: Reply, n: int, namespace: Optional[str] = None, freeform: bool = False) -> list:
    """A Responses stream of ``reply``; a call of a freeform tool sends its ``input``
    argument as the call's one string."""
    rid = f"resp_{n:04d}"
    if reply.tool is None:
        item = {"type": "message", "id": f"msg_{n:04d}", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
    elif freeform:
        item = {"type": "custom_tool_call", "id": f"ctc_{n:04d}", "call_id": f"call_{n:04d}", "name": reply.tool,
                "input": str(reply.arguments.get("input", "")), "status": "completed"}
    else:
        item = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}", "name": reply.tool,
                "arguments": json.dumps(reply.arguments), "status": "completed"}
        if namespace:
            item["namespace"] = namespace
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": MODEL}
    events: list = [
        ("response.created", {"type": "response.created", "response": dict(base, status="in_progress", output=[])}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": dict(item, status="in_progress")}),
    ]
    if reply.tool is None:
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                      "output_index": 0, "content_index": 0, "delta": reply.text}))
    events += [
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": dict(base, status="completed", output=[item], usage=usage)}),
    ]
    return events


# --- OpenAI chat completions ------------------------------------------------------------


def chat_chunks(reply: Reply, n: int) -> list:
    base = {"id": f"chatcmpl-{n:04d}", "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if reply.tool is None:
        delta = {"role": "assistant", "content": reply.text}
        finish = "stop"
    else:
        delta = {"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": f"call_{n:04d}", "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)}}]}
        finish = "tool_calls"
    return [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage),
    ]


def chat_completion(reply: Reply, n: int) -> dict:
    if reply.tool is None:
        message = {"role": "assistant", "content": reply.text}
        finish = "stop"
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{n:04d}", "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)}}]}
        finish = "tool_calls"
    return {"id": f"chatcmpl-{n:04d}", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
