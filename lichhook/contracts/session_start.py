"""session-start: ``POST /session-start``, which harness conversation runs in a card.

Body ``{"session_id", "provider_session_id", "provider"}``. lich (``parseSessionStart``)
needs a ``session_id`` and a ``provider_session_id``; an empty ``provider`` means
``claude``; it refuses an id holding any of ``/ \\ * ? [ ]`` or ``..`` (it pastes ids
into file globs) and a provider missing from its registry. lichhook's client is
stricter about the id (``lichhook.contracts.provider_session_id_problem``). Wire details:
docs/session-start.md.
"""

from lichhook.contracts import START, Outgoing, Rejected, decode, encode, lich_id_problem, provider_session_id_problem, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

    from lichhook.contracts.inputs import Asked, Happened

NAME = START
PATH = "/session-start"
FIELDS = ("session_id", "provider_session_id", "provider")

# lich's provider registry (internal/providers/providers.go), in its order.
PROVIDERS = ("claude", "codex", "antigravity", "opencode", "omp", "crush", "cursor", "kiro")


def body(session_id: str, provider_session_id: str, provider: str) -> bytes:
    """What lichhook sends: exactly the three keys (never the retired ``claude_session_id``)."""
    return encode({"session_id": session_id, "provider_session_id": provider_session_id, "provider": provider})


def outgoing(report: "Asked", session_id: str, event: "Happened") -> Outgoing:
    """The session-start of ``report``: its harness session id is required, and must be
    one lichhook sends (``provider_session_id_problem``)."""
    sid = report.provider_session_id
    if sid is None:
        return Outgoing("no session id in the payload", PATH, None)
    problem = provider_session_id_problem(sid)
    if problem:
        return Outgoing(f"{NAME}: {problem}", PATH, None)
    return Outgoing(f"{NAME} {shown(sid)}", PATH, body(session_id, sid, event.provider))


def parse(raw: bytes) -> "Dict[str, str]":
    """The report lich stores for ``raw``, normalised, or Rejected with its reason."""
    fields = decode(raw, FIELDS)
    provider = fields["provider"] or "claude"
    if not fields["provider_session_id"]:
        raise Rejected("provider_session_id is required")
    problem = lich_id_problem(fields["provider_session_id"])
    if problem:
        raise Rejected(f"provider_session_id must be an opaque id ({problem})")
    if provider not in PROVIDERS:
        raise Rejected("provider must be a registered provider id")
    return dict(fields, provider=provider)
