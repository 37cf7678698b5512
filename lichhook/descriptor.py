"""Reading the harness descriptors (``lichhook.adapters.DESCRIPTORS``) for those that
need more than the report path does: the installers (registrations as objects), the
docs and help (a table of harness, event and reports) and the tests (what a descriptor
must never say).

The descriptors themselves are plain data in ``lichhook.adapters``, read on every hook.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

from lichhook.adapters import Descriptor

# What an event can turn into, in the order a card shows them.
REPORT_KINDS = ("start", "busy", "tool", "waiting", "done", "idle", "compacting", "title", "touched")


class Registration(NamedTuple):
    """One hook entry an installer writes: on ``event``, run lichhook with ``words``."""

    event: str
    words: Tuple[str, ...]
    matcher: Optional[str]
    timeout: Optional[int]


def registrations(descriptor: Descriptor) -> List[Registration]:
    return [Registration(event, tuple(words), matcher, timeout)
            for event, words, matcher, timeout in descriptor.registrations]


def earlier_words(descriptor: Descriptor, registration: Registration) -> Tuple[Tuple[str, ...], ...]:
    """Other command words an earlier release wrote for this registration: the bare
    ``<provider>``, which every earlier release registered on the start event, for the
    row that now names that event (Crush's ``crush PreToolUse``, Antigravity's
    ``antigravity PreInvocation``). An installer updates such an entry in place."""
    d = descriptor
    if registration.event == d.start_event and registration.words == (d.provider, d.start_event):
        return ((d.provider,),)
    return ()


def problems(descriptor: Descriptor, subcommands: Sequence[str] = ()) -> List[str]:
    """What is wrong with a descriptor, in words: nothing, for every built-in."""
    found = []
    d = descriptor
    if d.start_event not in d.events:
        found.append(f"{d.provider}: the start event {d.start_event!r} is not among its events")
    for name, reports in d.events.items():
        unknown = [kind for kind in reports if kind not in REPORT_KINDS]
        if unknown:
            found.append(f"{d.provider} {name}: unknown report kinds {unknown}")
    for name in d.verdicts:
        if name not in d.events:
            found.append(f"{d.provider}: a verdict for {name!r}, which is not among its events")
        elif name[:1] == "*":  # an adapter's verdicts are looked up by the event's own word
            found.append(f"{d.provider}: a verdict for {name!r}, which stands for several events")
    for name in [*d.timeouts, *d.matchers, *(event for event, _words in d.extra)]:
        if name not in d.events:
            found.append(f"{d.provider}: a registration detail for {name!r}, an event it does not send")
    for event, words in d.extra:
        if words[0] not in subcommands:
            found.append(f"{d.provider}: {' '.join(words)!r} on {event} runs no lichhook command")
    return found

