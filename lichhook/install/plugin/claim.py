"""Which lich-plugin release lichhook names, for the lich on this machine (docs/version.md).

lich reads the release off what install writes (Claude Code's installed_plugins.json, ``codex
plugin list``, the marker lines) and off every report's ``X-Lich-Plugin``; it accepts a
range that moves with its own releases and offers the newest release inside it as an
update. So install asks the user's lich its version and names ``release.claim`` of it, one
number per harness: in the manifest or marker, in the Claude Code mods' ``release.js``, and
in the claims file beside the hooks archive (``lichhook.client.CLAIMS``), which the hooks
read for the header.

The lich asked: ``--lich-version`` (``OVERRIDE`` in the environment), else the binary
``lichtools.find_lich`` finds, run as ``lich version --json`` only when it is a lich that
answers it: one before 0.34.0 opens its window for any word it does not know, and only
from 0.34.0 does its binary hold ``GUARD``, its refusal of such a word. When none answers,
the lich the last install measured against (the claims file's ``lich`` line), so a version
given once is not undone by a later install or doctor.
"""

from __future__ import annotations

import json
import mmap
from typing import Dict, NamedTuple, Optional

from lichhook.contracts import release
from lichhook.install.plugin import harnesscli
from lichhook.install.errors import ConfigError
from lichhook.install.plugin.lichtools import find_lich
from lichhook.archive import running_bytecode
from lichhook.client import claims_path, plain, read_claims  # the claims file: "<harness> <release>" lines
from lichhook.install.copies import stable

LICH = "lich"  # the line of the claims file naming the lich the claims were chosen for

OVERRIDE = "LICHHOOK_LICH_VERSION"
GUARD = b"lich: unknown command"
ASK_SECONDS = 3.0  # lich answers `version` at once; one that does not is counted unknown


class Lich(NamedTuple):
    """The lich measured against: its ``version`` (None: unknown) and how it was learnt."""

    version: Optional[str]
    how: str


def answers_version(binary: str) -> bool:
    """Whether ``binary`` is a lich that takes ``version`` as a command (0.34.0 or later),
    read from its bytes without running it."""
    try:
        with open(binary, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(GUARD) >= 0
    except (OSError, ValueError):  # unreadable, or empty
        return False


def parsed(output: str) -> Optional[str]:
    """The version in ``lich version --json``'s answer (``{"cli", "server"}``, the running
    server's first) or in ``lich version``'s (``lich <version>``, before 0.51.0)."""
    text = output.strip()
    start = text.find("{")
    if start >= 0:
        try:
            doc = json.loads(text[start:])
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            for key in ("server", "cli"):
                if isinstance(doc.get(key), str) and plain(doc[key]):
                    return str(doc[key])
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "lich" and plain(words[1]):
            return words[1].lstrip("v")
    return None


def lich_seen(environ: Dict[str, str], windows: bool, remembered: Optional[str] = None) -> Lich:
    """The lich of this machine, as install and doctor measure against it; ``remembered``:
    the one the last install measured against, for when no lich answers."""
    found = _asked(environ, windows)
    if found.version is None and remembered and plain(remembered):
        return Lich(remembered, f"as the last install measured it; now {found.how}")
    return found


def _asked(environ: Dict[str, str], windows: bool) -> Lich:
    given = environ.get(OVERRIDE, "").strip()
    if given:
        if not plain(given.lstrip("v")):
            raise ConfigError(f"--lich-version {given!r} is not a lich version; give one as `lich version` "
                              "prints it (0.61.0)")
        return Lich(given.lstrip("v"), "given with --lich-version")
    binary, how = find_lich(environ, windows)
    if binary is None:
        return Lich(None, f"lich's binary is {how}")
    if not answers_version(binary):
        return Lich(None, f"{binary} ({how}) is older than lich 0.34.0 or not lich: not asked, as such a lich "
                          "opens its window for `version`")
    try:
        result = harnesscli.run(binary, ["version", "--json"], environ, timeout=ASK_SECONDS)
    except ConfigError as exc:
        return Lich(None, f"`{binary} version --json` failed: {exc}")
    version = parsed(result.output) if result.ok else None
    if version is None:
        return Lich(None, f"`{binary} version --json` ({how}) said no version: {harnesscli.said_line(result.output)}")
    return Lich(version, f"`lich version --json` of {binary} ({how})")


_SEEN: Dict[tuple, Lich] = {}


def lich_of(environ: Dict[str, str], windows: bool) -> Lich:
    """``lich_seen``, asked once per process for the same environment (every harness's plan
    and check asks)."""
    key = (windows, *(environ.get(k, "") for k in (OVERRIDE, "LICH_BIN", "PATH", "ProgramFiles")))
    if key not in _SEEN:
        remembered = read_claims(claims_path(stable.hooks_for(running_bytecode()))).get(LICH)
        _SEEN[key] = lich_seen(environ, windows, remembered)
    return _SEEN[key]


def claim_for(name: str, environ: Dict[str, str], windows: bool) -> str:
    """The release lichhook names in harness ``name`` for the lich of this machine."""
    return release.claim(lich_of(environ, windows).version, name)


def harness_claim(h: object) -> str:
    return claim_for(h.name, h.env.environ, h.env.windows)  # type: ignore[attr-defined]


# -- the claims file the hooks read ----------------------------------------------------


def claims_bytes(claims: Dict[str, str]) -> bytes:
    return "".join(f"{name} {version}\n" for name, version in sorted(claims.items())).encode("ascii")


# -- what lich shows: doctor ---------------------------------------------------------------


def shown(name: str, title: str, installed: str, environ: Dict[str, str], windows: bool) -> tuple:
    """(lines, problem or None) of what lich shows for lichhook's plugin installed at
    ``installed`` in harness ``name``, in lich's terms; the problem a (text, fix) pair."""
    lich = lich_of(environ, windows)
    bounds = release.range_of(lich.version)
    base = installed.split("+", 1)[0]
    lines = [f"lich: measured against {'lich ' + lich.version if lich.version else 'an unknown lich'} ({lich.how})"]
    if lich.version is None:
        lines.append("lich: a lich whose version is unknown may offer an update (a lich from 0.51.0 on offers the "
                     "newest release inside its range; offline, none); install --lich-version <version> names it")
    elif bounds is None:
        lines.append(f"lich: lich {lich.version} checks no range and offers the newest release published "
                     f"({release.newest_within(release.RELEASES, None)}) as an update")
    else:
        latest = release.newest_within(release.RELEASES, bounds)
        verdict = "compatible" if release.within(base, bounds) else "unsupported"
        lines.append(f"lich: shows {base} as {verdict} (lich {lich.version} takes {bounds[0]} up to below "
                     f"{bounds[1]}, measured at {_measured_at(lich.version)})")
        if release.update_offered(base, latest, bounds):
            after = {"claude": "accepting it replaces lichhook's Claude Code plugin with lich-plugin",
                     "codex": "accepting it fails for lichhook's local marketplace"}.get(
                name, "accepting it puts lich-plugin where lichhook's files are")
            lines.append(f"lich: offers an update to lich-plugin {latest} (the newest in its range, once online); "
                         f"{after}")
        else:
            lines.append("lich: offers no update")
    if name == "claude":
        cards = not release.less(base, release.SUBAGENT_CARDS)
        nests = not release.less(base, release.NESTED_CARDS)
        route = "cards" if cards else "`lich open` in its briefing"
        lines.append(f"lich: routes Claude Code sub-agents to {route} (cards from "
                     f"{release.SUBAGENT_CARDS}); workers {'open' if nests else 'do not open'} cards of their own "
                     f"(from {release.NESTED_CARDS})")
    want = release.claim(lich.version, name)
    problem = None
    if base != want:
        problem = (f"lich reads lichhook's plugin in {title} as {base}, but for "
                   f"{'lich ' + lich.version if lich.version else 'an unknown lich'} this lichhook names {want}",
                   f"run install {name} again")
    return lines, problem


def _measured_at(version: str) -> str:
    since = [r[0] for r in release.RANGES if not release.less(version, r[0])][-1]
    return f"lich {since}'s compat.go"
