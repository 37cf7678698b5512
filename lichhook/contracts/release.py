"""The lich-plugin releases, which of them lich accepts, and which one lichhook claims.

lichhook stands where lich reads lich-plugin (installed_plugins.json, ``codex plugin list``,
the marker lines, the ``X-Lich-Plugin`` header), so it names a lich-plugin release; this
module owns every fact that choice rests on (docs/version.md): the releases published and
what each adds (``RELEASES``), the ones lichhook does all of (``IMPLEMENTED``), the range
each lich release accepts (``RANGES``, measured in lich's ``compat.go``) and the rule
(``claim``).

lich (``internal/agentplugin/compat.go``, ``internal/semver/semver.go``) reads the header
as a version and warns, once per session and release, when it lies outside
[``FLOOR``, ``CEILING``); the report is applied either way. Its version reading is
lenient, and this module reads exactly as it does: a leading ``v`` is dropped, so is
``+build``; ``-anything`` makes a pre-release, lower than the release itself; the first
three dot-separated parts are read as integers, a missing or unreadable one counting 0
(``0.18`` is 0.18.0, ``v0.18.0-rc.1`` is just below 0.18.0, an absent header is 0.0.0).

Hooks do not import this: what they send is the claim install wrote beside their archive,
else ``lichhook.contracts.RELEASE`` (``claim(None)``).
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

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
    # int() refuses more than 4300 digits (Python 3.11 on); past 19 the value is clamped anyway.
    digits = digits.lstrip("0") or "0"
    value = int(digits) if len(digits) <= 19 else _INT64 + 1
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
    """Whether lich takes an ``X-Lich-Plugin`` value without a warning: the newest range."""
    return within(header, (FLOOR, CEILING))


# -- the releases ------------------------------------------------------------------------

# Every lich-plugin release from the floor on (lich-plugin CHANGELOG.md @021ad409; 0.19.0 and
# 0.19.2 are named in lich's claude_test.go, 0.20.0 in lich-plugin's mods): the harnesses
# whose plugin it changes ("*": every one) and what lichhook must do there before it may
# name it. A number promises everything up to it, on the harnesses each release changed.
RELEASES: Dict[str, Tuple[str, str]] = {
    "0.13.0": ("*", "every report names its release in X-Lich-Plugin; the theme skill knows formatVersion "
                    "and a pack's minLichVersion"),
    "0.13.1": ("", "nothing a harness or lich sees (the plugin's own tests)"),
    "0.13.2": ("opencode", "send_to_session takes `private` (lich send --private)"),
    "0.14.0": ("claude", "mod-control: prompt, abort, model and effort overrides, compact (no lich read "
                         "sends `compact`: lich's mod-control has `command` since its first version)"),
    "0.15.0": ("claude", "sub-agent cards (Agent becomes `lich open --subagent`, TaskStop closes a shared "
                         "worker and ends the turn of one on its own worktree, the worker count); mod `command` and "
                         "`ask`; mod-usage; the edit guard"),
    "0.15.1": ("claude", "a worker paused on a background command comes back as backgrounded"),
    "0.16.0": ("claude", "a worker's report arrives as a task notification"),
    "0.17.0": ("claude", "a worker answers through /mod/answer; the edit guard names card labels"),
    "0.18.0": ("claude", "the footer shows the session's errands (mod-status, the worker count left out "
                         "meanwhile) and the edits of the other cards, drawn dim among the footer's mode labels "
                         "(`ui.render` SessionMode), no longer as Claude Code's status warning"),
    "0.18.1": ("claude", "StopFailure ends the turn as done"),
    "0.18.2": ("claude codex antigravity", "the theme skill knows tone-pass and tone-wait"),
    "0.18.3": ("claude codex antigravity", "the theme validator agrees with lich on formatVersion 0, "
                                           "source, *.json folders"),
    "0.18.4": ("claude codex antigravity opencode", "opencode: lich's 14 tools; the theme validator takes "
                                                    "formatVersion null"),
    "0.19.0": ("*", "workers open cards of their own (LICH_SUBAGENT_DEPTH); not read in full"),
    "0.19.2": ("*", "not read"),
    "0.20.0": ("*", "not read"),
}
# The releases lichhook does everything of, on the harnesses each changed (docs/version.md
# has the audit: each promise and where lichhook keeps it). One left out caps the claims of
# those harnesses below it.
IMPLEMENTED = frozenset({"0.13.0", "0.13.1", "0.13.2", "0.14.0", "0.15.0", "0.15.1", "0.16.0", "0.17.0",
                         "0.18.0", "0.18.1", "0.18.2", "0.18.3", "0.18.4"})

# What lich keys on the version (internal/agentplugin/claude.go, compat.go): the installed
# Claude Code plugin at SUBAGENT_CARDS or later routes sub-agents to cards, at NESTED_CARDS
# lets workers open their own; the header at MOD_ANSWERS with a polling mod hands a worker
# its task without a ticket.
SUBAGENT_CARDS = "0.15.0"
NESTED_CARDS = "0.19.0"
MOD_ANSWERS = "0.17.0"

# lich release -> [floor, ceiling) of its compat.go, each read at a commit that went into
# that release (97e26d49, 274b3d51, 04690201). The range starts with lich 0.51.0; an older
# lich checks none and offers the newest published release.
RANGES: Tuple[Tuple[str, str, str], ...] = (
    ("0.51.0", "0.13.0", "0.14.0"),
    ("0.60.0", "0.13.0", "0.18.0"),
    ("0.61.0", "0.13.0", "0.19.0"),
)


def range_of(lich: Optional[str]) -> Optional[Tuple[str, str]]:
    """The [floor, ceiling) lich ``lich`` accepts, as measured at the newest release in
    RANGES not after it; None for a lich that checks no range (before 0.51.0) or unknown."""
    if lich is None:
        return None
    found = None
    for since, floor, ceiling in RANGES:
        if not less(lich, since):
            found = (floor, ceiling)
    return found


def within(version: Optional[str], bounds: Tuple[str, str]) -> bool:
    """compat.go's ``Compatible`` for the range ``bounds``."""
    return not less(version, bounds[0]) and less(version, bounds[1])


def newest_within(tags: Iterable[str], bounds: Optional[Tuple[str, str]]) -> str:
    """compat.go's ``newestCompatible``: the newest of ``tags`` inside ``bounds``, or "";
    with no range (a lich before 0.51.0), the newest of all, as /releases/latest gives."""
    best = ""
    for tag in tags:
        if (bounds is None or within(tag, bounds)) and (best == "" or less(best, tag)):
            best = tag
    return best


def update_offered(installed: str, latest: str, bounds: Optional[Tuple[str, str]]) -> bool:
    """lich's ``UpdateAvailable``: below the newest compatible release, or outside the range
    with one known (agentplugin_test.go TestComputeStatus)."""
    if not latest:
        return False
    return less(installed, latest) or (bounds is not None and not within(installed, bounds))


def claimable(harness: str) -> Tuple[str, ...]:
    """The releases lichhook may name for ``harness``: it does everything that each release
    up to that one changed there."""
    out = []
    for version in sorted(RELEASES, key=parse):
        where = RELEASES[version][0]
        if version not in IMPLEMENTED and (where == "*" or harness in where.split()):
            break
        out.append(version)
    return tuple(out)


def claim(lich: Optional[str], harness: str) -> str:
    """The release lichhook names in ``harness`` for lich ``lich``: the newest it may claim
    inside that lich's range; for an unknown lich (None), or one that checks no range, the
    newest inside every range known (that lich may offer an update, but reads it as supported)."""
    bounds = range_of(lich)
    if bounds is not None:
        found = newest_within(claimable(harness), bounds)
        if found:
            return found
    everywhere = (max((r[1] for r in RANGES), key=parse), min((r[2] for r in RANGES), key=parse))
    return newest_within(claimable(harness), everywhere) or FLOOR
