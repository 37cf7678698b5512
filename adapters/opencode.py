"""opencode: a small JS plugin forwards each ``session.created`` event on stdin.

The event is ``{"type": "session.created", "properties": {"info": Session, ...}}``. A
sub-session (a task's child, ``info.parentID`` set) belongs to its parent's card, so it
is never reported; nor is any other event type.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at


class Opencode(Adapter):
    provider = "opencode"
    sample = {
        "type": "session.created",
        "properties": {
            "sessionID": "ses_011856954ffe5NEMhsYeTuWykR",
            "info": {
                "id": "ses_011856954ffe5NEMhsYeTuWykR",
                "projectID": "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750",
                "directory": "/home/u/proj",
                "title": "New session",
                "version": "1.3.2",
                "time": {"created": 1767000000000, "updated": 1767000000000},
            },
        },
    }

    def session_id(self, payload, environ):
        if payload.get("type") != "session.created":
            return None
        if string_at(payload, "properties", "info", "parentID"):
            return None
        return string_at(payload, "properties", "info", "id") or string_at(
            payload, "properties", "sessionID"
        )


ADAPTER = Opencode()
