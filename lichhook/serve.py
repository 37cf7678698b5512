"""The serve path: ``lichhook <provider> --serve``, one lichhook for a whole harness process.

opencode and omp run lichhook from a JS module inside their own process, where a new
Python per event would cost an interpreter's start on every step of a turn. Their module
starts this once, at the first event it forwards, and writes each event on its stdin as
one line of JSON: ``{"event": <the event word>, "payload": <what a hook reads on stdin>}``
(``"event": null`` is the bare command). Each line goes the hook's way
(``lichhook.hook.Hook.deliver``: the same adapter, contracts and client), one after the
other, so lich gets the reports in the order the events came; each event's reports have
the hook's deadline (``HOOK_SECONDS``) from when it is taken up.

The stdin is read on a thread of its own into a queue of at most ``QUEUE_LIMIT`` events:
behind a slow lich the oldest goes (lich shows the last report), and the number dropped is
said under LICHHOOK_DEBUG=1. It ends when stdin ends (the harness closed it or exited),
after what is queued (at most ``DRAIN_SECONDS`` more), or when its parent process is gone
(checked every ``PARENT_SECONDS``), whatever kept the pipe open: no lichhook outlives its
harness. Like a hook it exits 0 and prints nothing on stdout.
"""

import collections
import gc
import os
import sys
import threading
import time

from lichhook.hook import HOOK_SECONDS, Debug, Hook
from lichhook.lichenv import lich_target
from lichhook.payload import MAX_BYTES, PayloadError, parse_payload, read_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, Callable, Container, Deque, Mapping, Optional, Tuple

    from lichhook.lichenv import LichTarget

QUEUE_LIMIT = 100
DRAIN_SECONDS = 2.0
PARENT_SECONDS = 1.0


class Inbox:
    """The events read and not yet taken up: at most ``limit``, the oldest dropped first."""

    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self.limit = limit
        self.lines: "Deque[bytes]" = collections.deque()
        self.dropped = 0
        self.closed = False
        self.ready = threading.Condition()

    def put(self, line: bytes) -> None:
        with self.ready:
            if len(self.lines) >= self.limit:
                self.lines.popleft()
                self.dropped += 1
            self.lines.append(line)
            self.ready.notify()

    def close(self) -> None:
        with self.ready:
            self.closed = True
            self.ready.notify()

    def take(self, wait: float) -> "Tuple[Optional[bytes], bool, int]":
        """(the next line or None after ``wait`` seconds, whether stdin ended, how many
        were dropped since the last take)."""
        with self.ready:
            if not self.lines and not self.closed:
                self.ready.wait(wait)
            line = self.lines.popleft() if self.lines else None
            dropped, self.dropped = self.dropped, 0
            return line, self.closed, dropped


def read_lines(stream: "BinaryIO", inbox: Inbox, debug: Debug) -> None:
    """Put each line of ``stream`` into ``inbox``, then close it; a line longer than a
    hook's stdin may be (``lichhook.payload.MAX_BYTES``) is skipped whole."""
    try:
        while True:
            try:
                line = read_line(stream)
            except PayloadError:
                debug(f"an event of more than {MAX_BYTES} bytes; skipped")
                continue
            if not line:
                break
            if line.strip():
                inbox.put(line)
    except (OSError, ValueError):
        pass
    finally:
        inbox.close()


def parent_watch() -> "Callable[[], bool]":
    """A check that says whether the process that started this one is still there."""
    if sys.platform == "win32":
        import _winapi

        try:  # a handle held from now on names that very process, whatever reuses its id
            handle = _winapi.OpenProcess(0x00100000, False, os.getppid())  # SYNCHRONIZE
        except OSError:
            return lambda: True
        return lambda: _winapi.WaitForSingleObject(handle, 0) != _winapi.WAIT_OBJECT_0
    parent = os.getppid()
    return lambda: os.getppid() == parent  # an orphan is handed to another process


def serve(provider: str, environ: "Mapping[str, str]" = os.environ, reserved: "Container[str]" = ()) -> int:
    """Report each event of stdin for ``provider`` until stdin ends or the parent is gone."""
    gc.enable()  # a process that lives as long as its harness frees its cycles
    hook = Hook(provider, None, environ, 0.0)
    hook.label = f"{provider} --serve"
    target = lich_target(environ)
    if isinstance(target, str):
        hook.say(f"{target}; nothing sent")
        return 0
    try:
        adapter = hook.adapter(reserved)
    except Exception as exc:  # a broken plugin folder, or a complete archive cut short or gone
        hook.failed(exc, f"no adapter ({type(exc).__name__}: {exc}); nothing sent")
        hook.close()
        return 0
    if adapter is None:
        hook.say("unknown provider; nothing sent")
        return 0
    alive = parent_watch()
    inbox = Inbox()
    stdin = getattr(sys.stdin, "buffer", None)
    if stdin is None:
        return 0
    threading.Thread(target=read_lines, args=(stdin, inbox, hook.debug), daemon=True).start()
    title: "Optional[str]" = None  # the card's title, once one went out
    drain_until = None
    while True:
        line, closed, dropped = inbox.take(PARENT_SECONDS)
        if dropped:
            hook.say(f"{dropped} events dropped behind a slow lich (lich shows the last)")
        if closed and drain_until is None:
            drain_until = time.monotonic() + DRAIN_SECONDS
        if line is None:
            if closed or not alive():
                return 0
            continue
        deadline = time.monotonic() + HOOK_SECONDS
        if drain_until is not None:
            if time.monotonic() >= drain_until:
                hook.say(f"stdin ended {DRAIN_SECONDS:g} s ago; the events left are dropped")
                return 0
            deadline = min(deadline, drain_until)
        title = handle(hook, adapter, target, line, deadline, title) or title


def handle(serving: Hook, adapter: object, target: "LichTarget", line: bytes, deadline: float,
           title: "Optional[str]") -> "Optional[str]":
    """Report the event of one line (``serving``: the whole process's hook, whose provider,
    environment and debug voice each event's shares); the title lich took, if one went
    out. ``title`` is the card's title this process gave it, so an unchanged one is not
    sent again even where no state folder keeps it."""
    try:
        message = parse_payload(line)
        event, payload = message.get("event"), message.get("payload")
        if not (event is None or isinstance(event, str)) or not isinstance(payload, dict):
            raise PayloadError('a line must be {"event": <word or null>, "payload": <object>}')
    except PayloadError as exc:
        serving.failed(f"an event line: {exc}", f"{exc}; nothing sent")
        serving.close()
        return None
    with Hook(serving.provider, event, serving.environ, deadline, serving.debug) as hook:
        try:
            return hook.deliver(adapter, target, payload, title, known=title is not None)
        except Exception as exc:  # noqa: BLE001 - one event's failure must not end the session's reports
            hook.failed(exc, f"nothing sent ({type(exc).__name__}: {exc})")
            return None
