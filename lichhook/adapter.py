"""What an adapter is: the base classes, the event it is given and the reports it gives,
and how the host checks an adapter before trusting it.

An adapter turns one harness event into reports for lich. ``Event`` is what the hook
received; ``Report`` is one request for lich, without the card's session id (the report
path adds it). The typed contract a third-party adapter follows is written down in
``lichhook.hookspecs`` (``EventAdapter``, ``SessionIdAdapter``); this module holds the
runtime classes, imported by every hook.
"""

from lichhook.contracts import START, STATE, TITLE, TOUCHED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Container, Dict, Iterable, List, Mapping, Optional

PROVIDER_PATTERN = "^[a-z][a-z0-9_-]{0,31}$"
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_PROVIDER_CHARS = _LOWER | frozenset("0123456789_-")

class Report:
    """One report for lich, as an adapter asks for it.

    Build one with ``Report.start``, ``Report.state``, ``Report.title`` or
    ``Report.touched``. ``provider_session_id`` is the harness's own session id: required
    for a start, sent alongside the others when given (lich uses it to tell the card's
    own conversation from an agent CLI nested inside it). The report path adds the card's
    session id and the provider, applies lichhook's rules for text and ids, and sends a
    title only when it differs from the last one it sent for the card.
    """

    __slots__ = ("contract", "fields", "provider_session_id", "placeholder")

    def __init__(self, contract: str, fields: "Optional[Dict[str, Any]]" = None,
                 provider_session_id: "Optional[str]" = None, placeholder: bool = False) -> None:
        self.contract = contract
        self.fields = dict(fields or {})
        self.provider_session_id = provider_session_id
        self.placeholder = placeholder

    @classmethod
    def start(cls, provider_session_id: "Optional[str]") -> "Report":
        """session-start: this card runs the harness session ``provider_session_id``."""
        return cls(START, None, provider_session_id)

    @classmethod
    def state(cls, state: str, tool: object = None, detail: object = None, reason: object = None,
              provider_session_id: "Optional[str]" = None) -> "Report":
        """session-state: ``busy`` (with the ``tool`` about to run and its ``detail``),
        ``waiting`` (with the ``reason``), ``done``, ``idle`` or ``compacting``."""
        fields: "Dict[str, Any]" = {"state": state}
        for name, value in (("tool", tool), ("detail", detail), ("reason", reason)):
            if value is not None:
                fields[name] = value
        return cls(STATE, fields, provider_session_id)

    @classmethod
    def title(cls, title: object, provider_session_id: "Optional[str]" = None,
              placeholder: bool = False) -> "Report":
        """session-title: the harness's own title for the session. With ``placeholder``
        it is the harness's stand-in title: remembered as the card's, never sent, so
        only a later, different title goes out."""
        return cls(TITLE, {"title": title}, provider_session_id, placeholder)

    @classmethod
    def touched(cls, provider_session_id: "Optional[str]" = None) -> "Report":
        """session-touched: a tool may have changed files in the card's folder."""
        return cls(TOUCHED, None, provider_session_id)

    def _key(self) -> tuple:
        return (self.contract, sorted(self.fields.items(), key=lambda item: item[0]),
                self.provider_session_id, self.placeholder)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(repr(self._key()))

    def __repr__(self) -> str:
        extra = f", provider_session_id={self.provider_session_id!r}" if self.provider_session_id else ""
        if self.placeholder:
            extra += ", placeholder=True"
        return f"Report({self.contract!r}, {self.fields!r}{extra})"


class Event:
    """One harness event, as the hook received it.

    ``name`` is the event word the hook was registered with (``PreToolUse``,
    ``session.updated``...), ``payload`` the JSON object on stdin, ``environ`` the
    process environment. ``last_title`` is the last title lichhook gave lich for this
    card (None when none): an adapter can skip reading a transcript once there is one.
    """

    __slots__ = ("provider", "name", "payload", "environ", "_last_title")

    def __init__(self, provider: str, name: str, payload: "Mapping[str, Any]", environ: "Mapping[str, str]",
                 last_title: "Optional[str]" = None, known: bool = False) -> None:
        self.provider = provider
        self.name = name
        self.payload = payload
        self.environ = environ
        self._last_title = (last_title,) if known else None

    @property
    def last_title(self) -> "Optional[str]":
        if self._last_title is None:
            from lichhook import titles

            try:
                self._last_title = (titles.last(self.environ),)
            except OSError:
                self._last_title = (None,)
        return self._last_title[0]

    def __repr__(self) -> str:
        return f"<Event {self.provider} {self.name}>"


class Adapter:
    """Base class for harness adapters.

    A subclass sets ``provider`` and ``session_id`` (today's surface: what the bare
    ``<provider>`` command reports), and may add ``reports`` for named events. The
    default ``reports`` is the bare command's: a session-start with ``session_id``.
    """

    provider: str = ""
    verdict: str = ""  # what the bare command prints
    verdicts: "Mapping[str, str]" = {}  # event -> what `<provider> <event>` prints
    events: "Optional[Container[str]]" = None  # the events `reports` takes; None: any
    sample: "Mapping[str, Any]" = {}

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        raise NotImplementedError

    def reports(self, event: Event) -> "Iterable[Report]":
        return start_only(self, event)

    def life(self, folder: str) -> "List[tuple]":
        """A session's life, for ``demo``: (event, payload) pairs in order; files the
        payloads name are written under ``folder``. None to show: []."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} provider={self.provider!r}>"


def start_only(adapter: object, event: Event) -> "List[Report]":
    """What an adapter with only today's surface reports for any event: its session id, as
    a session-start."""
    sid = adapter.session_id(event.payload, event.environ)  # type: ignore[attr-defined]
    return [] if sid is None else [Report.start(sid)]


def reports_of(adapter: object, event: Event, bare: bool) -> "Optional[List[Report]]":
    """The reports ``adapter`` makes of ``event`` (None: not an event it takes): for the
    bare command (or an adapter with only today's surface), its session id as a
    session-start."""
    if bare or not takes_events(adapter):
        return start_only(adapter, event)
    events = getattr(adapter, "events", None)
    if events is not None and event.name not in events:
        return None
    return list(adapter.reports(event))  # type: ignore[attr-defined]


def takes_events(adapter: object) -> bool:
    """Whether ``adapter`` makes reports of named events itself; one with only today's
    surface (a ``session_id``, perhaps on the Adapter base class) does not."""
    reports = getattr(type(adapter), "reports", None)
    return callable(getattr(adapter, "reports", None)) and reports is not Adapter.reports


def verdict_of(adapter: object, event: "Optional[str]") -> str:
    """What the hook prints for ``event`` (None: the bare command) with ``adapter``."""
    value: object = ""
    if event is None or not takes_events(adapter):
        value = getattr(adapter, "verdict", "")
    else:
        verdicts = getattr(adapter, "verdicts", None)
        if verdicts is not None and hasattr(verdicts, "get"):
            value = verdicts.get(event, "")
    return value if isinstance(value, str) else ""


def provider_id_ok(provider: object) -> bool:
    """True when ``provider`` matches PROVIDER_PATTERN (checked without ``re``, which
    the no-op path must not import)."""
    return (
        isinstance(provider, str)
        and 1 <= len(provider) <= 32
        and provider[0] in _LOWER
        and all(c in _PROVIDER_CHARS for c in provider)
    )


def adapter_problem(adapter: object, reserved: "Container[str]" = ()) -> "Optional[str]":
    """Say what is wrong with ``adapter``, or return None when the host can use it;
    ``reserved``: the words the command line takes for itself (``lichhook.cli.WORDS``)."""
    provider = getattr(adapter, "provider", None)
    if not provider_id_ok(provider):
        return f"provider {provider!r} must match {PROVIDER_PATTERN}"
    if provider in reserved:
        return f"provider {provider!r} is a lichhook subcommand; choose another id"
    if not callable(getattr(adapter, "session_id", None)):
        return f"adapter for {provider!r} has no callable session_id(payload, environ)"
    if not isinstance(getattr(adapter, "verdict", ""), str):
        return f"adapter for {provider!r} has a verdict that is not a string"
    reports = getattr(adapter, "reports", None)
    if reports is not None and not callable(reports):
        return f"adapter for {provider!r} has a reports that is not callable"
    return None
