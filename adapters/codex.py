"""Codex CLI: registered on SessionStart.

Codex adds SessionStart stdout to the model's context, so the verdict is empty.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at


class Codex(Adapter):
    provider = "codex"
    sample = {
        "session_id": "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01",
        "transcript_path": "/home/u/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-018f9c5a-0000-7000-9a3b-1c2d3e4f5c01.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "SessionStart",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "source": "startup",
    }

    def session_id(self, payload, environ):
        return string_at(payload, "session_id")


ADAPTER = Codex()
