"""lich's side of the ``X-Lich-Plugin`` header: which plugin releases it vouches for.

lich (``internal/agentplugin/compat.go``, ``internal/semver/semver.go``) reads the header
as a version and warns, once per session and release, when it lies outside
[``FLOOR``, ``CEILING``); the report is applied either way. Its version reading is
lenient, and this module reads exactly as it does: a leading ``v`` is dropped, so is
``+build``; ``-anything`` makes a pre-release, lower than the release itself; the first
three dot-separated parts are read as integers, a missing or unreadable one counting 0
(``0.18`` is 0.18.0, ``v0.18.0-rc.1`` is just below 0.18.0, an absent header is 0.0.0).

Only the stand-in and the tests use this; what lichhook sends is
``lichhook.contracts.RELEASE``.
"""

from __future__ import annotations

from typing import Optional, Tuple

# The newest range found in lich's source (compat.go at 04690201): 0.13.0 is the first
# release to send the header, 0.19.0 the first past the newest contract lich implements.
FLOOR = "0.13.0"
CEILING = "0.19.0"

_INT64 = (1 << 63) - 1


def go_atoi(text: str) -> int:
    """Go's ``strconv.Atoi`` as ``semver.parse`` uses it (errors read as 0): an optional
    sign and ASCII digits; a value past the 64-bit range is clamped to it."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or any(c not in "0123456789" for c in digits):
        return 0
    value = int(digits)
    if text[:1] == "-":
        return max(-value, -_INT64 - 1)
    return min(value, _INT64)


def parse(version: Optional[str]) -> Tuple[int, int, int, int]:
    """(major, minor, patch, rank) as lich compares them; rank 0 is a pre-release."""
    text = version or ""
    if text.startswith("v"):
        text = text[1:]
    text = text.split("+", 1)[0]
    rank = 1
    if "-" in text:
        text, rank = text.split("-", 1)[0], 0
    parts = [go_atoi(part) for part in text.split(".", 2)]
    parts += [0] * (3 - len(parts))
    return parts[0], parts[1], parts[2], rank


def less(a: Optional[str], b: Optional[str]) -> bool:
    """lich's ``semver.Less``: whether ``a`` is strictly older than ``b``."""
    return parse(a) < parse(b)


def compatible(header: Optional[str]) -> bool:
    """Whether lich takes an ``X-Lich-Plugin`` value without a warning."""
    return not less(header, FLOOR) and less(header, CEILING)
