"""Antigravity: registered on PreInvocation, which runs before every model call.

Its payload is camelCase and names the conversation ``conversationId``. Antigravity reads
the hook's stdout as its verdict, and ``{}`` is the reply that raises no objection on
PreInvocation; lich's report is idempotent, so reporting on every call is harmless.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at


class Antigravity(Adapter):
    provider = "antigravity"
    verdict = "{}"
    sample = {
        "conversationId": "a1604c72-3091-449e-a60b-27da041f8ca2",
        "workspacePaths": ["/home/u/proj"],
        "transcriptPath": "/home/u/.gemini/antigravity-cli/brain/a1604c72-3091-449e-a60b-27da041f8ca2/.system_generated/logs/transcript_full.jsonl",
        "artifactDirectoryPath": "/home/u/.gemini/antigravity-cli/brain/a1604c72-3091-449e-a60b-27da041f8ca2",
        "modelName": "gemini-3.5-flash",
        "invocationNum": 0,
        "initialNumSteps": 0,
    }

    def session_id(self, payload, environ):
        return string_at(payload, "conversationId")


ADAPTER = Antigravity()
