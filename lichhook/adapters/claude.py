"""Claude Code: command hooks on SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
Notification, Stop, StopFailure, PreCompact, PostCompact and SessionEnd.

Every payload names the session ``session_id``, the working folder ``cwd`` and the
transcript ``transcript_path``. Claude adds the stdout of SessionStart and
UserPromptSubmit hooks to the model's context, so every verdict is empty. The title is
the newest ``{"type":"ai-title","aiTitle":...}`` line Claude appends to the transcript
(interactive sessions only, a few seconds into the first turn): looked for after each
tool until one is known, and at every Stop (a later one replaces it).
"""

import os

from ._fields import CommandHook

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

SID = "9f1c7c1e-8f2a-4c3b-9d5e-2a7b6c4d1e05"


class ClaudeCode(CommandHook):
    provider = "claude"
    waiting = {"Notification": "message"}
    failed = ("StopFailure",)
    sample = {
        "session_id": SID,
        "transcript_path": f"/home/u/.claude/projects/-home-u-proj/{SID}.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-sonnet-5",
    }

    def title(self, payload: "Mapping[str, Any]") -> "Optional[str]":
        return ai_title(payload.get("transcript_path"))

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        transcript = os.path.join(folder, f"{SID}.jsonl")
        with open(transcript, "w", encoding="utf-8") as f:
            f.write('{"type":"user","message":{"role":"user","content":"Write hi into f.txt"},'
                    '"sessionId":"%s"}\n' % SID)
            f.write('{"type":"ai-title","aiTitle":"Write hi into f.txt","sessionId":"%s"}\n' % SID)
        base = {"session_id": SID, "transcript_path": transcript, "cwd": folder}
        bash = {"tool_name": "Bash", "tool_input": {"command": "echo hi > f.txt", "description": "Write hi into f.txt"},
                "tool_use_id": "toolu_01"}
        write = {"tool_name": "Write", "tool_input": {"file_path": os.path.join(folder, "g.txt"), "content": "hello\n"},
                 "tool_use_id": "toolu_02"}
        return [
            ("SessionStart", dict(base, hook_event_name="SessionStart", source="startup", model="claude-sonnet-5")),
            ("UserPromptSubmit", dict(base, hook_event_name="UserPromptSubmit", prompt="Write hi into f.txt",
                                      permission_mode="default")),
            ("PreToolUse", dict(base, hook_event_name="PreToolUse", permission_mode="default", **bash)),
            ("Notification", dict(base, hook_event_name="Notification", notification_type="permission_prompt",
                                  message="Claude needs your permission to use Bash")),
            ("PostToolUse", dict(base, hook_event_name="PostToolUse", tool_response={"stdout": "", "stderr": ""},
                                 **bash)),
            ("PreToolUse", dict(base, hook_event_name="PreToolUse", permission_mode="default", **write)),
            ("PostToolUse", dict(base, hook_event_name="PostToolUse", **write)),
            ("Stop", dict(base, hook_event_name="Stop", stop_hook_active=False, last_assistant_message="Done.")),
            ("SessionEnd", dict(base, hook_event_name="SessionEnd", reason="prompt_input_exit")),
        ]


def ai_title(transcript_path: object) -> "Optional[str]":
    """The newest ai-title in the transcript (read back at most 1 MiB from its end)."""
    from lichhook import transcripts

    record = transcripts.record(transcripts.last_line_with(transcript_path, b'"ai-title"'))
    if record is not None and record.get("type") == "ai-title":
        title = record.get("aiTitle")
        return title if isinstance(title, str) else None
    return None


ADAPTER = ClaudeCode()
