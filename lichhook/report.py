"""The report path: ``lichhook <provider>``, run by a harness as its hook.

It prints the adapter's verdict, and inside lich reports the harness's session id.
Whatever happens it returns 0, prints nothing else on stdout and stays silent on
stderr unless LICHHOOK_DEBUG=1. Its imports are kept to the minimum: this runs before
every Antigravity model call and every Crush tool call.
"""

# No ``from __future__ import annotations``: that line imports __future__ at run time
# (~0.1 ms) and this module runs on every hook, so annotations that name
# type-checking-only types are written as strings.

import os
import sys

from lichhook.debug import Debug

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping


_HOST = ""  # builtin_module's answer when the pluggy host must decide


def builtin_module(provider: str, environ: "Mapping[str, str]") -> str:
    """The module of the built-in adapter that serves ``provider`` unaided, or "" when the
    pluggy host must decide: not a built-in, or the plugin folder holds plugin files
    (which may replace it) or is refused."""
    from lichhook.adapters import BUILTIN
    from lichhook.paths import plugin_dir, plugin_files

    module = BUILTIN.get(provider, _HOST)
    if module:
        folder = plugin_dir(environ)
        if folder is None or plugin_files(folder):
            return _HOST
    return module


def resolve_adapter(provider: str, environ: "Mapping[str, str]", debug: Debug) -> object:
    """The adapter for ``provider``, or None.

    A built-in provider with no plugin files in the plugin folder is served straight
    from its module, which gives the same adapter the pluggy host would (a test holds
    them equal) without importing pluggy. Anything else goes through the host.
    """
    return _resolve(provider, builtin_module(provider, environ), environ, debug)


def _resolve(provider: str, module: str, environ: "Mapping[str, str]", debug: Debug) -> object:
    if module:  # built-in ids are valid provider ids by construction
        from importlib import import_module

        return import_module(f"lichhook.adapters.{module}").ADAPTER
    from lichhook.adapter import provider_id_ok

    if not provider_id_ok(provider):
        debug(f"{provider[:40]!r} is not a provider id; nothing sent")
        return None
    from lichhook.host import find_adapter

    return find_adapter(provider, environ, debug)


def run(provider: str, environ: "Mapping[str, str]" = os.environ) -> int:
    debug = Debug(environ)
    try:
        module = builtin_module(provider, environ)
        if module:
            from lichhook.lichenv import lich_target

            target = lich_target(environ)
            if isinstance(target, str):
                # Outside lich a built-in has only its verdict to print, and that is
                # known without loading its module (a test holds VERDICTS equal to
                # each adapter's verdict).
                from lichhook.adapters import VERDICTS

                write_verdict(VERDICTS.get(provider, ""))
                debug(f"{provider}: {target}; nothing sent")
                return 0
        adapter = _resolve(provider, module, environ, debug)
    except Exception as exc:  # a broken plugin folder must not fail the turn
        debug(f"{provider}: no adapter ({type(exc).__name__}: {exc}); nothing sent")
        return 0
    if adapter is None:
        debug(f"{provider}: unknown provider; nothing sent")
        return 0
    # The verdict goes out first: a harness that kills a slow hook still gets it.
    write_verdict(getattr(adapter, "verdict", "") or "")
    try:
        report(provider, adapter, environ, debug)
    except Exception as exc:
        debug(f"{provider}: nothing sent ({type(exc).__name__}: {exc})")
    return 0


def write_verdict(verdict: str) -> None:
    if not verdict:
        return
    try:
        sys.stdout.write(verdict)
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: stdout closed, sys.stdout None
        pass


def report(provider: str, adapter: object, environ: "Mapping[str, str]", debug: Debug) -> None:
    from lichhook.lichenv import lich_target

    target = lich_target(environ)
    if isinstance(target, str):
        debug(f"{provider}: {target}; nothing sent")
        return

    from lichhook.payload import PayloadError, parse_payload, read_stdin

    try:
        payload = parse_payload(read_stdin())
    except PayloadError as exc:
        debug(f"{provider}: {exc}; nothing sent")
        return

    from lichhook.ids import provider_session_id_problem

    try:
        sid = adapter.session_id(payload, environ)
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
    try:
        status = client.post(target.port, request)
    except OSError as exc:
        debug(f"{provider}: sent {sid!r} to 127.0.0.1:{target.port}, no answer ({type(exc).__name__}: {exc})")
        return
    debug(f"{provider}: sent {sid!r} to 127.0.0.1:{target.port}, lich answered {status}")
