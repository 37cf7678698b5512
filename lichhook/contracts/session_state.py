"""session-state: ``POST /hook``, what the agent in a card is doing.

Body ``{"session_id", "state", "tool"?, "detail"?, "reason"?}``. lich
(``parseHookRequest``) needs a ``session_id`` and a ``state`` that is exactly one of
``busy``, ``done``, ``waiting``, ``idle`` and, from the contract that added it,
``compacting`` (an older lich answers that one 400); it trims ``tool``, ``detail`` and ``reason``
and cuts each to 120 runes (never refusing a long one), drops ``detail`` without a
``tool`` and ``reason`` on any state but ``waiting``. Unknown fields are ignored, so
lichhook sends ``provider_session_id`` alongside (a newer lich uses it to tell a nested
agent CLI's reports from the card's own). Wire details: docs/session-state.md.
"""

from lichhook.contracts import STATE, Outgoing, Rejected, alongside, decode, encode, lich_trim, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

    from lichhook.contracts.inputs import Asked, Happened

NAME = STATE
PATH = "/hook"
FIELDS = ("session_id", "state", "tool", "detail", "reason")
STATES = ("busy", "done", "waiting", "idle", "compacting")
TEXT_LIMIT = 120  # runes of tool, detail and reason (hookTextLimit)


def body(session_id: str, state: str, tool: object = "", detail: object = "", reason: object = "",
         provider_session_id: str = "") -> bytes:
    """What lichhook sends: the state; a tool and its detail, and a waiting reason, each on
    one line, trimmed and cut to 120 code points, only where lich would keep them."""
    if state not in STATES:
        raise ValueError(f"state {state!r} is not one of {', '.join(STATES)}")
    fields = {"session_id": session_id, "state": state}
    tool = one_line(tool, TEXT_LIMIT)
    if tool:
        fields["tool"] = tool
        detail = one_line(detail, TEXT_LIMIT)
        if detail:
            fields["detail"] = detail
    if state == "waiting":
        reason = one_line(reason, TEXT_LIMIT)
        if reason:
            fields["reason"] = reason
    return encode(fields, provider_session_id)


def outgoing(report: "Asked", session_id: str, event: "Happened") -> Outgoing:
    """The session-state of ``report``; ValueError for a state lich does not take."""
    fields = report.fields
    data = body(session_id, fields.get("state", ""), fields.get("tool", ""), fields.get("detail", ""),
                fields.get("reason", ""), alongside(report))
    return Outgoing(f"{NAME} {fields.get('state')}", PATH, data)


def clamp(text: str) -> str:
    """lich's cut: at most TEXT_LIMIT runes."""
    return text[:TEXT_LIMIT]


def parse(raw: bytes) -> "Dict[str, str]":
    """The report lich applies for ``raw``, normalised, or Rejected with its reason."""
    fields = decode(raw, FIELDS)
    state = fields["state"]
    if state not in STATES:
        raise Rejected("state must be one of " + ", ".join(STATES))
    tool = clamp(lich_trim(fields["tool"]))
    detail = clamp(lich_trim(fields["detail"])) if tool else ""
    reason = clamp(lich_trim(fields["reason"])) if state == "waiting" else ""
    return dict(fields, tool=tool, detail=detail, reason=reason)
