"""The hooks a lichhook plugin can implement, and the adapters they return.

A plugin is a module (or an installed distribution's entry point in the ``lichhook``
group) that implements ``lichhook_adapters``::

    from lichhook import Adapter, Report, hookimpl

    @hookimpl
    def lichhook_adapters():
        return [MyHarness()]

Each adapter returned is one of two shapes, both typed below:

- ``SessionIdAdapter``, the surface lichhook has always had: a ``provider`` id, a
  ``session_id(payload, environ)``, a ``verdict`` and a ``sample``. The harness runs
  ``lichhook <provider>`` and lichhook reports that id as the session start. Such an
  adapter keeps working unchanged, also when a harness runs ``lichhook <provider>
  <event>``: it then reports the same session start and prints its ``verdict``.
- ``EventAdapter``: the same, plus ``reports(event)``, which turns one harness event into
  the reports lich takes (session-start, session-state, session-title, session-touched),
  and the ``events`` and ``verdicts`` it answers for. It serves every contract.

Hook names start with ``lichhook_``; the markers are ``lichhook.hookimpl`` and
``lichhook.hookspec``. docs/adapters.md walks through writing one.
"""

from __future__ import annotations

from typing import Any, Container, Iterable, List, Mapping, Optional, Protocol, Tuple, Union, runtime_checkable

import pluggy

from lichhook.adapter import Event, Report

NAME = "lichhook"  # markers, plugin manager and entry-point group share it

hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)


@runtime_checkable
class SessionIdAdapter(Protocol):
    """An adapter with today's surface: where a harness's payload keeps its session id."""

    #: The provider id lich knows the harness by: ``^[a-z][a-z0-9_-]{0,31}$``, and not a
    #: lichhook subcommand. lich refuses a provider missing from its registry.
    provider: str
    #: What the bare ``lichhook <provider>`` prints on stdout, inside lich or not ("" for
    #: most harnesses; Antigravity reads ``{}`` as "no objection").
    verdict: str
    #: A realistic payload: ``lichhook demo`` sends it through the real report path.
    sample: Mapping[str, Any]

    def session_id(self, payload: Mapping[str, Any], environ: Mapping[str, str]) -> Optional[str]:
        """The harness's session id in ``payload`` (the parsed stdin, always a dict), or
        None when this payload carries none to report. The host refuses ids lich would
        refuse, so an adapter need not check them."""
        ...


@runtime_checkable
class EventAdapter(SessionIdAdapter, Protocol):
    """An adapter that turns each harness event into reports: ``lichhook <provider> <event>``."""

    #: The event words it takes (``PreToolUse``, ``session.updated``...); another word
    #: reports nothing. None takes every word.
    events: Optional[Container[str]]
    #: event -> what ``lichhook <provider> <event>`` prints on stdout, exactly what the
    #: harness reads for that event; an event missing here prints nothing.
    verdicts: Mapping[str, str]

    def reports(self, event: Event) -> Iterable[Report]:
        """The reports ``event`` means, in the order to send them: ``Report.start(id)``,
        ``Report.state("busy", tool=..., detail=...)``, ``Report.state("waiting",
        reason=...)``, ``Report.state("done")``, ``Report.state("idle")``,
        ``Report.title(text)``, ``Report.touched()``, each with ``provider_session_id``
        when the payload names the session. lichhook adds the card's id, trims and cuts
        text as docs/session-state.md says, sends a title only when it changed, and sends
        them all within the hook's one deadline. Raising sends nothing."""
        ...

    def life(self, folder: str) -> List[Tuple[str, Mapping[str, Any]]]:
        """Optional, for ``lichhook demo``: a session from start to end as (event, payload)
        pairs; files the payloads name (a transcript) are written under ``folder``."""
        ...


AnyAdapter = Union[SessionIdAdapter, EventAdapter]


@hookspec
def lichhook_adapters() -> Iterable[AnyAdapter]:
    """Return the harness adapters this plugin provides (see SessionIdAdapter and
    EventAdapter). Subclassing :class:`lichhook.Adapter` gives the defaults: the default
    ``reports`` is the session start from ``session_id``."""
    return ()  # a specification: pluggy calls the implementations, never this
