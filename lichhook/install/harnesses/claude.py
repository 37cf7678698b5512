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
from typing import List, Optional, Sequence, Tuple

from lichhook.descriptor import Registration
from lichhook.install import harness
from lichhook.install.plugin import modload, route
from lichhook.install.config import entries
from lichhook.install.disk import files
from lichhook.install.copies.target import Target


class Claude(route.PluginRouted):
    name = "claude"
    title = "Claude Code"
    programs = ("claude",)

    def config_dir(self) -> str:
        return self.env.get("CLAUDE_CONFIG_DIR") or os.path.join(self.env.home(), ".claude")

    def config_dirs(self) -> List[str]:
        return [self.config_dir()]

    def settings_path(self) -> str:
        return os.path.join(self.config_dir(), "settings.json")

    def mcp_path(self) -> str:
        explicit = self.env.get("CLAUDE_CONFIG_DIR")
        return os.path.join(explicit, ".claude.json") if explicit else os.path.join(self.env.home(), ".claude.json")

    def handler(self, target: Target, registration: Optional[Registration] = None,
                earlier: Sequence[tuple] = ()) -> entries.Wanted:
        """The entry of ``registration`` (the session-start report when None)."""
        r = registration or harness.start_registration(self.name)
        sub = r.words
        timeout = {} if r.timeout is None else {"timeout": r.timeout}
        if target.windows:
            python, *args = target.argv(*sub)
            entry = {"type": "command", "command": python, "args": args, **timeout}
            return entries.Wanted(sub, entry, {"command": entries.Python(), "args": entries.Argv()}, earlier)
        entry = {"type": "command", "command": target.sh_line(*sub), **timeout}
        return entries.Wanted(sub, entry, {"command": entries.Line("sh")}, earlier)

    def config_install(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()
        wanted = self.wanted(target)

        def add_hooks(doc, notes):
            for event, handlers in wanted.items():
                entries.install_hooks(doc, settings, ("hooks",), event, handlers, self.group(event), target, notes)

        def add_mcp(doc, notes):
            entries.install_server(doc, mcp, ("mcpServers",), "lichhook", harness.server_entry(target), target, notes)

        return [files.Edit(settings, harness.json_edit(settings, add_hooks)),
                files.Edit(mcp, harness.json_edit(mcp, add_mcp), mode=0o600)]

    def config_uninstall(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()
        return [
            files.Edit(settings, harness.removal(settings, lambda doc, keep: entries.remove_hooks(
                doc, ("hooks",), None, target, keep))),
            files.Edit(mcp, harness.removal(mcp, lambda doc, keep: entries.remove_server(
                doc, ("mcpServers",), "lichhook", target, keep))),
        ]

    def checks(self, target: Target) -> List[tuple]:
        return route.checks(self, target)

    def mods(self) -> Tuple[dict, List[tuple]]:
        facts = modload.examine(self, self.mcp_path(), os.getcwd())
        return facts, modload.verdict(facts, self.mcp_path())

    def registrations(self, target: Target) -> List[harness.Registered]:
        return (harness.found_in_json(self.settings_path(), target, wanted=self.wanted(target))
                + harness.found_in_json(self.mcp_path(), target, table=(),
                                        server=(("mcpServers",), "lichhook", harness.server_entry(target)))
                + route.registrations(self, target))
