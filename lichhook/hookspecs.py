"""The hooks a lichhook plugin can implement."""

from typing import Iterable

import pluggy

NAME = "lichhook"  # markers, plugin manager and entry-point group share it

hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)


@hookspec
def lichhook_adapters() -> Iterable[object]:
    """Return the harness adapters this plugin provides.

    An adapter has ``provider`` (an id like ``"claude"``), ``session_id(payload, environ)``
    returning the harness's session id or ``None``, ``verdict`` (what the hook prints on
    stdout, usually ``""``) and ``sample`` (a realistic payload for ``demo`` and tests).
    Subclassing :class:`lichhook.Adapter` gives the defaults.
    """
    return ()  # a specification: pluggy calls the implementations, never this
