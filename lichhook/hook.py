"""One hook run: its provider and event, the environment it runs in, its deadline, its
debug voice and its failure record, made once by the report path (and by the serve
path, once per event) and handed down, so no step takes them one by one. Each failure
is said as it happens and recorded for doctor as the run ends (``Hook.close``), in well
under the harness's own timeout.

Its debug voice speaks on stderr only when LICHHOOK_DEBUG=1: a hook's stderr can reach
the operator or the model, so it stays silent by default. Messages are built by the
caller and must never contain the lich token. This module runs on every hook: it
imports what a step needs only when that step runs.
"""

import sys
import time

from lichhook.adapters import BY_PROVIDER, load
from lichhook.coldstart import write_stdout
from lichhook.paths import plugin_dir, plugin_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Container, List, Mapping, Optional

    from lichhook.contracts import Outgoing
    from lichhook.lichenv import LichTarget

# Seconds from the start of the process to the end of the last request, stdin and lich
# together: a harness waits for its hook, and lich answers on loopback in well under 10 ms.
HOOK_SECONDS = 1.0
# The least the requests are given, together, when stdin ended close to the deadline.
POST_FLOOR_SECONDS = 0.1


class Debug:
    """One line per decision on stderr, only when LICHHOOK_DEBUG=1."""

    def __init__(self, environ: "Mapping[str, str]", prefix: str = "lichhook") -> None:
        self.on = environ.get("LICHHOOK_DEBUG", "").strip() == "1"
        self.prefix = prefix

    def __call__(self, message: str) -> None:
        if not self.on:
            return
        try:
            sys.stderr.write(f"{self.prefix}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


class Hook:
    """``lichhook <provider> [<event>]`` run once (``event`` None: the bare command),
    ending by ``deadline`` (a ``time.monotonic()`` value)."""

    __slots__ = ("provider", "event", "environ", "deadline", "debug", "label", "failures", "release")

    def __init__(self, provider: str, event: "Optional[str]", environ: "Mapping[str, str]", deadline: float,
                 debug: "Optional[Debug]" = None) -> None:
        self.provider = provider
        self.event = event
        self.environ = environ
        self.deadline = deadline
        self.debug = Debug(environ) if debug is None else debug
        self.label = provider if event is None else f"{provider} {event}"
        self.failures: "List[BaseException | str]" = []  # what close() records
        self.release: "Optional[str]" = None  # the claim named in X-Lich-Plugin, read at the first POST

    def __enter__(self) -> "Hook":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def say(self, message: str) -> None:
        self.debug(f"{self.label}: {message}")

    def failed(self, error: "BaseException | str", message: str) -> None:
        """Say ``message`` and keep ``error`` for the run's failure record (close)."""
        self.say(message)
        self.failures.append(error)

    def close(self) -> None:
        """Leave a trace of each failure of the run in the state folder (lichhook.failures,
        imported only now), once the run is done; a trace that cannot be left must not
        fail the hook either."""
        if not self.failures:
            return
        try:
            from lichhook.failures import record

            for error in self.failures:
                record(self.environ, self.provider, self.event, error)
        except Exception:  # noqa: BLE001 - the hook's answer matters more than its trace
            pass
        self.failures.clear()

    # A built-in adapter without the pluggy host, when nothing can replace it.
    #
    # The host imports pluggy and every built-in adapter, and may scan installed entry
    # points: several milliseconds a hook does not need when the provider is built in and
    # the plugin folder holds no plugin file (only a plugin-folder adapter may replace a
    # built-in). Then the adapter comes straight from its module, the very object the host
    # would give; outside lich even that module is not loaded, since the verdict (from the
    # harness's descriptor) is all there is to print.

    def unaided(self) -> bool:
        """Whether a built-in adapter serves this provider without the pluggy host: it is
        built in, and the plugin folder holds no plugin file (which may replace it) and is
        not refused."""
        if self.provider not in BY_PROVIDER:
            return False
        folder = plugin_dir(self.environ)
        return folder is not None and not plugin_files(folder)

    def adapter(self, reserved: "Container[str]" = (), unaided: "Optional[bool]" = None) -> object:
        """The adapter for this provider, or None: a built-in served unaided from its own
        module, anything else found by the pluggy host; ``reserved`` are the command line's
        own words (``lichhook.cli.WORDS``), which no plugin's adapter may take."""
        if self.unaided() if unaided is None else unaided:
            return load(self.provider)
        from lichhook.adapter import provider_id_ok

        if not provider_id_ok(self.provider):
            self.debug(f"{self.provider[:40]!r} is not a provider id; nothing sent")
            return None
        from lichhook.host import find_adapter

        return find_adapter(self.provider, self.environ, self.debug, reserved)

    def verdict(self, adapter: object = None) -> str:
        """What this hook prints: ``adapter``'s verdict for the event or, with no adapter,
        the built-in descriptor's (without loading the adapter's module; "" for a provider
        that is not built in)."""
        if adapter is not None:
            from lichhook.adapter import verdict_of

            return verdict_of(adapter, self.event)
        descriptor = BY_PROVIDER.get(self.provider)
        return descriptor.verdict(self.event) if descriptor is not None else ""

    def answer(self, adapter: object = None, fd: "Optional[int]" = None) -> None:
        """Print the verdict on stdout (``fd``: the real stdout, once plugin code is kept
        away from it): the one place a hook's answer is written."""
        write_stdout(self.verdict(adapter), fd)

    def plan(self, adapter: object, session_id: str, payload: "Mapping[str, Any]", title: "Optional[str]" = None,
             known: bool = False) -> "Optional[List[Outgoing | Exception]]":
        """What the report path makes of this event with ``payload`` for the card
        ``session_id`` (``title``: the card's title, when ``known``), decided without
        sending: per report ``adapter`` makes, in order, what its contract builds
        (``lichhook.contracts.outgoing``; ``body`` None: not sent, ``what`` says why), or
        why the report is unusable. None: not an event the adapter takes. Raises what the
        adapter raises. ``deliver`` sends it; doctor's live run counts on it."""
        from lichhook.adapter import Event, Report, reports_of
        from lichhook.contracts import outgoing

        event = Event(self.provider, self.event or "", payload, self.environ, title, known)
        reports = reports_of(adapter, event, self.event is None)
        if reports is None:
            return None
        planned: "List[Outgoing | Exception]" = []
        for item in reports:
            try:
                if not isinstance(item, Report):
                    raise TypeError(f"{item!r} is not a lichhook.adapter.Report")
                planned.append(outgoing(item, session_id, event))
            except (TypeError, ValueError, AttributeError) as exc:
                planned.append(exc)
        return planned

    def deliver(self, adapter: object, target: "LichTarget", payload: "Mapping[str, Any]",
                title: "Optional[str]" = None, known: bool = False) -> "Optional[str]":
        """Send, in order, what ``plan`` makes of this event with ``payload``, each in what
        is left of the deadline; a title it sets is recorded as the card's once lich took
        it, and returned."""
        try:
            planned = self.plan(adapter, target.session_id, payload, title, known)
        except Exception as exc:
            self.failed(exc, f"adapter raised {type(exc).__name__}: {exc}; nothing sent")
            return None
        if not planned:
            why = "nothing to report for this payload" if planned == [] else "not an event this adapter takes"
            self.say(f"{why}; nothing sent")
            return None
        deadline = max(self.deadline, time.monotonic() + POST_FLOOR_SECONDS)
        card_title = None
        for out in planned:
            if isinstance(out, Exception):
                self.failed(out, f"a report the adapter made is unusable ({out}); not sent")
                continue
            if out.body is None:
                self.say(f"{out.what}; not sent")
                if out.title:
                    self.keep_title(out.title, sent=False)
                    card_title = out.title
                continue
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                self.say(f"{out.what}: no time left before the hook's deadline; not sent")
                break
            if self.post(target, out, timeout) and out.title:
                self.keep_title(out.title, sent=True)
                card_title = out.title
        return card_title

    def post(self, target: "LichTarget", out: "Outgoing", timeout: float) -> bool:
        """POST ``out`` to lich within ``timeout`` seconds; whether lich took it (a 2xx)."""
        from lichhook import client

        if self.release is None:
            self.release = client.claimed(self.provider)
        request = client.build_request(target.port, target.token, out.path, out.body or b"", self.release)
        try:
            status = client.post(target.port, request, timeout)
        except OSError as exc:
            why = f"{type(exc).__name__}: {exc}"
            self.failed(f"{out.what}: lich did not answer at 127.0.0.1:{target.port} ({why})",
                        f"sent {out.what} to 127.0.0.1:{target.port}, no answer ({why})")
            return False
        self.say(f"sent {out.what} to 127.0.0.1:{target.port}, lich answered "
                 + (str(status) if status is not None else "without an HTTP status line"))
        return status is not None and 200 <= status < 300

    def keep_title(self, title: str, sent: bool) -> None:
        """Record ``title`` as the card's, so it is not sent again; ``sent``: lich took
        it now (a title lich has already is kept quietly)."""
        from lichhook import titles

        try:
            kept = titles.remember(self.environ, title)
        except OSError as exc:
            if sent:
                self.say(f"title not recorded ({type(exc).__name__}: {exc}); it may be sent again")
            return
        if sent and not kept:
            self.say("no private state folder for titles; the title may be sent again")
