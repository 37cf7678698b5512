"""session-title: ``POST /session-title``, the name a card shows.

Body ``{"session_id", "title"}``. lich (``parseSessionTitle``) needs a ``session_id`` and
a title that is not blank once trimmed; it sets no length limit and applies the title
only while the user has not renamed the card. lichhook's client sends the first line,
trimmed and cut to 80 code points, and only when it differs from the last title it sent
for that card (``lichhook.titles``). Wire details: docs/session-title.md.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.contracts import Rejected, decode, encode, lich_trim, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

NAME = "session-title"
PATH = "/session-title"
FIELDS = ("session_id", "title")
TITLE_LIMIT = 80  # code points; lich's own clients cut here too


def text(value: object) -> str:
    """The title lichhook sends for ``value``: "" when there is none to send."""
    return one_line(value, TITLE_LIMIT)


def body(session_id: str, title: str, provider_session_id: str = "") -> bytes:
    """What lichhook sends; ``title`` must already be ``text()``'s and not empty."""
    if not title:
        raise ValueError("a title must not be empty")
    return encode({"session_id": session_id, "title": title}, provider_session_id)


def parse(raw: bytes) -> "Dict[str, str]":
    """The title lich applies for ``raw``, or Rejected with its reason."""
    fields = decode(raw, FIELDS)
    if not fields["session_id"]:
        raise Rejected("session_id is required")
    title = lich_trim(fields["title"])
    if not title:
        raise Rejected("title is required and must not be blank")
    return {"session_id": fields["session_id"], "title": title}
