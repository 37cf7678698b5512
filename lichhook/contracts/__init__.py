"""lich's hook contracts, one module per endpoint, and what they share.

| contract | module | endpoint |
|---|---|---|
| session-start | ``session_start`` | ``POST /session-start`` |
| session-state | ``session_state`` | ``POST /hook`` |
| session-title | ``session_title`` | ``POST /session-title`` |
| session-touched | ``session_touched`` | ``POST /session-touched`` |

Each module owns its endpoint: the path, what lichhook's client sends for an adapter's
report (``outgoing``, which builds the ``body``) and lich's own parse of a body
(``parse``), which the stand-in applies. What every endpoint shares lives here: the
contracts' names (the one spelling each), the body size lich reads, the release
lichhook names in ``X-Lich-Plugin``, lich's notion of white space, lichhook's rule for
free text, and the rules for the harness session id a report carries (lich's
``opaqueID``, and lichhook's stricter one).
The report path imports this on every hook, so it stays small and imports only
``quickjson``, which reading the payload has loaded before any report is made.
"""

from lichhook.coldstart import quickjson as json  # json's results without its import (see there)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Dict, Optional, Sequence

    from lichhook.contracts.inputs import Asked, Happened

# The lich-plugin release X-Lich-Plugin names when install wrote no claim beside the
# archive (lichhook.client.claimed): release.claim(None, ...), inside the range of every
# lich measured (docs/version.md).
RELEASE = "0.13.2"

# lich reads at most this many bytes of a body (hookBodyLimit) and cuts the rest.
BODY_LIMIT = 4096

# The contracts' names, as reports and the stand-in carry them; each one's module is
# its name with "_" for "-" (``module``).
START, STATE, TITLE, TOUCHED = "session-start", "session-state", "session-title", "session-touched"
NAMES = (START, STATE, TITLE, TOUCHED)

# Go's unicode.IsSpace, which lich's strings.TrimSpace strips (Python's str.strip also
# takes U+001C..U+001F, which Go keeps).
SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
         "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


# lich's opaqueID refuses these, and ".." anywhere (it pastes ids into file globs).
_LICH_FORBIDDEN = frozenset("/\\*?[]")


class Rejected(ValueError):
    """A body lich answers 400 to; the message is the reason, in the words of lich's fixtures."""


def lich_id_problem(value: object) -> "str | None":
    """Why lich itself would refuse ``value`` as a ``provider_session_id``, or None.

    lich's ``opaqueID``: no ``/ \\ * ? [ ]`` and no ``..``. It takes control characters,
    spaces and anything else (lichhook does not send those: provider_session_id_problem).
    """
    if not isinstance(value, str):
        return f"id is {type(value).__name__}, not a string"
    if not value:
        return "id is empty"
    if ".." in value:
        return "id contains '..'"
    for ch in value:
        if ch in _LICH_FORBIDDEN:
            return f"id contains {ch!r}"
    return None


def provider_session_id_problem(value: object) -> "str | None":
    """Why lichhook does not send ``value`` as a ``provider_session_id``, or None.

    lich's own rule, and two of lichhook's: no control character (an id that a
    terminal, a log line or a file glob would show differently from the harness), and
    valid Unicode: JSON can escape a lone surrogate (``"\\ud800"``), which lich's decoder
    turns into U+FFFD, so lich would hold an id the harness does not have.
    """
    problem = lich_id_problem(value)
    if problem is not None or not isinstance(value, str):
        return problem
    for ch in value:
        if ch < " " or "\x7f" <= ch < "\xa0":  # C0, DEL, C1
            return f"id contains control character U+{ord(ch):04X}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # only a surrogate cannot be encoded
        return f"id is not valid Unicode (lone surrogate U+{ord(value[exc.start]):04X})"
    return None


def module(name: str) -> "ModuleType":
    """The module of the contract called ``name`` (one of NAMES), or ValueError."""
    if name not in NAMES:
        raise ValueError(f"unknown contract {name!r}; lich's are {', '.join(NAMES)}")
    from importlib import import_module

    return import_module("lichhook.contracts." + name.replace("-", "_"))


def by_path(path: str) -> "ModuleType | None":
    """The module of the contract served at ``path``, or None."""
    for name in NAMES:
        found = module(name)
        if found.PATH == path:
            return found
    return None


class Outgoing:
    """What the report path does with one report: ``what`` names it in the debug line,
    ``path`` is its endpoint, ``body`` what is sent (None: nothing is, and ``what`` says
    why), and ``title`` the card title it sets, if any: recorded as the card's last once
    lich takes the body, or at once when the body is None (the harness's placeholder)."""

    __slots__ = ("what", "path", "body", "title")

    def __init__(self, what: str, path: str, body: "Optional[bytes]", title: "Optional[str]" = None) -> None:
        self.what = what
        self.path = path
        self.body = body
        self.title = title


def outgoing(report: "Asked", session_id: str, event: "Happened") -> Outgoing:
    """What is sent for ``report`` (an adapter's, of ``event``) to the lich card
    ``session_id``: its contract's module builds it, and a body lich would cut (over
    BODY_LIMIT) is not sent, nor its title kept as the card's. ValueError for an unknown
    contract."""
    made: Outgoing = module(report.contract).outgoing(report, session_id, event)
    if made.body is not None and len(made.body) > BODY_LIMIT:
        return Outgoing(f"{made.what}: body of {len(made.body)} bytes exceeds lich's {BODY_LIMIT}", made.path, None)
    return made


def alongside(report: "Asked") -> str:
    """The harness's session id to send alongside a report that does not require it:
    the report's own when lich would keep it as it is, else none (the report still counts)."""
    sid = report.provider_session_id
    return sid if sid is not None and provider_session_id_problem(sid) is None else ""


def shown(text: str, limit: int = 60) -> str:
    """``text`` for a debug line: quoted, and cut so a long one cannot flood stderr."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def encode(fields: "Dict[str, str]", provider_session_id: str = "") -> bytes:
    """A body as lichhook sends every one: compact JSON, ASCII only, keys in order, the
    harness's session id last when there is one to send alongside."""
    if provider_session_id:
        fields = dict(fields, provider_session_id=provider_session_id)
    return json.dumps(fields, separators=(",", ":")).encode("ascii")


def decode(raw: bytes, fields: "Sequence[str]") -> "Dict[str, str]":
    """The string fields lich's Go decoder reads from ``raw``, in the order of ``fields``,
    or Rejected: each contract's ``parse`` starts here, and every one requires the
    ``session_id`` (the card) first."""
    from lichhook.contracts.gojson import GoJSONError, decode_struct

    try:
        decoded = decode_struct(raw, fields)
    except GoJSONError:
        raise Rejected("body must be a JSON object") from None
    if not decoded["session_id"]:
        raise Rejected("session_id is required")
    return decoded


def lich_trim(text: str) -> str:
    """strings.TrimSpace."""
    return text.strip(SPACE)


def one_line(value: object, limit: int) -> str:
    """lichhook's rule for free text (a tool, a detail, a reason, a title): the first line
    that holds anything, control characters as spaces, trimmed as lich trims, cut to
    ``limit`` code points (where lich cuts) and trimmed again; "" for anything else.
    A lone surrogate (JSON can escape one) becomes U+FFFD, as lich would store it."""
    if not isinstance(value, str):
        return ""
    for line in value.splitlines():
        if line.strip(SPACE):
            break
    else:
        return ""
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in line)
    if not line.isprintable():
        line = "".join(" " if c < " " or "\x7f" <= c < "\xa0" else c for c in line)
    return line.strip(SPACE)[:limit].rstrip(SPACE)
