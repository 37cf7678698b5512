"""``lichhook theme``: checks a lich colour theme, or a theme repository, by the rules lich
applies when it imports one (lich ``docs/themes.md``, ``internal/themes``), so a theme
written by hand or by a model is known good before the user imports it; and names the
folder lich keeps imported themes in. The skill ``/lich:theme`` runs it.

``problems`` and ``pack_problems`` are pure: a parsed document in, the user's fixes out.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Dict, List, Mapping, Optional, Pattern, Sequence, Tuple

from lichhook.contracts import release

# The app tokens of lich's bundled themes; lich 0.53.0 added the two status tones.
APP_TOKENS = (
    "background", "foreground", "card", "card-foreground", "popover", "popover-foreground", "primary",
    "primary-foreground", "secondary", "secondary-foreground", "muted", "muted-foreground", "accent",
    "accent-foreground", "destructive", "border", "input", "ring", "chart-1", "chart-2", "chart-3", "chart-4",
    "chart-5", "sidebar", "sidebar-foreground", "sidebar-primary", "sidebar-primary-foreground", "sidebar-accent",
    "sidebar-accent-foreground", "sidebar-border", "sidebar-ring")
TONES = ("tone-pass", "tone-wait")
TONES_FROM = "0.53.0"
NEWEST = TONES_FROM  # the lich whose rules apply unless --lich names another
TERMINAL_TOKENS = (
    "background", "foreground", "cursor", "cursorAccent", "selectionBackground", "selectionForeground", "black",
    "red", "green", "yellow", "blue", "magenta", "cyan", "white", "brightBlack", "brightRed", "brightGreen",
    "brightYellow", "brightBlue", "brightMagenta", "brightCyan", "brightWhite")
# What CSS takes and can neither fetch nor defer (no url(), var(), color-mix() ...).
APP_COLOR = re.compile(r"(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(rgb|rgba|hsl|hsla|oklch|oklab|lab|lch|color)"
                       r"\([0-9a-zA-Z.,%/ +-]*\))")
HEX = re.compile(r"#[0-9a-fA-F]{3,8}")  # xterm half-applies anything else, silently
ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
RESERVED = {"light", "dark", "system", "match", "con", "prn", "aux", "nul",
            *(f"com{n}" for n in range(1, 10)), *(f"lpt{n}" for n in range(1, 10))}
RELEASE = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+")  # ASCII digits alone, as Go's strconv.Atoi reads them
FORMAT = 1  # the theme format lich's docs describe
MAX_TEXT = 128
MAX_FILE = 1 << 20
MAX_THEMES = 32
MANIFEST = "lich-theme.json"


def app_tokens(lich: str = NEWEST) -> tuple:
    return APP_TOKENS + (() if release.less(lich, TONES_FROM) else TONES)


def _colors(out: List[str], doc: dict, group: str, allowed: Sequence[str], pattern: Pattern[str],
            required: Sequence[str], how: str) -> None:
    colors = doc.get(group)
    if not isinstance(colors, dict):
        out.append(f"{group} is required: an object of colours")
        return
    for key, value in colors.items():
        if key not in allowed:
            out.append(f"{group}.{key} is not a colour lich knows; take it out (lich refuses unknown tokens)")
        elif not isinstance(value, str) or not value.strip():
            out.append(f"{group}.{key} must be a colour, not {json.dumps(value)}")
        elif len(value.strip()) > MAX_TEXT or not pattern.fullmatch(value.strip()):
            out.append(f"{group}.{key} = {json.dumps(value)} is not a colour lich takes there; use {how}")
    missing = [key for key in required if key not in colors]
    if missing:
        out.append(f"{group} lacks {', '.join(missing)}: lich requires {'each' if len(missing) > 1 else 'it'}")


def problems(doc: object, lich: str = NEWEST) -> List[str]:
    """Why lich ``lich`` would refuse to import ``doc`` (a parsed theme); none when it takes it."""
    if not isinstance(doc, dict):
        return ["a theme is a JSON object"]
    out: List[str] = []
    ident = doc.get("id")
    if not isinstance(ident, str) or not ID.fullmatch(ident):
        out.append(f"id {json.dumps(ident)} must be 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit")
    elif ident in RESERVED:
        out.append(f"id {json.dumps(ident)} is reserved (lich's own themes, or a Windows device name); pick another")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_TEXT:
        out.append(f"name is required: a non-blank text of at most {MAX_TEXT} characters")
    if doc.get("scheme") not in ("light", "dark"):
        out.append('scheme must be "light" or "dark", as the palette is (it switches lich\'s dark styles)')
    if not _format(doc):
        out.append(f"formatVersion must be {FORMAT} (the format lich reads), or left out")
    for key in ("origin", "$schema"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], str):
            out.append(f"{key} must be a text, or left out")
    source = doc.get("source")
    if source is not None and not (isinstance(source, dict) and all(
            isinstance(source.get(k, ""), str) for k in ("url", "version"))):
        out.append("source must be {url, version}; lich writes it itself, so leave it out")
    _colors(out, doc, "app", app_tokens(lich), APP_COLOR, app_tokens(lich),
            "hex (#rgb to #rrggbbaa), a CSS colour name or rgb()/hsl()/oklch()/oklab()/lab()/lch()/color()")
    _colors(out, doc, "terminal", TERMINAL_TOKENS, HEX, ("background", "foreground"), "hex (#rgb to #rrggbbaa)")
    return out


def _format(doc: dict) -> bool:
    # 0 and null read as left out; a number lich's JSON would not decode as a whole one is refused
    version = doc.get("formatVersion")
    return version is None or (type(version) is int and version in (0, FORMAT))


def manifest_problems(doc: object, lich: str = NEWEST) -> List[str]:
    """Why lich ``lich`` would refuse ``doc`` as a repository's ``lich-theme.json``."""
    if not isinstance(doc, dict):
        return [f"{MANIFEST} is a JSON object"]
    out = []
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_TEXT:
        out.append(f"{MANIFEST}: name is required: a non-blank text of at most {MAX_TEXT} characters")
    version = doc.get("version")
    if not isinstance(version, str) or not RELEASE.fullmatch(version.strip()):
        out.append(f"{MANIFEST}: version {json.dumps(version)} must be MAJOR.MINOR.PATCH (no pre-release)")
    least = doc.get("minLichVersion")
    if least not in (None, "") and not (isinstance(least, str) and RELEASE.fullmatch(least)):
        out.append(f"{MANIFEST}: minLichVersion {json.dumps(least)} must be MAJOR.MINOR.PATCH")
    elif isinstance(least, str) and least and release.less(lich, least):
        out.append(f"{MANIFEST}: the pack needs lich {least.lstrip('v')} or newer (checked for {lich})")
    if not _format(doc):
        out.append(f"{MANIFEST}: formatVersion must be {FORMAT}, or left out")
    return out


def _read(path: str) -> object:
    # getsize first: a path that is not there raises the OSError that says so
    if os.path.getsize(path) > MAX_FILE or not os.path.isfile(path):
        raise ValueError(f"not a file of at most {MAX_FILE} bytes")
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def check_file(path: str, lich: str) -> Tuple[Optional[str], List[str]]:
    """The theme's id (None when it has none) and its problems."""
    try:
        doc = _read(path)
    except (OSError, ValueError, RecursionError) as exc:
        return None, [f"cannot be read as JSON: {exc}"]
    found = problems(doc, lich)
    ident = doc.get("id") if isinstance(doc, dict) and isinstance(doc.get("id"), str) else None
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if not found and folder in ("themes", "themes-dev") and os.path.basename(path) != f"{ident}.json":
        found.append(f"in lich's themes folder a theme is read only as <id>.json: rename it {ident}.json")
    return ident, found


def check_pack(folder: str, lich: str) -> Dict[str, List[str]]:
    """Each file of a theme repository and its problems, as lich installs it: all or nothing."""
    found: Dict[str, List[str]] = {}
    try:
        found[MANIFEST] = manifest_problems(_read(os.path.join(folder, MANIFEST)), lich)
    except (OSError, ValueError, RecursionError) as exc:
        found[MANIFEST] = [f"{MANIFEST} is required at the repository's root as JSON ({exc})"]
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n != MANIFEST
                   and os.path.isfile(os.path.join(folder, n)))
    if not names or len(names) > MAX_THEMES:
        found[MANIFEST].append(f"a repository holds 1 to {MAX_THEMES} themes beside {MANIFEST}; it has {len(names)}")
    owners: Dict[str, str] = {}
    for name in names:
        ident, found[name] = check_file(os.path.join(folder, name), lich)
        if ident is not None and ident in owners:
            found[name].append(f"id {ident!r} is also {owners[ident]}'s: each theme needs its own")
        if ident is not None:
            owners.setdefault(ident, name)
    return found


def config_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Optional[str]:
    """Where lich keeps imported themes (Go's os.UserConfigDir, then lich/themes)."""
    if platform == "win32":
        base = environ.get("AppData") or environ.get("APPDATA")
    elif platform == "darwin":
        base = os.path.join(environ["HOME"], "Library", "Application Support") if environ.get("HOME") else None
    elif environ.get("XDG_CONFIG_HOME"):
        # Go refuses a relative one, and lich then keeps no themes at all
        base = environ["XDG_CONFIG_HOME"] if environ["XDG_CONFIG_HOME"].startswith("/") else None
    else:
        base = os.path.join(environ["HOME"], ".config") if environ.get("HOME") else None
    return os.path.join(base, "lich", "themes-dev" if environ.get("LICH_DEV") else "themes") if base else None


USAGE = """\
usage: lichhook theme check [--lich VERSION] <theme.json | repository folder> ...
       lichhook theme where
  check   says whether lich imports each theme (a repository: its lich-theme.json and every
          theme beside it); exit 0 when all pass, 1 otherwise. --lich checks by an older lich's
          rules (before 0.53.0 the tone-pass and tone-wait colours are unknown to it).
  where   prints the folder lich keeps imported themes in."""


def main(argv: List[str]) -> int:
    if argv[:1] == ["where"] and len(argv) == 1:
        folder = config_dir(os.environ)
        print(folder or "lichhook: lich's config folder is unknown: HOME (AppData on Windows) is not set, or "
              "XDG_CONFIG_HOME is not an absolute path")
        return 0 if folder else 1
    paths, lich = argv[1:], NEWEST
    if argv[:1] == ["check"] and paths[:1] == ["--lich"]:
        if len(paths) < 2 or not RELEASE.fullmatch(paths[1]):
            print("lichhook theme check: --lich takes a lich release, such as 0.52.0", file=sys.stderr)
            return 2
        lich, paths = paths[1].lstrip("v"), paths[2:]
    if argv[:1] != ["check"] or not paths:
        print(USAGE, file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        results = check_pack(path, lich) if os.path.isdir(path) else {"": check_file(path, lich)[1]}
        for name, found in results.items():
            shown = os.path.join(path, name) if name else path
            failed = failed or bool(found)
            print(f"{shown}: " + (f"{len(found)} problem{'s' if len(found) > 1 else ''}" if found else f"ok for lich {lich}"))
            for line in found:
                print(f"  - {line}")
    return 1 if failed else 0
