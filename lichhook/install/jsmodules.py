"""opencode and omp: in-process JS modules that spawn lichhook.

Neither harness runs shell hooks, so lichhook installs a small module (shipped inside
the archive under ``lichhook/install/js/``) with the Python and archive paths written
into it as JSON string literals, which are valid JS string literals.

The interpreter's options (``-I -S``) are written in as a JSON list, the same way.

- opencode: ``$XDG_CONFIG_HOME/opencode/plugins/lichhook.js``, else
  ``~/.config/opencode/plugins/lichhook.js`` (opencode loads ``{plugin,plugins}/*.{ts,js}``).
- omp: ``<agent dir>/extensions/lichhook.js``, the agent dir being
  ``$OMP_CODING_AGENT_DIR``, else ``$PI_CODING_AGENT_DIR``, else
  ``~/.omp/profiles/$OMP_PROFILE/agent`` when a profile is set, else ``~/.omp/agent``;
  and ``mcpServers.lichhook`` in ``<agent dir>/mcp.json``.
"""

from __future__ import annotations

import json
import os

from lichhook.install import entries, files, harness, jsonmerge, owned
from lichhook.install.target import INTERPRETER_FLAGS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional

    from lichhook.install.target import Target

MARKER = b"Added by `lichhook install"


def module_source(kind: str, target: Target) -> bytes:
    """The module for ``kind`` ("opencode" or "omp") pointing at ``target``."""
    import pkgutil

    template = pkgutil.get_data("lichhook.install", f"js/{kind}.js")
    if template is None:
        raise jsonmerge.ConfigError(f"the {kind} module is missing from this lichhook; rebuild the archive")
    text = template.decode("utf-8")
    # ensure_ascii: every non-ASCII character (and U+2028/9) becomes a \u escape
    text = text.replace('"@PYTHON@"', json.dumps(target.python, ensure_ascii=True), 1)
    text = text.replace('"@ARCHIVE@"', json.dumps(target.archive, ensure_ascii=True), 1)
    text = text.replace('"@FLAGS@"', json.dumps(list(INTERPRETER_FLAGS)), 1)
    return text.encode("utf-8")


def baked_paths(raw: bytes) -> tuple:
    """(python, archive) written into an installed module, or (None, None)."""
    values = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        for name in ("PYTHON", "ARCHIVE"):
            prefix = f"const {name} = "
            if line.startswith(prefix) and line.endswith(";"):
                values[name] = jsonmerge.string_literal(line[len(prefix):-1])
    return values.get("PYTHON"), values.get("ARCHIVE")


def baked_flags(raw: bytes) -> List[str]:
    """The interpreter's options written into an installed module (none in a module an
    earlier release wrote)."""
    prefix = "const FLAGS = "
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith(prefix) and line.endswith(";"):
            try:
                flags = json.loads(line[len(prefix):-1])
            except ValueError:
                return []
            return [f for f in flags if isinstance(f, str)] if isinstance(flags, list) else []
    return []


class JsModuleHarness(harness.Harness):
    kind = ""

    def module_path(self) -> str:
        raise NotImplementedError

    def install(self, target: Target) -> List[files.Edit]:
        return [owned.write_owned(self.module_path(), module_source(self.kind, target), MARKER)]

    def uninstall(self, target: Target) -> List[files.Edit]:
        return [owned.remove_owned(self.module_path(), MARKER)]

    def registrations(self, target: Target) -> List[harness.Found]:
        path = self.module_path()
        raw = files.read(path)
        if raw is None or MARKER not in raw:
            return []
        python, archive = baked_paths(raw)
        ours = archive is not None and target.archive_of(archive) is not None
        command = " ".join(str(w) for w in [python, *baked_flags(raw), archive, self.kind])
        return [harness.Found(path, "module", command, python, archive, ours)]


class Opencode(JsModuleHarness):
    name = "opencode"
    title = "opencode"
    kind = "opencode"
    programs = ("opencode",)

    def config_dir(self) -> str:
        return os.path.join(self.env.config_home(), "opencode")

    def config_dirs(self) -> List[str]:
        return [self.config_dir()]

    def module_path(self) -> str:
        return os.path.join(self.config_dir(), "plugins", "lichhook.js")


class Omp(JsModuleHarness):
    name = "omp"
    title = "oh-my-pi"
    kind = "omp"
    programs = ("omp",)

    def agent_dir(self) -> str:
        for variable in ("OMP_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR"):
            value = self.env.get(variable)
            if value:
                return value
        profile = self.env.get("OMP_PROFILE")
        # a profile name becomes a folder name: only a plain name is used
        if profile and all(c.isalnum() or c in "-_." for c in profile) and profile not in (".", ".."):
            return os.path.join(self.env.home(), ".omp", "profiles", profile, "agent")
        return os.path.join(self.env.home(), ".omp", "agent")

    def config_dirs(self) -> List[str]:
        return [self.agent_dir(), os.path.join(self.env.home(), ".omp")]

    def module_path(self) -> str:
        return os.path.join(self.agent_dir(), "extensions", "lichhook.js")

    def mcp_path(self) -> str:
        return os.path.join(self.agent_dir(), "mcp.json")

    def install(self, target: Target) -> List[files.Edit]:
        path = self.mcp_path()

        def add(doc, notes: List[str]) -> None:
            entries.install_server(doc, path, ("mcpServers",), "lichhook", harness.server_entry(target, stdio_type=False),
                                   target, notes)

        return super().install(target) + [files.Edit(path, harness.json_edit(path, add))]

    def uninstall(self, target: Target) -> List[files.Edit]:
        path = self.mcp_path()
        return super().uninstall(target) + [files.Edit(path, harness.removal(
            path, lambda doc, keep: entries.remove_server(doc, ("mcpServers",), "lichhook", target, keep)))]

    def registrations(self, target: Target) -> List[harness.Found]:
        return (super().registrations(target)
                + harness.found_in_json(self.mcp_path(), target, table=(),
                                        server=(("mcpServers",), "lichhook", harness.server_entry(target, stdio_type=False))))
