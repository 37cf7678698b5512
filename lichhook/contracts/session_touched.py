"""session-touched: ``POST /session-touched``, files in a card's folder may have changed.

Body ``{"session_id"}``; lich (``parseSessionTouched``) needs only that and ignores any
other field, then refreshes the card's git status. lichhook sends it after a tool that
changes files, with ``provider_session_id`` alongside. Wire details:
docs/session-touched.md.
"""

from lichhook.contracts import TOUCHED, Outgoing, alongside, decode, encode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

    from lichhook.contracts.inputs import Asked, Happened

NAME = TOUCHED
PATH = "/session-touched"
FIELDS = ("session_id",)


def body(session_id: str, provider_session_id: str = "") -> bytes:
    """What lichhook sends."""
    return encode({"session_id": session_id}, provider_session_id)


def outgoing(report: "Asked", session_id: str, event: "Happened") -> Outgoing:
    """The session-touched of ``report``."""
    return Outgoing(NAME, PATH, body(session_id, alongside(report)))


def parse(raw: bytes) -> "Dict[str, str]":
    """What lich applies for ``raw``, or Rejected with its reason."""
    return decode(raw, FIELDS)
