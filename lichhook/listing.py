"""``lichhook adapters``: every provider lichhook can report, and where its adapter comes from."""

from __future__ import annotations

import os
from typing import Any

from lichhook import builtins
from lichhook.adapter import takes_events
from lichhook.cli import WORDS
from lichhook.host import PLUGIN_FOLDER, all_adapters
from lichhook.paths import plugin_dir
from lichhook.textout import tolerant_stdio


def events_of(adapter: Any) -> str:
    """How many named events an adapter takes: a count, "any", or "-" for an adapter with
    only the bare command (today's surface: a session id)."""
    if not takes_events(adapter):
        return "-"
    events = getattr(adapter, "events", None)
    if events is None:
        return "any"
    try:
        return str(len(list(events)))
    except TypeError:
        return "any"


def main(argv: list[str]) -> int:
    """List every provider and where its adapter comes from; what was skipped, and why."""
    if argv and argv[0] in ("-h", "--help"):
        print("usage: lichhook adapters\n\nList every provider lichhook can report and where its adapter comes from.")
        return 0
    tolerant_stdio()
    environ = os.environ
    problems: list[str] = []
    found = all_adapters(environ, problems.append, WORDS)
    builtin_ids = set(builtins.BUILTIN)
    print(f"{'provider':<14} {'verdict':<8} {'events':<8} source")
    for item in found:
        source = f"{item.tier}: {item.origin}"
        if item.tier == PLUGIN_FOLDER and item.adapter.provider in builtin_ids:
            source += " (replaces the built-in)"
        verdict = item.adapter.verdict or "-"
        print(f"{item.adapter.provider:<14} {verdict:<8} {events_of(item.adapter):<8} {source}")
    folder = plugin_dir(environ)
    print(f"\nplugin folder: {folder or '(LICHHOOK_PLUGIN_DIR is relative: ignored)'}")
    for message in problems:
        print(f"skipped: {message}")
    return 0
