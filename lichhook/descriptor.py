"""What a harness descriptor says, and what is derived from the descriptors.

Each built-in harness has one ``Descriptor`` (``lichhook.adapters.DESCRIPTORS``), the
only place that names its provider id, its adapter module, the events it sends and
what each turns into, the verdict it must print per event, the tool names that change
files, its registrations (event, command words, matcher, timeout) and its installer.
The provider list, the verdict table the report path prints from without loading an
adapter, the installer's list and the help text are all read from these.

The report path imports this on every hook: plain classes, no imports.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterator, Mapping, Optional, Sequence, Tuple

# What an event can turn into, in the order a card shows them; the words of the
# ``reports`` of an EventSpec (docs and tests read them).
REPORT_KINDS = ("start", "busy", "tool", "waiting", "done", "idle", "title", "touched")


class EventSpec:
    """One harness event: the reports it can give and the exact stdout the harness needs."""

    __slots__ = ("reports", "verdict")

    def __init__(self, reports: "Sequence[str]", verdict: str = "") -> None:
        unknown = [kind for kind in reports if kind not in REPORT_KINDS]
        if unknown:
            raise ValueError(f"unknown report kinds {unknown}; use {', '.join(REPORT_KINDS)}")
        self.reports = tuple(reports)
        self.verdict = verdict

    def __repr__(self) -> str:
        return f"EventSpec({self.reports!r}, verdict={self.verdict!r})"


class Registration:
    """One hook entry an installer writes: on ``event``, run lichhook with ``words``."""

    __slots__ = ("event", "words", "matcher", "timeout")

    def __init__(self, event: str, words: "Sequence[str]", matcher: "Optional[str]" = None,
                 timeout: "Optional[int]" = None) -> None:
        self.event = event
        self.words = tuple(words)
        self.matcher = matcher
        self.timeout = timeout

    def __repr__(self) -> str:
        return (f"Registration({self.event!r}, {self.words!r}, matcher={self.matcher!r}, "
                f"timeout={self.timeout!r})")


class EventNames:
    """The events a descriptor names, for ``in``: an exact name, or a ``*suffix`` entry
    standing for every event whose name ends with it (opencode's ``*.asked``)."""

    __slots__ = ("_specs",)

    def __init__(self, specs: "Mapping[str, EventSpec]") -> None:
        self._specs = specs

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and find(self._specs, name) is not None

    def __iter__(self) -> "Iterator[str]":
        return iter(self._specs)

    def __repr__(self) -> str:
        return f"EventNames({list(self._specs)!r})"


def find(specs: "Mapping[str, EventSpec]", name: str) -> "Optional[EventSpec]":
    """The spec for event ``name``: its own entry, else a ``*suffix`` entry it matches."""
    spec = specs.get(name)
    if spec is not None:
        return spec
    for key, spec in specs.items():
        if key.startswith("*") and len(name) > len(key) - 1 and name.endswith(key[1:]):
            return spec
    return None


class Descriptor:
    """Everything lichhook knows about one harness, in one place (see the module doc)."""

    __slots__ = ("provider", "title", "module", "installer", "start_event", "events", "writers",
                 "registrations", "usage")

    def __init__(self, provider: str, title: str, module: str, installer: str, start_event: str,
                 events: "Dict[str, EventSpec]", writers: "Sequence[str]",
                 registrations: "Sequence[Registration]", usage: str) -> None:
        if start_event not in events:
            raise ValueError(f"{provider}: the start event {start_event!r} is not among its events")
        for registration in registrations:
            if registration.words[:1] == (provider,) and registration.words[1:2] not in ((), (registration.event,)):
                raise ValueError(f"{provider}: {registration!r} names another event than the one it is on")
        self.provider = provider
        self.title = title
        self.module = module  # lichhook.adapters.<module> holds ADAPTER
        self.installer = installer  # "module:Class" of its installer under lichhook.install
        self.start_event = start_event  # the event a bare `<provider>` is registered on
        self.events = events
        self.writers = tuple(writers)  # the harness's own names of tools that change files
        self.registrations = tuple(registrations)
        self.usage = usage  # one line for the help text: how the harness runs lichhook

    def spec(self, event: "Optional[str]") -> "Optional[EventSpec]":
        """The spec of ``event``; None (a bare command) is the start event."""
        return self.events[self.start_event] if event is None else find(self.events, event)

    def verdict(self, event: "Optional[str]" = None) -> str:
        """What the hook prints for ``event`` (None: the bare command); "" for an event the
        harness does not send."""
        spec = self.spec(event)
        return spec.verdict if spec is not None else ""

    def event_names(self) -> EventNames:
        return EventNames(self.events)

    def verdicts(self) -> "Dict[str, str]":
        """event -> verdict, for the events named exactly."""
        return {name: spec.verdict for name, spec in self.events.items() if not name.startswith("*")}

    def __repr__(self) -> str:
        return f"<Descriptor {self.provider}>"


def by_provider(descriptors: "Sequence[Descriptor]") -> "Dict[str, Descriptor]":
    return {d.provider: d for d in descriptors}


def table_rows(descriptors: "Sequence[Descriptor]") -> "Iterator[Tuple[str, str, str, str]]":
    """(provider, event, reports, verdict) for every event of every descriptor."""
    for d in descriptors:
        for name, spec in d.events.items():
            yield d.provider, name, ", ".join(spec.reports), spec.verdict
