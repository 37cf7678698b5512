"""``lichhook adapters``: every provider lichhook can report, and where its adapter comes from."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from lichhook.adapter import takes_events
from lichhook.adapters import BY_PROVIDER
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
        print("usage: lichhook adapters [--json]\n\nList every provider lichhook can report and where its adapter "
              "comes from (--json: for scripts, docs/schemas/adapters.json).")
        return 0
    if argv not in ([], ["--json"]):
        print(f"adapters takes only --json (got {' '.join(argv)}); run: lichhook adapters", file=sys.stderr)
        return 2
    tolerant_stdio()
    environ = os.environ
    problems: list[str] = []
    found = all_adapters(environ, problems.append, WORDS)
    rows = [{"provider": item.adapter.provider, "verdict": item.adapter.verdict or None,
             "events": events_of(item.adapter), "tier": item.tier, "origin": item.origin,
             "replaces_builtin": item.tier == PLUGIN_FOLDER and item.adapter.provider in BY_PROVIDER}
            for item in found]
    folder = plugin_dir(environ)
    if argv:
        print(json.dumps({"schema": 1, "adapters": rows, "plugin_folder": folder or None, "skipped": problems},
                         indent=2))
        return 0
    print(f"{'provider':<14} {'verdict':<8} {'events':<8} source")
    for row in rows:
        source = f"{row['tier']}: {row['origin']}" + (" (replaces the built-in)" if row["replaces_builtin"] else "")
        print(f"{row['provider']:<14} {row['verdict'] or '-':<8} {row['events']:<8} {source}")
    print(f"\nplugin folder: {folder or '(LICHHOOK_PLUGIN_DIR is relative: ignored)'}")
    for message in problems:
        print(f"skipped: {message}")
    return 0
