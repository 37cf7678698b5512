"""Codex CLI: command hooks on SessionStart, UserPromptSubmit, PreToolUse,
PermissionRequest, PostToolUse, Stop, PreCompact, PostCompact and SessionEnd.

Payloads name the session ``session_id`` (a sub-agent's hooks carry its parent's, with
``agent_id``), the working folder ``cwd`` and the rollout ``transcript_path``. Codex adds
the stdout of SessionStart and UserPromptSubmit to the model's context, takes any stdout
of PreToolUse as a decision and refuses plain text from Stop, so every verdict is empty.
``apply_patch`` carries the whole patch as ``tool_input.command``: the card shows the
files it names. The title is the thread's first user message, read from the head of
the rollout (never from a sub-agent's, which its own hooks point at).
"""

import os

from ._fields import CommandHook, string_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

SID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"
# A user message in a rollout: an item_completed UserMessage (0.171 and later) or a
# user_message event (earlier releases); the harness's own context goes in other items.
_USER_MARKERS = (b'"UserMessage"', b'"user_message"')


class Codex(CommandHook):
    provider = "codex"
    waiting = {"PermissionRequest": ""}  # no sentence of its own: the tool and what it acts on
    sample = {
        "session_id": SID,
        "transcript_path": f"/home/u/.codex/sessions/2026/11/30/rollout-2026-11-30T09-00-00-{SID}.jsonl",
        "cwd": "/home/u/proj",
        "hook_event_name": "SessionStart",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "source": "startup",
    }

    def title(self, payload: "Mapping[str, Any]") -> "Optional[str]":
        """The thread's title, never from a sub-agent's rollout (its own hooks point at it)."""
        if string_at(payload, "agent_id"):
            return None
        return first_user_message(payload.get("transcript_path"))

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        rollout = os.path.join(folder, f"rollout-2026-11-30T09-00-00-{SID}.jsonl")
        with open(rollout, "w", encoding="utf-8") as f:
            f.write('{"type":"session_meta","payload":{"id":"%s","cwd":"%s","originator":"codex-tui"}}\n'
                    % (SID, folder.replace("\\", "\\\\")))
            f.write('{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage",'
                    '"content":[{"type":"text","text":"Write hi into f.txt"}]}}}\n')
        base = {"session_id": SID, "transcript_path": rollout, "cwd": folder, "model": "gpt-5.5",
                "permission_mode": "default"}
        patch = {"tool_name": "apply_patch",
                 "tool_input": {"command": "*** Begin Patch\n*** Add File: g.txt\n+hello\n*** End Patch\n"}}
        return [
            ("SessionStart", dict(base, hook_event_name="SessionStart", source="startup")),
            ("UserPromptSubmit", dict(base, hook_event_name="UserPromptSubmit", turn_id="t1",
                                      prompt="Write hi into f.txt")),
            ("PreToolUse", dict(base, hook_event_name="PreToolUse", turn_id="t1", tool_use_id="call_1", **patch)),
            ("PermissionRequest", dict(base, hook_event_name="PermissionRequest", turn_id="t1", **patch)),
            ("PostToolUse", dict(base, hook_event_name="PostToolUse", turn_id="t1", tool_use_id="call_1",
                                 tool_response="Success. Updated the following files:\nA g.txt\n", **patch)),
            ("Stop", dict(base, hook_event_name="Stop", turn_id="t1", stop_hook_active=False,
                          last_assistant_message="Done.")),
            ("SessionEnd", dict(base, hook_event_name="SessionEnd", reason="other")),
        ]


def first_user_message(rollout: object) -> "Optional[str]":
    """The text of the first user message in the rollout (read at most 1 MiB from its start)."""
    from lichhook import transcripts

    for record in transcripts.records_with(rollout, _USER_MARKERS):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        message = payload.get("message")
        if payload.get("type") == "user_message" and isinstance(message, str):
            return message
        item = payload.get("item")
        if payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage":
            parts = item.get("content")
            texts = [part.get("text") for part in (parts if isinstance(parts, list) else []) if isinstance(part, dict)]
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


ADAPTER = Codex()
