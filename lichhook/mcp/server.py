"""A minimal MCP server over stdio: JSON-RPC 2.0, one message per line, standard library only.

It serves one tool and nothing else. Every line gets at most one answer; a line that is
not a request (a notification, a response) gets none. No input ends the loop except the
end of stdin: a malformed line is answered with an error and the next line is read.
"""

from __future__ import annotations

import json
import sys
from typing import BinaryIO

from lichhook._version import __version__
from lichhook.jsonint import json_int
from lichhook.mcp import tool
from lichhook.payload import MAX_BYTES, PayloadError, read_line
from lichhook.selfcmd import python_word
from lichhook.snapshot import hold

# Oldest to newest; an initialize asking for one of these gets it, any other gets the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# structuredContent in tool results arrived with this revision.
STRUCTURED_SINCE = "2025-06-18"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

USAGE = """\
usage: {python} lichhook.pyz mcp [--waits-dir DIR]

Serves the MCP tool claude_code_wait on stdin/stdout (JSON-RPC 2.0, one message per
line) until stdin ends. The waits folder: --waits-dir, else LICHHOOK_WAITS_DIR, else
<user state dir>/waits, as for 'lichhook wait'.
"""

INSTRUCTIONS = (
    "claude_code_wait records what this session waits for. Pass your session id (from the "
    "SessionStart hook) as session and your name as by on every call; after /clear, adopt "
    "your name to take its waits over."
)


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Number(float):
    """A JSON number as its text: an id is echoed as given, where a float would change
    it (``-1e-400`` would come back as ``-0.0``, ``1e400`` as no JSON at all, ``1.10`` as
    ``1.1``). Anywhere else it is the float it reads as."""

    text: str

    def __new__(cls, text: str) -> Number:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _integer(text: str) -> object:
    """An integer as an ``int`` where it reads back as written, else a Number (``-0``, or
    longer than ``int`` takes: lichhook.jsonint)."""
    value = json_int(text)
    return value if isinstance(value, int) and (value or not text.startswith("-")) else Number(text)


def _valid_id(value: object) -> bool:
    # MCP ids are strings or integers (never null); JSON-RPC also allows other numbers.
    return isinstance(value, (str, int, Number)) and not isinstance(value, bool)


def _not_json(word: str) -> object:
    # Python's json reads NaN and Infinity, which JSON does not have; echoed back in an
    # answer they would make a line no client can parse.
    raise ValueError(f"{word} is not a JSON value")


class Server:
    def __init__(self, waits_dir: str | None = None) -> None:
        self.waits_dir = waits_dir
        # Until initialize says otherwise, answer as the newest revision.
        self.version = PROTOCOL_VERSIONS[-1]

    # -- one line in, at most one message out ---------------------------------------------

    def handle_line(self, line: bytes) -> dict | None:
        """The answer to one line of input, or None when it needs none."""
        try:
            # json_int: a number longer than int() takes is still JSON (lichhook.jsonint).
            message = json.loads(line.decode("utf-8"), parse_constant=_not_json, parse_int=_integer,
                                 parse_float=Number)
        except (UnicodeDecodeError, ValueError) as exc:
            return _error(None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
        except RecursionError:  # one hostile line must not end the server
            return _error(None, PARSE_ERROR, "Parse error: the line is JSON nested too deeply")
        if isinstance(message, list):
            # Batches left JSON-RPC-over-MCP in 2025-06-18; one message per line is all we take.
            return _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per line")
        return self.handle_message(message)

    def handle_message(self, message: object) -> dict | None:
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
        has_id = "id" in message
        msg_id = message.get("id")
        answer_id = msg_id if _valid_id(msg_id) else None
        if message.get("jsonrpc") != "2.0":
            return _error(answer_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            return None  # a response; this server sends no requests, so there is nothing to match
        if not isinstance(method, str):
            return _error(answer_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        if has_id and not _valid_id(msg_id):
            return _error(None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
        if not has_id:
            return None  # a notification (initialized, cancelled, anything else): never answered
        try:
            result = self.dispatch(method, _object(message.get("params"), "params"))
        except RpcError as exc:
            return _error(msg_id, exc.code, exc.message)
        except Exception as exc:  # a bug must cost one answer, not the connection
            return _error(msg_id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}

    def dispatch(self, method: str, params: dict) -> dict:
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            cursor = params.get("cursor")
            if cursor is not None and not isinstance(cursor, str):
                raise RpcError(INVALID_PARAMS, 'Invalid params: "cursor" must be a string')
            return {"tools": [tool.TOOL]}
        if method == "tools/call":
            return self.call_tool(params)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method[:100]}")

    def initialize(self, params: dict) -> dict:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion", a string')
        self.version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]

        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "lichhook", "title": "lichhook waits", "version": __version__},
            "instructions": INSTRUCTIONS,
        }

    def call_tool(self, params: dict) -> dict:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: tools/call needs "name", a string')
        if name != tool.NAME:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown tool {name[:100]!r}; the only tool is {tool.NAME}")
        arguments = _object(params.get("arguments"), "arguments")
        structured = PROTOCOL_VERSIONS.index(self.version) >= PROTOCOL_VERSIONS.index(STRUCTURED_SINCE)
        return tool.call(arguments, self.waits_dir, structured)


def _object(value: object, name: str) -> dict:
    """``value``, the member ``name`` of a request, which must be an object when given."""
    if value is None:  # absent or null: none given
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f'Invalid params: "{name}" must be an object')
    return value


def _error(msg_id: object, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def encode(answer: dict) -> str:
    """One answer as a line of JSON, its id written as the request gave it."""
    msg_id = answer["id"]
    if not isinstance(msg_id, Number):
        return json.dumps(answer)
    rest = json.dumps({k: v for k, v in answer.items() if k not in ("jsonrpc", "id")})
    return f'{{"jsonrpc": "2.0", "id": {msg_id.text}, {rest[1:]}'


def serve(stdin: BinaryIO, stdout: BinaryIO, server: Server) -> None:
    while True:
        try:
            line = read_line(stdin)  # one over MAX_BYTES is skipped to its end and refused
        except PayloadError:
            answer: dict | None = _error(None, INVALID_REQUEST, f"Invalid Request: a message may be at most {MAX_BYTES} bytes")
        else:
            if not line:
                return
            if not line.strip():
                continue  # a blank line between messages
            answer = server.handle_line(line.strip())
        if answer is None:
            continue
        # ASCII: a lone surrogate escaped in a request (an id, a method name) is echoed as
        # the same escape, where encoding it as UTF-8 would fail and end the server.
        try:
            text = encode(answer)
        except (TypeError, ValueError) as exc:  # a bug must cost one answer, not the connection
            text = encode(_error(answer.get("id"), INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"))
        stdout.write(text.encode("ascii") + b"\n")
        stdout.flush()


def main(argv: list) -> int:
    waits_dir = None
    args = list(argv)

    usage = USAGE.format(python=python_word())
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(usage)
        return 0
    if args[:1] == ["--waits-dir"] and len(args) == 2:
        waits_dir = args[1]
    elif len(args) == 1 and args[0].startswith("--waits-dir="):
        waits_dir = args[0].partition("=")[2]
    elif args:
        sys.stderr.write(f"lichhook mcp: unexpected argument {args[0][:40]!r}\n\n{usage}")
        return 2
    # install may replace the archive while a harness keeps this server running for days:
    # later imports come from the archive as it was at start (lichhook.snapshot).

    hold()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # stdout carries the protocol alone: anything printed by mistake goes to stderr.
    sys.stdout = sys.stderr
    try:
        serve(stdin, stdout, Server(waits_dir))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0
