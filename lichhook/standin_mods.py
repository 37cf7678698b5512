"""lich's mod endpoints as the stand-in serves them: ``/mod/commands``, ``/mod/acks``,
``/mod/usage``, ``/mod/status`` and ``/mod/answer`` (lich ``docs/hooks/mod-*.md`` and
``internal/terminal/mod*.go``; docs/mods-standin.md says what is kept and what is not).

A Claude Code mod long-polls ``/mod/commands``; a poll is what attaches it, and lich
queues a command only for a session whose mod polled within the last 30 seconds (the
25 second hold plus 5 of grace). ``Mods`` is that queue; the parse functions are lich's
rules for each body, pure, raising ``contracts.Rejected`` with lich's reason.
"""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import datetime
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from lichhook.contracts import BODY_LIMIT, Rejected
from lichhook.contracts.gojson import go_utf8

POLL_WAIT = 25.0  # modPollWait: how long an empty poll is held
GRACE = 5.0  # modRepollGrace: the time a live mod takes to poll again
ACK_LIMIT = 64 * 1024  # modAckBodyLimit: acks and answers (an ask's answer needs the room)
QUESTION_LIMIT = 8 * 1024  # modQuestionLimit
TEXT_LIMIT = 120  # hookTextLimit: an ack's error, in runes
KINDS = ("prompt", "abort", "model", "effort", "command", "ask")
OWN_FIELDS = {"prompt": ("text", "notification"), "abort": (), "model": ("model",), "effort": ("effort",),
              "command": ("name", "args"), "ask": ("question",)}
UNANSWERED = ("blank", "refusal", "error")
# The commands a person types at ``listen`` (parse_line), as its help and its errors name them.
FORMS = "prompt <text> | abort | model [<name>] | effort [<level>] | command <name> [<args>] | ask <question>"
DETACHED = ("the session cannot take commands: no mod is polling from it (a Claude Code mod attaches "
            "by polling /mod/commands; it must have polled within the last 30 seconds)")


def _object(raw: bytes, what: str) -> Dict[str, Any]:
    """A JSON object as Go's json.Unmarshal into a struct sees it: keys matched without
    regard to case (the last one wins), invalid UTF-8 as U+FFFD, ``null`` as nothing."""
    def fold(pairs: List[Any]) -> Dict[str, Any]:
        return {key.lower(): value for key, value in pairs}

    def no_constant(name: str) -> None:
        raise ValueError(name)

    try:
        value = json.loads(go_utf8(raw), object_pairs_hook=fold, parse_constant=no_constant)
    except (ValueError, RecursionError):
        raise Rejected(f"invalid {what} body: not JSON") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Rejected(f"invalid {what} body: not a JSON object")
    return value


_NAMED = {"string": "a string", "bool": "a boolean", "int": "a whole number", "number": "a number", "list": "a list",
          "object": "an object"}
_TYPES = {"string": (str,), "bool": (bool,), "int": (int,), "number": (int, float), "list": (list,), "object": (dict,)}


def _field(obj: Dict[str, Any], name: str, kind: str, what: str) -> Any:
    """``obj[name]`` when it is of Go type ``kind`` (None when absent or null), else
    Rejected, as Unmarshal refuses a value of another type."""
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) and kind != "bool" or not isinstance(value, _TYPES[kind]):
        raise Rejected(f"invalid {what} body: {name} is not {_NAMED[kind]}")
    return value


def _runes(text: str, limit: int) -> str:
    return text[:limit]


def parse_ack(raw: bytes) -> Dict[str, Any]:
    """lich's parseModAck: session_id, id and one of the six kinds; ``ok`` missing is
    false; ``error`` trimmed and cut to 120 runes; ``answer`` only on an ok ``ask``."""
    obj = _object(raw, "mod ack")
    session, ident = _field(obj, "session_id", "string", "mod ack"), _field(obj, "id", "string", "mod ack")
    kind, ok = _field(obj, "kind", "string", "mod ack"), bool(_field(obj, "ok", "bool", "mod ack"))
    error = (_field(obj, "error", "string", "mod ack") or "").strip()
    answer = _field(obj, "answer", "string", "mod ack") or ""
    if not session:
        raise Rejected("mod ack missing session_id")
    if not ident:
        raise Rejected("mod ack missing id")
    if kind not in KINDS:
        raise Rejected(f"mod ack has unknown kind {json.dumps(kind or '')}")
    if answer and not (kind == "ask" and ok):
        raise Rejected("mod ack carries an answer, which only an ok ask may")
    return {"session_id": session, "id": ident, "kind": kind, "ok": ok, "error": _runes(error, TEXT_LIMIT),
            "answer": answer}


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)\Z")


def _rfc3339(text: str) -> bool:
    """Go's time.Parse(time.RFC3339, text) succeeds."""
    try:
        return bool(_RFC3339.match(text)) and bool(datetime.fromisoformat(text[:19]))
    except ValueError:
        return False


def parse_usage(raw: bytes) -> Dict[str, Any]:
    """lich's parseModUsage: session_id, conversation_id, a positive whole
    context.window, whole tokens >= 0 and percent 0..100, rate limits with a kind, a
    percent_used >= 0 and an RFC 3339 resets_at, a cost >= 0."""
    what = "mod usage"
    obj = _object(raw, what)
    session, conversation = _field(obj, "session_id", "string", what), _field(obj, "conversation_id", "string", what)
    context = _field(obj, "context", "object", what) or {}  # its keys folded by _object, as every object's
    window, tokens = _field(context, "window", "int", what) or 0, _field(context, "tokens", "int", what)
    percent, cost = _field(context, "percent", "int", what), _field(obj, "cost_usd", "number", what)
    limits: List[Dict[str, Any]] = []
    for item in _field(obj, "rate_limits", "list", what) or []:
        if item is not None and not isinstance(item, dict):
            raise Rejected(f"invalid {what} body: a rate limit is not an object")
        item = item or {}
        limits.append({"kind": _field(item, "kind", "string", what) or "",
                       "percent_used": _field(item, "percent_used", "number", what) or 0,
                       "resets_at": _field(item, "resets_at", "string", what) or ""})
    if not session:
        raise Rejected("mod usage missing session_id")
    if not conversation:
        raise Rejected("mod usage missing conversation_id")
    if window <= 0:
        raise Rejected(f"mod usage context.window must be positive, got {window}")
    if tokens is not None and tokens < 0:
        raise Rejected("mod usage context.tokens is negative")
    if percent is not None and not 0 <= percent <= 100:
        raise Rejected(f"mod usage context.percent must be 0 to 100, got {percent}")
    for limit in limits:
        if not limit["kind"]:
            raise Rejected("mod usage rate limit missing kind")
        if limit["percent_used"] < 0:
            raise Rejected(f"mod usage rate limit {limit['kind']} percent_used is negative")
        if limit["resets_at"] and not _rfc3339(limit["resets_at"]):
            raise Rejected(f"mod usage rate limit {limit['kind']} resets_at is not RFC 3339")
    if cost is not None and cost < 0:
        raise Rejected("mod usage cost_usd is negative")
    return {"session_id": session, "conversation_id": conversation,
            "context": {"window": window, "tokens": tokens, "percent": percent}, "rate_limits": limits,
            "cost_usd": cost}


def parse_answer(raw: bytes) -> Dict[str, Any]:
    """lich's parseModAnswer: session_id, and a text that is not blank or the reason a
    turn has none (``unanswered``: blank, refusal or error)."""
    obj = _object(raw, "mod answer")
    session, text = _field(obj, "session_id", "string", "mod answer"), _field(obj, "text", "string", "mod answer")
    unanswered = _field(obj, "unanswered", "string", "mod answer") or ""
    if not session:
        raise Rejected("mod answer missing session_id")
    if unanswered:
        if unanswered not in UNANSWERED:
            raise Rejected(f"mod answer unanswered must be one of {', '.join(UNANSWERED)}")
        return {"session_id": session, "text": "", "unanswered": unanswered}
    if not (text or "").strip():
        raise Rejected("mod answer text is blank")
    return {"session_id": session, "text": text, "unanswered": ""}


class Endpoint(NamedTuple):
    name: str  # what a Report carries as its contract
    method: str
    limit: int  # bytes of the body lich reads
    parse: Optional[Callable[[bytes], Dict[str, Any]]] = None  # lich's rules for a POST's body


ENDPOINTS = {
    "/mod/commands": Endpoint("mod-commands", "GET", 0),
    "/mod/status": Endpoint("mod-status", "GET", 0),
    "/mod/acks": Endpoint("mod-acks", "POST", ACK_LIMIT, parse_ack),
    "/mod/usage": Endpoint("mod-usage", "POST", BODY_LIMIT, parse_usage),  # hookBodyLimit, as a hook's
    "/mod/answer": Endpoint("mod-answer", "POST", ACK_LIMIT, parse_answer),
}


def queueable(command: Dict[str, Any]) -> Dict[str, Any]:
    """``command`` as lich queues it (a slash command's name without its slash), or
    ValueError with lich's reason for refusing it (Service.queueModCommand's order)."""
    kind = command.get("kind")
    if kind not in KINDS:
        raise ValueError(f"unknown mod command kind {json.dumps(kind)}")
    command = {k: v for k, v in command.items() if k != "id" and v not in (None, "")}
    if kind == "command":
        name = str(command.get("name", "")).strip().lstrip("/") if "name" in command else ""
        if not name:
            raise ValueError("a command needs the name of a slash command, and none was given")
        first = name.split()[0].lstrip("/").lower()
        if first in ("model", "effort"):
            raise ValueError(f"/{first} is refused as a command: Claude Code saves what it sets as the default "
                             f"for every new session. The {first} action changes this session only")
        command["name"] = name
    stray = sorted(set(command) - {"kind"} - set(OWN_FIELDS[kind]))
    if stray:
        raise ValueError(f"{kind} command carries a field that belongs to another kind ({', '.join(stray)})")
    if any(not isinstance(v, str) for k, v in command.items() if k != "notification"):
        raise ValueError("a command's fields are strings")
    if kind == "prompt" and not command.get("text", "").strip():
        raise ValueError("prompt command has no text")
    if kind == "ask" and not command.get("question", "").strip():
        raise ValueError("ask command has no question")
    if kind == "ask" and len(command["question"].encode("utf-8")) > QUESTION_LIMIT:
        raise ValueError(f"ask command's question is over {QUESTION_LIMIT} bytes")
    note = command.get("notification")
    if note is not None and (not isinstance(note, dict) or note.get("status") not in ("completed", "waiting")
                             or not isinstance(note.get("summary"), str) or not note["summary"].strip()):
        raise ValueError("a notification has status completed or waiting, and a summary")
    return command


def parse_line(line: str) -> Dict[str, Any]:
    """A command as a person types it at ``listen``: ``prompt <text>``, ``abort``,
    ``model [<name>]``, ``effort [<level>]``, ``command <name> [<args>]``, ``ask
    <question>``. ValueError names the forms."""
    kind, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    field = {"prompt": "text", "model": "model", "effort": "effort", "ask": "question"}.get(kind)
    if field:
        return {"kind": kind, field: rest} if rest else {"kind": kind}
    if kind == "abort" and not rest:
        return {"kind": kind}
    if kind == "command":
        name, _, args = rest.partition(" ")
        return {"kind": kind, "name": name, "args": args.strip()}
    raise ValueError(f"type one of: {FORMS}")


class Mods:
    """Each session's queued commands and when its mod last polled, as lich's modQueue."""

    def __init__(self, wait: float = POLL_WAIT) -> None:
        self.wait = wait
        self.status: Dict[str, Dict[str, list]] = {}  # session -> what /mod/status answers
        self._pending: Dict[str, List[tuple]] = {}  # session -> [(queued at, command)]
        self._seen: Dict[str, float] = {}
        self._next = 0
        self._changed = threading.Condition()

    def attached(self, session: str) -> bool:
        with self._changed:
            seen = self._seen.get(session)
            return seen is not None and time.monotonic() - seen <= self.wait + GRACE

    def enqueue(self, session: str, command: Dict[str, Any]) -> Dict[str, Any]:
        """Queue ``command`` for the session's mod and return it with its id, or
        ValueError with lich's reason (an invalid command, or no mod attached)."""
        command = queueable(command)
        with self._changed:
            if not self.attached(session):
                raise ValueError(DETACHED)
            self._next += 1
            queued = dict(id=f"m{self._next}", **command)
            self._pending.setdefault(session, []).append((time.monotonic(), queued))
            self._changed.notify_all()
        return queued

    def take(self, session: str, gone: Callable[[], bool]) -> Optional[List[Dict[str, Any]]]:
        """One poll: the session's queued commands, oldest first, waiting up to
        ``wait`` for one. None when the client went away first (it drains nothing)."""
        with self._changed:
            self._seen[session] = time.monotonic()
            deadline = time.monotonic() + self.wait
            while True:
                if gone():
                    return None
                now = time.monotonic()
                fresh = [c for at, c in self._pending.pop(session, []) if now - at <= self.wait + GRACE]
                if fresh or now >= deadline:
                    return fresh
                # Short waits: a client that hangs up is noticed, as lich's request context ends.
                self._changed.wait(min(deadline - now, 0.25))

    def status_of(self, session: str) -> Dict[str, list]:
        found = self.status.get(session, {})
        return {key: list(found.get(key) or []) for key in ("owed", "open", "ready")}
