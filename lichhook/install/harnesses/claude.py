"""Claude Code: hooks in settings.json, the MCP server in .claude.json.

- ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``: one command
  hook per row of Claude Code's descriptor registrations (``lichhook.adapters``), each
  under its event with the row's matcher and timeout: ``SessionStart`` (every source)
  runs the ``claude`` report and ``claude-code session-start``; ``Stop`` runs
  ``claude Stop`` and ``claude-code stop``; every other event runs ``claude <event>``.
  The entries of one event share one matcher group of lichhook's.
- ``$CLAUDE_CONFIG_DIR/.claude.json``, else ``~/.claude.json``:
  ``mcpServers.lichhook`` runs ``lichhook mcp`` over stdio.

On Linux and macOS Claude Code runs a hook's ``command`` with ``sh -c``, so the command
is a POSIX-quoted line. On Windows the shell is Git Bash, or PowerShell when Git Bash is
missing, and no one spelling of a quoted path suits both; the handlers there use the
exec form (``command`` is the Python executable, ``args`` the rest), which runs without
any shell (Claude Code 2.1.139 and later).
"""

from __future__ import annotations

import os
from typing import List, Sequence, Tuple

from lichhook.descriptor import Registration
from lichhook.install import harness
from lichhook.install.plugin import layout, modload, route
from lichhook.install.config import entries
from lichhook.install.copies.target import Target


class Claude(route.PluginRouted):
    name = "claude"
    title = "Claude Code"
    programs = ("claude",)
    server_mode = 0o600

    def config_dir(self) -> str:
        return self.env.get("CLAUDE_CONFIG_DIR") or os.path.join(self.env.home(), ".claude")

    def hooks_path(self) -> str:
        return os.path.join(self.config_dir(), "settings.json")

    def server_path(self) -> str:
        return os.path.join(self.env.get("CLAUDE_CONFIG_DIR") or self.env.home(), ".claude.json")

    def handler(self, target: Target, r: Registration, earlier: Sequence[tuple] = ()) -> entries.Wanted:
        sub = r.words
        timeout = layout.timeout_of(r)
        if target.windows:
            python, *args = target.argv(*sub)
            entry = {"type": "command", "command": python, "args": args, **timeout}
            return entries.Wanted(sub, entry, {"command": entries.Python(), "args": entries.Argv()}, earlier)
        entry = {"type": "command", "command": target.sh_line(*sub), **timeout}
        return entries.Wanted(sub, entry, {"command": entries.Line("sh")}, earlier)

    def checks(self, target: Target) -> List[tuple]:
        return route.checks(self, target)

    def mods(self) -> Tuple[dict, List[tuple]]:
        facts = modload.examine(self, self.server_path(), os.getcwd())
        return facts, modload.verdict(facts, self.server_path())

    def registrations(self, target: Target) -> List[harness.Registered]:
        return super().registrations(target) + route.registrations(self, target)
