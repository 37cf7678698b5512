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

from lichhook.install import files, harness, jsonmerge

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

    def handler(self, target: Target, *args: str) -> dict:
        if target.windows:
            return {"type": "command", "command": target.python, "args": [target.archive, *args], "timeout": TIMEOUT}
        return {"type": "command", "command": target.sh_line(*args), "timeout": TIMEOUT}

    def groups(self, target: Target) -> dict:
        return {
            "SessionStart": [{"matcher": MATCHER, "hooks": [
                self.handler(target, "claude"),
                self.handler(target, "claude-code", "session-start"),
            ]}],
            "Stop": [{"hooks": [self.handler(target, "claude-code", "stop")]}],
        }

    def mcp_server(self, target: Target) -> dict:
        return {"type": "stdio", "command": target.python, "args": [target.archive, "mcp"]}

    def install(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()
        wanted = self.groups(target)

        def add_hooks(raw):
            def change(data):
                hooks = harness.hooks_table(data, settings)
                for event, groups in wanted.items():
                    harness.set_groups(hooks, event, groups, target.owns, settings)
            return jsonmerge.edit(raw, settings, change)

        def add_mcp(raw):
            def change(data):
                servers = harness.hooks_table(data, mcp, "mcpServers")
                server = self.mcp_server(target)
                if servers.get("lichhook") != server:
                    servers["lichhook"] = server
            return jsonmerge.edit(raw, mcp, change)

        return [files.Edit(settings, add_hooks), files.Edit(mcp, add_mcp, mode=0o600)]

    def uninstall(self, target: Target) -> List[files.Edit]:
        settings, mcp = self.settings_path(), self.mcp_path()

        def remove_hooks(raw):
            def change(data):
                hooks = data.get("hooks")
                if not isinstance(hooks, dict):
                    return None
                had = bool(hooks)
                for event in ("SessionStart", "Stop"):
                    harness.remove_groups(hooks, event, target.owns, settings)
                harness.drop_if_empty(data, "hooks", had)
                return created_by_lichhook(settings)
            return jsonmerge.edit(raw, settings, change) if raw is not None else None

        def remove_mcp(raw):
            def change(data):
                servers = data.get("mcpServers")
                if not isinstance(servers, dict):
                    return None
                had = bool(servers)
                if target.owns(harness.handler_text(servers.get("lichhook"))):
                    del servers["lichhook"]
                harness.drop_if_empty(data, "mcpServers", had)
                return created_by_lichhook(mcp)
            return jsonmerge.edit(raw, mcp, change) if raw is not None else None

        return [files.Edit(settings, remove_hooks), files.Edit(mcp, remove_mcp)]

    def registrations(self, target: Target) -> List[harness.Found]:
        found = []
        settings = self.settings_path()
        data = read_json_quietly(settings)
        if isinstance(data, dict):
            for event, handler in harness.all_handlers(data.get("hooks")):
                found_entry(found, settings, event, handler, target)
        mcp = self.mcp_path()
        data = read_json_quietly(mcp)
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict) and isinstance(servers.get("lichhook"), dict):
            found_entry(found, mcp, "mcpServers.lichhook", servers["lichhook"], target)
        return found


def created_by_lichhook(path: str) -> str:
    """jsonmerge's delete request when lichhook made this file (no backup of a user's
    original exists beside it), so uninstall leaves no empty file behind."""
    return "" if os.path.exists(path + files.BACKUP_SUFFIX) else "delete-if-empty"


def read_json_quietly(path: str) -> object:
    """The parsed file, or None (absent or broken: doctor reports it separately)."""
    try:
        raw = files.read(path)
        return jsonmerge.parse(raw, path)[0] if raw is not None else None
    except jsonmerge.ConfigError:
        return None


def found_entry(found: list, path: str, label: str, handler: dict, target: Target) -> None:
    """Record ``handler`` when it runs this archive, or any lichhook archive."""
    text = harness.handler_text(handler)
    ours = target.owns(text)
    if not ours and "lichhook" not in text:
        return
    python, archive = harness.split_command(handler, target.windows)
    found.append(harness.Found(path, label, text.replace("\n", " "), python, archive, ours))
