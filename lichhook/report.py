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

import os
import time

from lichhook.coldstart import shield_stdout
from lichhook.hook import HOOK_SECONDS, Hook
from lichhook.lichenv import lich_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Container, Mapping, Optional


def run(provider: str, environ: "Mapping[str, str]" = os.environ, started: "Optional[float]" = None,
        event: "Optional[str]" = None, reserved: "Container[str]" = ()) -> int:
    """Run the hook for ``provider``; ``reserved`` are the command line's own words
    (``lichhook.cli.WORDS``), which no plugin's adapter may take."""
    hook = Hook(provider, event, environ, (time.monotonic() if started is None else started) + HOOK_SECONDS)
    fd = None  # the real stdout, once plugin code is kept away from it
    with hook:  # its failures are recorded as it ends
        try:
            target = lich_target(environ)
            unaided = hook.unaided()
            if unaided and isinstance(target, str):
                # Outside lich a built-in has only its verdict to print.
                hook.answer()
                hook.say(f"{target}; nothing sent")
                return 0
            if not unaided:
                fd = shield_stdout(to_stderr=hook.debug.on)
            adapter = hook.adapter(reserved, unaided)
        except Exception as exc:  # a broken plugin folder, or a complete archive cut short or gone
            hook.failed(exc, f"no adapter ({type(exc).__name__}: {exc}); nothing sent")
            # must not fail the turn: a built-in provider still gives its harness its verdict
            try:
                hook.answer(None, fd)
            except Exception:  # noqa: BLE001 - not even the descriptors could be read
                pass
            return 0
        if adapter is None:
            hook.say("unknown provider; nothing sent")
            return 0
        # The verdict goes out first: a harness that kills a slow hook still has it.
        hook.answer(adapter, fd)
        try:
            if isinstance(target, str):
                hook.say(f"{target}; nothing sent")
                return 0
            from lichhook.payload import PayloadError, read_payload

            try:
                payload = read_payload(deadline=hook.deadline)
            except PayloadError as exc:
                hook.failed(f"the payload on stdin: {exc}", f"{exc}; nothing sent")
                return 0
            hook.deliver(adapter, target, payload)
        except Exception as exc:
            hook.failed(exc, f"nothing sent ({type(exc).__name__}: {exc})")
    return 0
