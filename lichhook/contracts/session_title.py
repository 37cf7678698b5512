"""session-title: ``POST /session-title``, the name a card shows.

Body ``{"session_id", "title"}``. lich (``parseSessionTitle``) needs a ``session_id`` and
a title that is not blank once trimmed; it sets no length limit and applies the title
only while the user has not renamed the card. lichhook's client sends the first line,
trimmed and cut to 80 code points, and only when it differs from the last title it sent
for that card (``lichhook.titles``). Wire details: docs/session-title.md.
"""

from lichhook.contracts import TITLE, Outgoing, Rejected, alongside, decode, encode, lich_trim, one_line, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict

    from lichhook.contracts.inputs import Asked, Happened

NAME = TITLE
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


def outgoing(report: "Asked", session_id: str, event: "Happened") -> Outgoing:
    """The session-title of ``report``: not sent when it has no text or is the card's
    last title; the harness's placeholder is not sent but becomes the card's last, so
    that only a later, different title goes out."""
    title = text(report.fields.get("title"))
    if not title:
        return Outgoing(f"{NAME}: no title text", PATH, None)
    if title == event.last_title:
        return Outgoing(f"{NAME}: unchanged", PATH, None)
    if report.placeholder:
        return Outgoing(f"{NAME}: {shown(title)} is the harness's placeholder, kept as the card's", PATH, None, title)
    return Outgoing(f"{NAME} {shown(title)}", PATH, body(session_id, title, alongside(report)), title)


def parse(raw: bytes) -> "Dict[str, str]":
    """The title lich applies for ``raw``, or Rejected with its reason."""
    fields = decode(raw, FIELDS)
    title = lich_trim(fields["title"])
    if not title:
        raise Rejected("title is required and must not be blank")
    return dict(fields, title=title)
