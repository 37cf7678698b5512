"""Claude Code: registered on SessionStart (startup, resume, clear, compact).

Claude adds SessionStart stdout to the model's context, so the verdict is empty.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at


class ClaudeCode(Adapter):
    provider = "claude"
    sample = {
        "session_id": "9f1c7c1e-8f2a-4c3b-9d5e-2a7b6c4d1e05",
        "transcript_path": "/home/u/.claude/projects/-home-u-proj/9f1c7c1e-8f2a-4c3b-9d5e-2a7b6c4d1e05.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-sonnet-5",
    }

    def session_id(self, payload, environ):
        return string_at(payload, "session_id")


ADAPTER = ClaudeCode()
