"""Small readers shared by the built-in adapters."""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping


def string_at(payload: "Mapping[str, Any]", *path: str) -> "str | None":
    """Return the string at ``payload[path[0]][path[1]]...``, or None if any step is missing
    or the value is not a non-empty string."""
    node: Any = payload
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, str) and node else None
