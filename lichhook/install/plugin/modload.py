"""Will Claude Code load lichhook's mods? doctor's answer (docs/install.md, "Claude Code's
mods").

Claude Code loads a plugin's mods (lich's control, usage, status and worker answers)
only from an installed plugin, from 2.1.280 on, while its rollout switch
``tengu_plugin_hooks_modules`` is on (on by default; off only when ``.claude.json`` caches
it ``false`` and its feature-flag client runs), and in the interactive TUI only once the
folder is trusted (``projects[<folder or a parent>].hasTrustDialogAccepted``). ``examine``
gathers those facts, ``verdict`` says them with their fixes.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from lichhook.install.plugin import harnesscli, route
from lichhook.install.disk import files
from lichhook.install.harness import Harness

FIRST = (2, 1, 280)  # the first Claude Code that runs mods (lich's mod-control contract)
SWITCH = "tengu_plugin_hooks_modules"
# Any of these, truthy where Claude Code starts, leaves its feature flags at their defaults.
DEFAULTS = ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DISABLE_GROWTHBOOK",
            "CLAUDE_CODE_DISABLE_FEATURE_FLAGS")
CAUSE = "Claude Code will not load lichhook's mods"


def version(text: str) -> Optional[Tuple[int, ...]]:
    """The version ``claude --version`` prints ("2.1.332 (Claude Code)"), or None."""
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(n) for n in found.groups()) if found else None


def switch(state: Mapping[str, Any], environ: Mapping[str, str]) -> Tuple[bool, str]:
    """(on, why) for the rollout switch, from ``.claude.json`` and the environment."""
    for name in DEFAULTS:
        if environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return True, f"{name} is set, so Claude Code takes its default (on)"
    for table in ("cachedGrowthBookFeatures", "cachedFeatureFlags"):  # the newer one wins
        cached = state.get(table)
        if isinstance(cached, dict) and SWITCH in cached:
            return cached[SWITCH] is not False, f"{table}.{SWITCH} is {json.dumps(cached[SWITCH])}"
    return True, "not cached, so Claude Code takes its default (on)"


def trusted(state: Mapping[str, Any], folder: str) -> Optional[str]:
    """The folder (``folder`` or a parent) whose trust Claude Code counts, or None."""
    projects = state.get("projects")
    if not isinstance(projects, dict):
        return None
    while True:
        entry = projects.get(folder)
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def examine(h: Harness, state_path: str, folder: str) -> Dict[str, Any]:
    """The facts, as doctor --json shows them under ``mods``."""
    plugin = route.installed(h) is not None
    program = route.program(h)
    said = harnesscli.run(program, ["--version"], h.env.environ) if program else None
    found = version(said.output) if said is not None and said.ok else None
    try:
        raw = files.read(state_path)
        state = json.loads(raw) if raw else {}
    except (OSError, ValueError, RecursionError):  # Claude Code's file: doctor says what it can without it
        state = {}
    on, why = switch(state if isinstance(state, dict) else {}, h.env.environ)
    trust = trusted(state if isinstance(state, dict) else {}, os.path.abspath(folder))
    return {"load": plugin and found is not None and found >= FIRST and on, "plugin": plugin,
            "claude_code": ".".join(map(str, found)) if found else None, "switch": on, "switch_why": why,
            "folder": folder, "trusted": trust}


def verdict(facts: Mapping[str, Any], state_path: str) -> List[tuple]:
    """(line, problem or None, fix, cause) for doctor: a line per fact, a problem for each
    known reason the mods will not load that the user can fix."""
    found = facts["claude_code"]
    out: List[tuple] = []
    if not facts["plugin"]:
        return [("mods:       not loaded: lichhook runs through Claude Code's config here, and mods load only "
                 "from its plugin (the plugin route; see the notes above)", None, None, None)]
    first = ".".join(map(str, FIRST))
    if found is None:
        # said, not a problem: the hooks report all the same, and nothing here can tell more
        out.append((f"mods:       Claude Code's version is unknown (`claude --version` did not say it); mods need "
                    f"{first} or later", None, None, None))
    elif version(found) < FIRST:  # type: ignore[operator]
        out.append((f"mods:       Claude Code {found} is older than {first}, the first that loads mods",
                    f"Claude Code {found} is older than {first}, the first that loads mods",
                    "update Claude Code (claude update), then start it again", CAUSE))
    if not facts["switch"]:
        out.append((f"mods:       Claude Code's rollout switch for mods is off: {facts['switch_why']} in {state_path}",
                    f"Claude Code's cached rollout switch for mods is off ({facts['switch_why']} in {state_path})",
                    "start Claude Code with CLAUDE_CODE_DISABLE_FEATURE_FLAGS=1 (it then takes its defaults, where "
                    "mods are on), or wait for Claude Code to refresh the switch", CAUSE))
    if facts["load"]:
        out.append((f"mods:       Claude Code {found} loads lichhook's mods (rollout switch on: {facts['switch_why']})",
                    None, None, None))
    where = facts["trusted"]
    out.append((f"  trust:    {facts['folder']} is trusted (through {where})" if where else
                f"  trust:    {facts['folder']} is not trusted yet: in its TUI, Claude Code loads the mods there "
                "only once you accept its trust prompt (each project folder asks once)", None, None, None))
    return out
