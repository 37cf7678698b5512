"""Whether Codex trusts a hook: the key and hash Codex keeps for each command hook.

Codex runs a hook from ``hooks.json`` only once the user has trusted it (the TUI's
"Trust all and continue", or ``/hooks``). The trust lives in ``config.toml``:

    [hooks.state."<hooks.json path>:<event label>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"
    enabled = false            # only when the user turned the hook off

The key is positional: the real path of Codex's folder (symbolic links resolved) joined
with ``hooks.json``, the event's snake-case label, the index of the matcher group in the
event's list and of the handler in the group. The hash is over a normalised form of the
handler, not its text, so reformatting ``hooks.json`` keeps the trust and changing what
runs loses it:

    {"event_name": <label>, "matcher": <the group's matcher, when the event has them>,
     "hooks": [{"type": "command", "command": <command>, "timeout": <seconds>,
                "async": <bool>, "statusMessage": ..., "additionalContextLimit": ...}]}

with absent values left out, ``timeout`` as Codex applies it (600 when absent, at least
1; SessionEnd and Interrupt: 1 when absent, 1 to 3), ``command`` the ``commandWindows``
line on Windows when there is one, keys sorted at every level, no spaces, UTF-8,
SHA-256. Codex 0.171.0 (``codex-rs/hooks`` discovery, ``version_for_toml``); every
rule above was checked against the ``currentHash`` that Codex's own ``hooks/list``
answers, and against the hash its TUI wrote when trusting lichhook's hook.

Pure functions only: the caller reads the files.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional

# hooks.json event name -> the label Codex uses in keys and hashes
LABELS = {
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt_submit",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Stop": "stop",
    "Interrupt": "interrupt",
}
# Events whose groups take no matcher: Codex leaves it out of the hash.
NO_MATCHER = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})
# Events Codex bounds tightly: timeout 1 s when absent, at most 3 s.
SHORT = frozenset({"SessionEnd", "Interrupt"})
TOML_INT_MAX = 2 ** 63 - 1

TRUSTED = "trusted"
UNTRUSTED = "untrusted"
MODIFIED = "modified"


def key(hooks_json: str, event: str, group: int, handler: int) -> str:
    """The ``[hooks.state."..."]`` key; ``hooks_json`` with its folder's links resolved."""
    return f"{hooks_json}:{LABELS[event]}:{group}:{handler}"


def _count(value: object) -> Optional[int]:
    """A non-negative integer as Codex reads one (no bool, no float), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > TOML_INT_MAX:
        return None
    return value


def _timeout(event: str, value: object) -> Optional[int]:
    if value is None:
        return 1 if event in SHORT else 600
    seconds = _count(value)
    if seconds is None:
        return None
    seconds = max(seconds, 1)
    return min(seconds, 3) if event in SHORT else seconds


def identity(event: str, group: Mapping[str, Any], handler: Mapping[str, Any], windows: bool) -> Optional[dict]:
    """The normalised form Codex hashes, or None when Codex would not run this handler
    as a command hook (another type, an empty command, a value of the wrong type)."""
    if event not in LABELS or handler.get("type") != "command":
        return None
    command = handler.get("command")
    if windows:
        for name in ("commandWindows", "command_windows"):
            if handler.get(name) is not None:
                command = handler.get(name)
                break
    if not isinstance(command, str) or not command.strip():
        return None
    timeout = _timeout(event, handler.get("timeout"))
    run_async = handler.get("async", False)
    if timeout is None or not isinstance(run_async, bool):
        return None
    normal: dict = {"type": "command", "command": command, "timeout": timeout, "async": run_async}
    status = handler.get("statusMessage")
    if status is not None:
        if not isinstance(status, str):
            return None
        normal["statusMessage"] = status
    limit = handler.get("additionalContextLimit")
    if limit is not None:
        if _count(limit) is None:
            return None
        normal["additionalContextLimit"] = limit
    out: dict = {"event_name": LABELS[event], "hooks": [normal]}
    matcher = group.get("matcher")
    if matcher is not None and event not in NO_MATCHER:
        if not isinstance(matcher, str):
            return None
        out["matcher"] = matcher
    return out


def hook_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any], windows: bool) -> Optional[str]:
    """``sha256:<hex>`` as Codex computes it for this handler, or None (see ``identity``)."""
    normal = identity(event, group, handler, windows)
    if normal is None:
        return None
    text = json.dumps(normal, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: Codex cannot read such a file at all
        return None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def records(config: Mapping[str, Any]) -> dict:
    """``config.toml``'s ``[hooks.state]`` as {key: record}, records being tables."""
    hooks = config.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {k: v for k, v in state.items() if isinstance(v, dict)}


def status(current: str, record: Optional[Mapping[str, Any]]) -> str:
    """TRUSTED, MODIFIED (trusted once, changed since) or UNTRUSTED, as Codex decides."""
    trusted = record.get("trusted_hash") if record else None
    if not isinstance(trusted, str):
        return UNTRUSTED
    return TRUSTED if trusted == current else MODIFIED


def enabled(record: Optional[Mapping[str, Any]]) -> bool:
    """Codex runs a hook unless its record says ``enabled = false``."""
    return not (record and record.get("enabled") is False)
