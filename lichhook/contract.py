"""lich's side of the session-start contract, as pure functions.

The stand-in server (``listen``) and the tests judge reports with these rules, written
from lich's transport: POST only, the token in the query string, a body of at most
4 KiB that is a JSON object with ``session_id`` and an opaque ``provider_session_id``,
and a ``provider`` from lich's registry (absent means ``claude``).
"""

from __future__ import annotations

import json
from typing import Any

from lichhook.ids import lich_id_problem

# lich's provider registry (internal/providers/providers.go), in its order.
PROVIDERS = ("claude", "codex", "antigravity", "opencode", "omp", "crush", "cursor", "kiro")
BODY_LIMIT = 4096
# lich warns about (and still applies) reports from releases outside [floor, ceiling).
SUPPORTED_RELEASES = ((0, 13, 0), (0, 19, 0))


class Rejected(ValueError):
    """A body lich answers 400 to; the message is lich's reason."""


def parse_session_start(raw: bytes) -> dict[str, str]:
    """The normalised report lich would store, or Rejected with lich's reason."""
    if len(raw) > BODY_LIMIT:
        raise Rejected(f"body must be at most {BODY_LIMIT} bytes")
    try:
        # Go's decoder reads invalid UTF-8 in a string as U+FFFD. (No integer in 4 KiB
        # is long enough for Python's 4300-digit limit.)
        body: Any = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # Go's decoder refuses deep nesting too
        raise Rejected("body must be a JSON object") from None
    if not isinstance(body, dict):
        raise Rejected("body must be a JSON object")
    for key in ("session_id", "provider_session_id", "provider"):
        if key in body and body[key] is not None and not isinstance(body[key], str):
            raise Rejected("body must be a JSON object")  # Go's decoder refuses the type
        if isinstance(body.get(key), str):
            body[key] = go_string(body[key])
    provider = body.get("provider") or "claude"
    if not body.get("session_id"):
        raise Rejected("session_id is required")
    if not body.get("provider_session_id"):
        raise Rejected("provider_session_id is required")
    problem = lich_id_problem(body["provider_session_id"])
    if problem:
        raise Rejected(f"provider_session_id must be an opaque id ({problem})")
    if provider not in PROVIDERS:
        raise Rejected("provider must be a registered provider id")
    return {"session_id": body["session_id"], "provider_session_id": body["provider_session_id"], "provider": provider}


def go_string(text: str) -> str:
    """``text`` as Go's JSON decoder gives it: a lone surrogate (escaped as ``\\udXXX``)
    becomes U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def release_supported(header: str | None) -> bool:
    """Whether an X-Lich-Plugin value lies in lich's supported range (absent: no)."""
    try:
        version = tuple(int(part) for part in (header or "").strip().split("."))
    except ValueError:
        return False
    floor, ceiling = SUPPORTED_RELEASES
    return len(version) == 3 and floor <= version < ceiling
