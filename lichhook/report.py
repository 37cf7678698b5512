"""The report path: ``lichhook <provider>``, run by a harness as its hook.

It prints the adapter's verdict, and inside lich reports the harness's session id.
Whatever happens it returns 0, prints nothing else on stdout and stays silent on
stderr unless LICHHOOK_DEBUG=1. The whole run, reading stdin and talking to lich, is
bounded by one deadline. Its imports are kept to the minimum: this runs before every
Antigravity model call and every Crush tool call.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import time

from lichhook.coldstart import builtin_adapter, builtin_module, builtin_verdict, write_stdout
from lichhook.debug import Debug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

# Seconds from the start of the process to the end of the report, stdin and lich
# together: a harness waits for its hook, and lich answers on loopback in well under 10 ms.
HOOK_SECONDS = 1.0
# The least a POST is given when stdin ended close to the deadline.
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


def run(provider: str, environ: "Mapping[str, str]" = os.environ, started: "float | None" = None) -> int:
    deadline = (time.monotonic() if started is None else started) + HOOK_SECONDS
    debug = Debug(environ)
    stdout_fd = None  # the real stdout, once plugin code is kept away from it
    try:
        module = builtin_module(provider, environ)
        if module:
            from lichhook.lichenv import lich_target

            target = lich_target(environ)
            if isinstance(target, str):
                # Outside lich a built-in has only its verdict to print.
                write_stdout(builtin_verdict(provider))
                debug(f"{provider}: {target}; nothing sent")
                return 0
            adapter = builtin_adapter(module)
        else:
            from lichhook.plugin_guard import shield_stdout

            stdout_fd = shield_stdout(to_stderr=debug.on)
            adapter = _hosted(provider, environ, debug)
    except Exception as exc:  # a broken plugin folder must not fail the turn
        debug(f"{provider}: no adapter ({type(exc).__name__}: {exc}); nothing sent")
        return 0
    if adapter is None:
        debug(f"{provider}: unknown provider; nothing sent")
        return 0
    # The verdict goes out first: a harness that kills a slow hook still gets it.
    verdict = getattr(adapter, "verdict", "") or ""
    write_stdout(verdict if isinstance(verdict, str) else "", stdout_fd)
    try:
        report(provider, adapter, environ, debug, deadline)
    except Exception as exc:
        debug(f"{provider}: nothing sent ({type(exc).__name__}: {exc})")
    return 0


def report(provider: str, adapter: object, environ: "Mapping[str, str]", debug: Debug, deadline: float) -> None:
    from lichhook.lichenv import lich_target

    target = lich_target(environ)
    if isinstance(target, str):
        debug(f"{provider}: {target}; nothing sent")
        return

    from lichhook.payload import PayloadError, parse_payload, read_stdin

    try:
        payload = parse_payload(read_stdin(deadline=deadline))
    except PayloadError as exc:
        debug(f"{provider}: {exc}; nothing sent")
        return

    from lichhook.ids import provider_session_id_problem

    try:
        sid = adapter.session_id(payload, environ)  # type: ignore[attr-defined]
    except Exception as exc:
        debug(f"{provider}: adapter raised {type(exc).__name__}: {exc}; nothing sent")
        return
    if sid is None:
        debug(f"{provider}: no session id in the payload; nothing sent")
        return
    problem = provider_session_id_problem(sid)
    if problem:
        debug(f"{provider}: {problem}; nothing sent")
        return

    from lichhook import client

    body = client.session_start_body(target.session_id, sid, provider)
    if len(body) > client.BODY_LIMIT:
        debug(f"{provider}: body of {len(body)} bytes exceeds lich's {client.BODY_LIMIT}; nothing sent")
        return
    request = client.build_request(target.port, target.token, "/session-start", body)
    timeout = max(POST_FLOOR_SECONDS, deadline - time.monotonic())
    try:
        status = client.post(target.port, request, timeout)
    except OSError as exc:
        debug(f"{provider}: sent {sid!r} to 127.0.0.1:{target.port}, no answer ({type(exc).__name__}: {exc})")
        return
    debug(f"{provider}: sent {sid!r} to 127.0.0.1:{target.port}, lich answered {status}")
