"""The ``claude_code_wait`` tool: its description and input schema, and one call of it."""

from __future__ import annotations

import json

from lichhook.ids import BadId, wait_session_id
from lichhook.waits.api import refusal, run_op
from lichhook.waits.hooks.text import TOOL_NAME as NAME
from lichhook.waits.rules import ARGUMENTS as OP_ARGUMENTS
from lichhook.waits.rules import FAMILY_MAX, NOTE_MAX, OPS, REQUIRED, TAKES, WHAT_MAX

ARGUMENTS = ("op", "by", "session", *OP_ARGUMENTS)


def _takers(argument: str) -> str:
    """Which ops take ``argument`` and whether they must: ``add only (required)``."""
    ops = [op for op, taken in TAKES.items() if argument in taken]
    which = f"{ops[0]} only" if len(ops) == 1 else ", ".join(ops)
    return f"{which} ({'required' if argument in REQUIRED else 'optional'})"


DESCRIPTION = (
    "Record what this session is waiting for (a reply from another agent, a CI run, a review), "
    "so the turn cannot end with the wait forgotten. Waits are kept under your name (by: who or "
    "who@node) and bound to your session; pass the session id your SessionStart hook gave you. "
    "Ops: add (what, optional family) opens a wait and returns its id; list shows your open waits; "
    "watched (id, optional note) says a watcher now watches it; said (id, optional note) says you "
    "told the operator about it; done (id) closes it; adopt takes your name over for this session "
    "(after /clear, or when another session held it) and returns its open waits. A refused call "
    "answers isError with a sentence saying why and what to do."
)

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "op": {
            "type": "string",
            "enum": list(OPS),
            "description": f"{', '.join(OPS[:-1])} or {OPS[-1]}.",
        },
        "by": {
            "type": "string",
            "description": "Your name: 'who' (this machine) or 'who@node'. 1-64 letters, digits, '_', '-', '.'.",
        },
        "session": {
            "type": "string",
            "description": "Your current session id, exactly as the SessionStart hook gave it.",
        },
        "what": {
            "type": "string",
            "minLength": 1,
            "maxLength": WHAT_MAX,
            "description": f"{_takers('what')}: what you are waiting for, 1-{WHAT_MAX} characters.",
        },
        "family": {
            "type": "string",
            "maxLength": FAMILY_MAX,
            "description": f"{_takers('family')}: the event family the wait ends on, e.g. 'ci.build'.",
        },
        "id": {
            "type": "string",
            "description": f"{_takers('id')}: the wait id, e.g. 'w1' (list shows them).",
        },
        "note": {
            "type": "string",
            "maxLength": NOTE_MAX,
            "description": f"{_takers('note')}: who watches, or what you told the operator.",
        },
    },
    "required": ["op", "by", "session"],
    "additionalProperties": False,
}

TOOL = {
    "name": NAME,
    "title": "Waits of this session",
    "description": DESCRIPTION,
    "inputSchema": INPUT_SCHEMA,
    "annotations": {
        "title": "Waits of this session",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    },
}


def _problem(arguments: dict) -> str | None:
    """Why ``arguments`` do not fit the schema in a way run_op would not explain itself.

    The session comes first, as in run_op: whatever else is wrong, a bad session id is
    what the caller hears about.
    """
    if arguments.get("session") is None:
        return "session is required: the session id your SessionStart hook gave you"
    try:
        wait_session_id(arguments["session"])
    except BadId as exc:
        return str(exc)
    unknown = sorted(k for k in arguments if k not in ARGUMENTS)
    if unknown:
        shown = ", ".join(repr(k[:40]) for k in unknown[:5])
        return f"unknown argument {shown}; {NAME} takes {', '.join(ARGUMENTS)}"
    if arguments.get("op") is None:
        return f"op is required: one of {', '.join(OPS)}"
    if arguments.get("by") is None:
        return "by is required: your name, such as 'reviewer' or 'reviewer@myhost'"
    return None


def call(arguments: dict, waits_dir: str | None = None, structured: bool = True) -> dict:
    """The tools/call result for ``arguments``: the answer as text, isError when refused."""
    problem = _problem(arguments)
    if problem:
        answer = refusal(arguments.get("op"), problem)
    else:
        answer = run_op(waits_dir=waits_dir, **arguments)  # _problem let through run_op's own arguments alone
    result: dict = {"content": [{"type": "text", "text": json.dumps(answer)}], "isError": not answer.get("ok")}
    if structured:
        result["structuredContent"] = answer
    return result
