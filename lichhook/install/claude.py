"""Claude Code: hooks in settings.json, the MCP server in .claude.json.

- ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``:
  ``SessionStart`` (every source) runs the ``claude`` report and
  ``claude-code session-start``; ``Stop`` runs ``claude-code stop``.
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

from lichhook.install import entries, files, harness

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

    from lichhook.install.target import Target

# Every SessionStart source: each one can bring a new session id, and the waits hook
# must name the current id to the model after /clear and compaction too.
MATCHER = "startup|resume|clear|compact|fork"
TIMEOUT = 10


class Claude(harness.Harness):
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

    def handler(self, target: Target, *sub: str) -> entries.Wanted:
        if target.windows:
            python, *args = target.argv(*sub)
            entry = {"type": "command", "command": python, "args": args, "timeout": TIMEOUT}
            return entries.Wanted(sub, entry, {"command": entries.Python(), "args": entries.Argv()})
        entry = {"type": "command", "command": target.sh_line(*sub), "timeout": TIMEOUT}
        return entries.Wanted(sub, entry, {"command": entries.Line("sh")})

    def wanted(self, target: Target) -> dict:
        """event -> lichhook's handlers under it."""
        return {
            "SessionStart": [self.handler(target, "claude"), self.handler(target, "claude-code", "session-start")],
            "Stop": [self.handler(target, "claude-code", "stop")],
        }

    @staticmethod
    def group(event: str) -> dict:
        return {"matcher": MATCHER} if event == "SessionStart" else {}

    def install(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()
        wanted = self.wanted(target)

        def add_hooks(doc, notes):
            for event, handlers in wanted.items():
                entries.install_hooks(doc, settings, ("hooks",), event, handlers, self.group(event), target, notes)

        def add_mcp(doc, notes):
            entries.install_server(doc, mcp, ("mcpServers",), "lichhook", harness.server_entry(target), target, notes)

        return [files.Edit(settings, harness.json_edit(settings, add_hooks)),
                files.Edit(mcp, harness.json_edit(mcp, add_mcp), mode=0o600)]

    def uninstall(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()
        return [
            files.Edit(settings, harness.removal(settings, lambda doc, keep: entries.remove_hooks(
                doc, ("hooks",), ("SessionStart", "Stop"), target, keep))),
            files.Edit(mcp, harness.removal(mcp, lambda doc, keep: entries.remove_server(
                doc, ("mcpServers",), "lichhook", target, keep))),
        ]

    def registrations(self, target: Target) -> List[harness.Found]:
        return (harness.found_in_json(self.settings_path(), target, wanted=self.wanted(target))
                + harness.found_in_json(self.mcp_path(), target, table=(),
                                        server=(("mcpServers",), "lichhook", harness.server_entry(target))))
