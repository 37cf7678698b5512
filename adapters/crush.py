"""Crush: registered on PreToolUse, its only event, so the id rides the first tool call.

The payload names the session ``session_id``; Crush also exports ``CRUSH_SESSION_ID``.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at


class Crush(Adapter):
    provider = "crush"
    sample = {
        "event": "PreToolUse",
        "session_id": "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0",
        "cwd": "/home/u/proj",
        "tool_name": "bash",
        "tool_input": {"command": "go test ./..."},
    }

    def session_id(self, payload, environ):
        return string_at(payload, "session_id") or environ.get("CRUSH_SESSION_ID") or None


ADAPTER = Crush()
