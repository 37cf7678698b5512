"""omp (oh-my-pi): a small JS extension forwards ``session_start`` and ``session_switch``.

omp's events carry no id, so the extension reads ``ctx.sessionManager.getSessionId()``
and writes ``{"type": <event>, "session_id": <id>}`` on stdin.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at

EVENTS = ("session_start", "session_switch")


class Omp(Adapter):
    provider = "omp"
    sample = {"type": "session_start", "session_id": "019ffb38-ceab-7000-afae-20b8eae145d8"}

    def session_id(self, payload, environ):
        if payload.get("type") not in EVENTS:
            return None
        return string_at(payload, "session_id")


ADAPTER = Omp()
