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

from lichhook.coldstart import write_stdout
from lichhook.debug import Debug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Container, List, Mapping, Optional

    from lichhook.adapter import Event, Report
    from lichhook.lichenv import LichTarget

# Seconds from the start of the process to the end of the last request, stdin and lich
# together: a harness waits for its hook, and lich answers on loopback in well under 10 ms.
HOOK_SECONDS = 1.0
# The least the requests are given, together, when stdin ended close to the deadline.
POST_FLOOR_SECONDS = 0.1


# A built-in adapter without the pluggy host, when nothing can replace it.
#
# The host imports pluggy and every built-in adapter, and may scan installed entry points:
# several milliseconds a hook does not need when the provider is built in and the plugin
# folder holds no plugin file (only a plugin-folder adapter may replace a built-in). Then
# the adapter comes straight from its module, the very object the host would give;
# outside lich even that module is not loaded, since the verdict (from the harness's
# descriptor) is all there is to print.

HOST = ""  # builtin_module's answer when the pluggy host must decide


def builtin_module(provider: str, environ: "Mapping[str, str]") -> str:
    """The module of the built-in adapter that serves ``provider`` unaided, or HOST when the
    pluggy host must decide: not a built-in, or the plugin folder holds plugin files (which
    may replace it) or is refused."""
    from lichhook.adapters import BUILTIN
    from lichhook.paths import plugin_dir, plugin_files

    module: str = BUILTIN.get(provider, HOST)
    if module:
        folder = plugin_dir(environ)
        if folder is None or plugin_files(folder):
            return HOST
    return module


def builtin_adapter(module: str) -> object:
    """The ADAPTER of ``lichhook.adapters.<module>``, a name builtin_module gave."""
    from importlib import import_module

    return import_module(f"lichhook.adapters.{module}").ADAPTER


def builtin_verdict(provider: str, event: "str | None" = None) -> str:
    """What the built-in hook for ``provider`` prints for ``event`` (None: the bare
    command), from its harness's descriptor, without loading the adapter's module."""
    from lichhook.adapters import BY_PROVIDER

    descriptor = BY_PROVIDER.get(provider)
    return descriptor.verdict(event) if descriptor is not None else ""


def resolve_adapter(provider: str, environ: "Mapping[str, str]", debug: Debug) -> object:
    """The adapter for ``provider``, or None.

    A built-in provider with no plugin files in the plugin folder is served straight
    from its module (builtin_module); anything else goes through the host.
    """
    module = builtin_module(provider, environ)
    return builtin_adapter(module) if module else _hosted(provider, environ, debug)


def _hosted(provider: str, environ: "Mapping[str, str]", debug: Debug, reserved: "Container[str]" = ()) -> object:
    from lichhook.adapter import provider_id_ok

    if not provider_id_ok(provider):
        debug(f"{provider[:40]!r} is not a provider id; nothing sent")
        return None
    from lichhook.host import find_adapter

    return find_adapter(provider, environ, debug, reserved)


def run(provider: str, environ: "Mapping[str, str]" = os.environ, started: "Optional[float]" = None,
        event: "Optional[str]" = None, reserved: "Container[str]" = ()) -> int:
    """Run the hook for ``provider``; ``reserved`` are the command line's own words
    (``lichhook.cli.WORDS``), which no plugin's adapter may take."""
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
            from lichhook.coldstart import shield_stdout

            stdout_fd = shield_stdout(to_stderr=debug.on)
            adapter = _hosted(provider, environ, debug, reserved)
    except Exception as exc:  # a broken plugin folder, or a complete archive cut short or gone
        debug(f"{label}: no adapter ({type(exc).__name__}: {exc}); nothing sent")
        _failed(environ, provider, event, exc)
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
        _failed(environ, provider, event, exc)
    return 0


def _failed(environ: "Mapping[str, str]", provider: str, event: "Optional[str]", error: "BaseException | str") -> None:
    """Leave a trace of a failure in the state folder (lichhook.failures, imported only now);
    a trace that cannot be left must not fail the hook either."""
    try:
        from lichhook.failures import record

        record(environ, provider, event, error)
    except Exception:  # noqa: BLE001 - the hook's answer matters more than its trace
        pass


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
        _failed(environ, provider, event, f"the payload on stdin: {exc}")
        return

    from lichhook.adapter import Event

    deliver(provider, adapter, target, Event(provider, event or "", payload, environ), debug, deadline)


def deliver(provider: str, adapter: object, target: "LichTarget", happened: "Event", debug: Debug,
            deadline: float) -> "Optional[str]":
    """Send what ``adapter`` makes of ``happened`` (an event without a name is the bare
    command's), each report in what is left of ``deadline``; the title lich took as the
    card's, if one went out."""
    event = happened.name or None
    label = provider if event is None else f"{provider} {event}"
    environ = happened.environ
    try:
        reports = made(adapter, happened, event is None, debug)
    except Exception as exc:
        debug(f"{label}: adapter raised {type(exc).__name__}: {exc}; nothing sent")
        _failed(environ, provider, event, exc)
        return None
    if not reports:
        debug(f"{label}: nothing to report for this payload; nothing sent")
        return None
    return send(label, provider, reports, target, happened, debug,
                max(deadline, time.monotonic() + POST_FLOOR_SECONDS), environ)


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
         deadline: float, environ: "Mapping[str, str]" = os.environ) -> "Optional[str]":
    """Send each report, in order, each in what is left of ``deadline``, as its contract
    builds it (``lichhook.contracts.outgoing``); a title it sets is recorded as the card's
    once lich took it, and returned."""
    from lichhook import client
    from lichhook.adapter import Report
    from lichhook.contracts import BODY_LIMIT, outgoing

    card_title = None
    release = None  # the claim, read once the first report is sent
    for item in reports:
        try:
            if not isinstance(item, Report):
                raise TypeError(f"{item!r} is not a lichhook.adapter.Report")
            out = outgoing(item, target.session_id, event)
        except (TypeError, ValueError, AttributeError) as exc:
            debug(f"{label}: a report the adapter made is unusable ({exc}); not sent")
            _failed(environ, provider, event.name or None, exc)
            continue
        what, data = out.what, out.body
        if data is None:
            debug(f"{label}: {what}; not sent")
            if out.title:
                _keep(event, out.title)
                card_title = out.title
            continue
        if len(data) > BODY_LIMIT:
            debug(f"{label}: {what}: body of {len(data)} bytes exceeds lich's {BODY_LIMIT}; not sent")
            continue
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            debug(f"{label}: {what}: no time left before the hook's deadline; not sent")
            break
        if release is None:
            release = client.claimed(provider)
        request = client.build_request(target.port, target.token, out.path, data, release)
        try:
            status = client.post(target.port, request, timeout)
        except OSError as exc:
            debug(f"{label}: sent {what} to 127.0.0.1:{target.port}, no answer ({type(exc).__name__}: {exc})")
            _failed(environ, provider, event.name or None,
                    f"{what}: lich did not answer at 127.0.0.1:{target.port} ({type(exc).__name__}: {exc})")
            continue
        debug(f"{label}: sent {what} to 127.0.0.1:{target.port}, lich answered "
              + (str(status) if status is not None else "without an HTTP status line"))
        if out.title and status is not None and 200 <= status < 300:
            _remember(event, out.title, label, debug)
            card_title = out.title
    return card_title


def _keep(event: "Event", title: str) -> None:
    from lichhook import titles

    try:
        titles.remember(event.environ, title)
    except OSError:
        pass


def _remember(event: "Event", title: str, label: str, debug: Debug) -> None:
    from lichhook import titles

    try:
        kept = titles.remember(event.environ, title)
    except OSError as exc:
        kept = False
        debug(f"{label}: title not recorded ({type(exc).__name__}: {exc}); it may be sent again")
    if not kept:
        debug(f"{label}: no private state folder for titles; the title may be sent again")
