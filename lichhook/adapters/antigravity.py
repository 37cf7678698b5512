"""Antigravity: command hooks on PreInvocation, PreToolUse, PostToolUse and Stop.

Its payload is camelCase protojson with no event name (the event comes as the command's
second word): the conversation is ``conversationId``, the working folder
``workspacePaths[0]``, the transcript ``transcriptPath``; tool events carry
``toolCall.name`` and PascalCase ``toolCall.args`` (``CommandLine``, ``TargetFile``...).
Antigravity reads every hook's stdout as a decision: PreInvocation and PostToolUse take
``{}``, Stop ``{"decision":""}``, and PreToolUse ``{"decision":"allow"}``, since ``{}``
there denies the tool call. PreInvocation runs before every model call, so the
session-start and ``busy`` repeat (lich takes both again as they are). The title is the
conversation's first ``USER_INPUT``, its ``<USER_REQUEST>`` tags removed.
"""

import os

from lichhook.adapter import Report
from ._fields import BuiltinAdapter, busy_with, mapping_at, string_at, titled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from lichhook.adapter import Event

SID = "a1604c72-3091-449e-a60b-27da041f8ca2"


class Antigravity(BuiltinAdapter):
    provider = "antigravity"
    sample = {
        "conversationId": SID,
        "workspacePaths": ["/home/u/proj"],
        "transcriptPath": f"/home/u/.gemini/antigravity-cli/brain/{SID}/.system_generated/logs/transcript_full.jsonl",
        "artifactDirectoryPath": f"/home/u/.gemini/antigravity-cli/brain/{SID}",
        "modelName": "gemini-3.5-flash",
        "invocationNum": 0,
        "initialNumSteps": 0,
    }

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        return string_at(payload, "conversationId")

    def reports(self, event: "Event") -> "List[Report]":
        p, name = event.payload, event.name
        sid = self.session_id(p, event.environ)
        if name == "PreInvocation":
            out = [Report.start(sid), Report.state("busy", provider_session_id=sid)]
            if event.last_title is None:  # it runs before every model call: look once
                out += titled(first_user_input(p.get("transcriptPath")), sid)
            return out
        tool = string_at(p, "toolCall", "name")
        if name == "PreToolUse":
            return busy_with(tool, mapping_at(p, "toolCall", "args"), workspace(p), sid)
        if name == "PostToolUse":
            return [Report.touched(sid)] if self.writes_files(tool) else []
        if name == "Stop":
            title = first_user_input(p.get("transcriptPath"))
            return [Report.state("done", provider_session_id=sid)] + titled(title, sid)
        return []

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        transcript = os.path.join(folder, "transcript_full.jsonl")
        with open(transcript, "w", encoding="utf-8") as f:
            f.write('{"type":"USER_INPUT","content":"<USER_REQUEST>\\nWrite hi into f.txt\\n</USER_REQUEST>"}\n')
        base = {"conversationId": SID, "workspacePaths": [folder], "transcriptPath": transcript,
                "artifactDirectoryPath": folder, "modelName": "gemini-3.5-flash"}
        run = {"toolCall": {"name": "run_command", "args": {"CommandLine": "echo hi > f.txt", "Cwd": folder}},
               "stepIdx": 2}
        return [
            ("PreInvocation", dict(base, invocationNum=0, initialNumSteps=0)),
            ("PreToolUse", dict(base, **run)),
            ("PostToolUse", dict(base, **run)),
            ("PreInvocation", dict(base, invocationNum=1, initialNumSteps=3)),
            ("Stop", dict(base, executionNum=1, terminationReason="NO_TOOL_CALL", fullyIdle=True)),
        ]


def workspace(payload: "Mapping[str, Any]") -> "Optional[str]":
    paths = payload.get("workspacePaths")
    if isinstance(paths, list) and paths and isinstance(paths[0], str):
        return paths[0]
    return None


def first_user_input(transcript: object) -> "Optional[str]":
    """The first USER_INPUT's text, tags removed (read at most 1 MiB from the start)."""
    from lichhook import transcripts

    for record in transcripts.records_with(transcript, (b"USER_INPUT",)):
        if record.get("type") != "USER_INPUT":
            continue
        content = record.get("content")
        if isinstance(content, str):
            return content.replace("<USER_REQUEST>", "").replace("</USER_REQUEST>", "")
    return None


ADAPTER = Antigravity()
