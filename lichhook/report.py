"""The report path: ``lichhook <provider> [<event>]``, run by a harness as its hook.

It prints the verdict the harness needs for that event and, inside lich, sends the
reports the adapter makes of the event: a session-start, a state, a title, a touched.
The bare ``lichhook <provider>`` is the session-start registration every earlier
lichhook wrote: it reports the adapter's ``session_id`` alone, as it always did.
Whatever happens it returns 0, prints nothing else on stdout and stays silent on stderr
unless LICHHOOK_DEBUG=1. The whole run, reading stdin and every request to lich, is
bounded by one deadline. Its imports are kept to the minimum: this runs on every prompt
and every tool call.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import time

from lichhook.coldstart import builtin_adapter, builtin_module, builtin_verdict, write_stdout
from lichhook.debug import Debug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional

    from lichhook.adapter import Event, Report
    from lichhook.lichenv import LichTarget

# Seconds from the start of the process to the end of the last request, stdin and lich
# together: a harness waits for its hook, and lich answers on loopback in well under 10 ms.
HOOK_SECONDS = 1.0
# The least the requests are given, together, when stdin ended close to the deadline.
POST_FLOOR_SECONDS = 0.1


def resolve_adapter(provider: str, environ: "Mapping[str, str]", debug: Debug) -> object:
    """The adapter for ``provider``, or None.

    A built-in provider with no plugin files in the plugin folder is served straight
    from its module (lichhook.coldstart); anything else goes through the host.
    """
    module = builtin_module(provider, environ)
    return builtin_adapter(module) if module else _hosted(provider, environ, debug)


def _hosted(provider: str, environ: "Mapping[str, str]", debug: Debug) -> object:
    from lichhook.adapter import provider_id_ok

    if not provider_id_ok(provider):
        debug(f"{provider[:40]!r} is not a provider id; nothing sent")
        return None
    from lichhook.host import find_adapter

    return find_adapter(provider, environ, debug)


def run(provider: str, environ: "Mapping[str, str]" = os.environ, started: "Optional[float]" = None,
        event: "Optional[str]" = None) -> int:
    deadline = (time.monotonic() if started is None else started) + HOOK_SECONDS
    debug = Debug(environ)
    label = provider if event is None else f"{provider} {event}"
    stdout_fd = None  # the real stdout, once plugin code is kept away from it
    try:
        module = builtin_module(provider, environ)
        if module:
            from lichhook.lichenv import lich_target

            target = lich_target(environ)
            if isinstance(target, str):
                # Outside lich a built-in has only its verdict to print.
                write_stdout(builtin_verdict(provider, event))
                debug(f"{label}: {target}; nothing sent")
                return 0
            adapter = builtin_adapter(module)
        else:
            from lichhook.plugin_guard import shield_stdout

            stdout_fd = shield_stdout(to_stderr=debug.on)
            adapter = _hosted(provider, environ, debug)
    except Exception as exc:  # a broken plugin folder, or a complete archive cut short or gone
        debug(f"{label}: no adapter ({type(exc).__name__}: {exc}); nothing sent")
        # must not fail the turn: a built-in provider still gives its harness its verdict
        try:
            write_stdout(builtin_verdict(provider, event), stdout_fd)
        except Exception:  # noqa: BLE001 - not even the descriptors could be read
            pass
        return 0
    if adapter is None:
        debug(f"{label}: unknown provider; nothing sent")
        return 0
    from lichhook.adapter import verdict_of

    # The verdict goes out first: a harness that kills a slow hook still has it.
    write_stdout(verdict_of(adapter, event), stdout_fd)
    try:
        report(provider, adapter, environ, debug, deadline, event)
    except Exception as exc:
        debug(f"{label}: nothing sent ({type(exc).__name__}: {exc})")
    return 0


def report(provider: str, adapter: object, environ: "Mapping[str, str]", debug: Debug, deadline: float,
           event: "Optional[str]" = None) -> None:
    from lichhook.lichenv import lich_target

    label = provider if event is None else f"{provider} {event}"
    target = lich_target(environ)
    if isinstance(target, str):
        debug(f"{label}: {target}; nothing sent")
        return

    from lichhook.payload import PayloadError, read_payload

    try:
        payload = read_payload(deadline=deadline)
    except PayloadError as exc:
        debug(f"{label}: {exc}; nothing sent")
        return

    from lichhook.adapter import Event

    happened = Event(provider, event or "", payload, environ)
    try:
        reports = made(adapter, happened, event is None, debug)
    except Exception as exc:
        debug(f"{label}: adapter raised {type(exc).__name__}: {exc}; nothing sent")
        return
    if not reports:
        debug(f"{label}: nothing to report for this payload; nothing sent")
        return
    send(label, provider, reports, target, happened, debug, max(deadline, time.monotonic() + POST_FLOOR_SECONDS))


def made(adapter: object, event: "Event", bare: bool, debug: Debug) -> "List[Report]":
    """The reports ``adapter`` makes of ``event``: for the bare command (or an adapter with
    only today's surface), its session id as a session-start."""
    from lichhook.adapter import start_only, takes_events

    if bare or not takes_events(adapter):
        return start_only(adapter, event)
    events = getattr(adapter, "events", None)
    if events is not None and event.name not in events:
        debug(f"{event.provider} {event.name}: not an event this adapter takes")
        return []
    return list(adapter.reports(event))  # type: ignore[attr-defined]


def send(label: str, provider: str, reports: "List[Report]", target: "LichTarget", event: "Event", debug: Debug,
         deadline: float) -> None:
    """Send each report, in order, each in what is left of ``deadline``; a title only when
    it is not the card's last, recorded once lich took it."""
    from lichhook import client
    from lichhook.contracts import BODY_LIMIT

    for item in reports:
        try:
            built = body(item, provider, target, event)
        except (TypeError, ValueError, AttributeError) as exc:
            debug(f"{label}: a report the adapter made is unusable ({exc}); not sent")
            continue
        what, path, data = built
        if data is None:
            debug(f"{label}: {what}; not sent")
            continue
        if len(data) > BODY_LIMIT:
            debug(f"{label}: {what}: body of {len(data)} bytes exceeds lich's {BODY_LIMIT}; not sent")
            continue
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            debug(f"{label}: {what}: no time left before the hook's deadline; not sent")
            break
        request = client.build_request(target.port, target.token, path, data)
        try:
            status = client.post(target.port, request, timeout)
        except OSError as exc:
            debug(f"{label}: sent {what} to 127.0.0.1:{target.port}, no answer ({type(exc).__name__}: {exc})")
            continue
        debug(f"{label}: sent {what} to 127.0.0.1:{target.port}, lich answered {status}")
        if item.contract == "session-title" and status is not None and 200 <= status < 300:
            _remember(event, item, label, debug)


def body(item: "Report", provider: str, target: "LichTarget", event: "Event") -> tuple:
    """(what, path, body) for one report; body None (and ``what`` saying why) when it is
    not to be sent."""
    from lichhook.adapter import Report
    from lichhook.contracts import provider_session_id_problem

    if not isinstance(item, Report):
        raise TypeError(f"{item!r} is not a lichhook.adapter.Report")
    session = target.session_id
    sid = item.provider_session_id
    if item.contract == "session-start":
        from lichhook.contracts import session_start

        if sid is None:
            return "no session id in the payload", session_start.PATH, None
        problem = provider_session_id_problem(sid)
        if problem:
            return f"session-start: {problem}", session_start.PATH, None
        return f"session-start {shown(sid)}", session_start.PATH, session_start.body(session, sid, provider)
    # Sent alongside when it is one lich would keep as it is; a report without it still counts.
    alongside = sid if sid is not None and provider_session_id_problem(sid) is None else ""
    if item.contract == "session-state":
        from lichhook.contracts import session_state

        fields = item.fields
        data = session_state.body(session, fields.get("state", ""), fields.get("tool", ""), fields.get("detail", ""),
                                  fields.get("reason", ""), alongside)
        return f"session-state {fields.get('state')}", session_state.PATH, data
    if item.contract == "session-title":
        from lichhook.contracts import session_title

        title = session_title.text(item.fields.get("title"))
        if not title:
            return "session-title: no title text", session_title.PATH, None
        if title == event.last_title:
            return "session-title: unchanged", session_title.PATH, None
        if item.placeholder:
            _keep(event, title)
            what = f"session-title: {shown(title)} is the harness's placeholder, kept as the card's"
            return what, session_title.PATH, None
        return f"session-title {shown(title)}", session_title.PATH, session_title.body(session, title, alongside)
    if item.contract == "session-touched":
        from lichhook.contracts import session_touched

        return "session-touched", session_touched.PATH, session_touched.body(session, alongside)
    raise ValueError(f"unknown contract {item.contract!r}")


def shown(text: str, limit: int = 60) -> str:
    """``text`` for a debug line: quoted, and cut so a long one cannot flood stderr."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def _keep(event: "Event", title: str) -> None:
    from lichhook import titles

    try:
        titles.remember(event.environ, title)
    except OSError:
        pass


def _remember(event: "Event", item: "Report", label: str, debug: Debug) -> None:
    from lichhook import titles
    from lichhook.contracts.session_title import text

    try:
        kept = titles.remember(event.environ, text(item.fields.get("title")))
    except OSError as exc:
        kept = False
        debug(f"{label}: title not recorded ({type(exc).__name__}: {exc}); it may be sent again")
    if not kept:
        debug(f"{label}: no private state folder for titles; the title may be sent again")
