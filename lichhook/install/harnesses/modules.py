"""opencode and omp: in-process JS modules that hand their events to one lichhook.

Neither harness runs shell hooks, so lichhook installs a small module: the harness's entry
in ``lichhook/js/`` (``MODULES``) with every file it imports written in (``bundled``;
docs/architecture.md says what runs where). Install writes into it, as JSON (valid JS
literals), the Python and archive paths, the interpreter's options (``-I -S``) and the
events to forward with their command words, taken from the harness's descriptor
registrations: the module forwards exactly the events the descriptor lists, and names no
event of its own.

Modules earlier releases wrote have the same marker and ``const PYTHON``/``ARCHIVE``
lines (some no ``FLAGS``, none ``EVENTS``): they are read back, replaced by install and
removed by uninstall like the current one.

- opencode: ``$XDG_CONFIG_HOME/opencode/plugin/lich.js``, else
  ``~/.config/opencode/plugin/lich.js`` (opencode loads ``{plugin,plugins}/*.{ts,js}``).
- omp: ``<agent dir>/extensions/lich.js`` and ``mcpServers.lichhook`` in
  ``<agent dir>/mcp.json``, the agent dir being the one omp itself reads (``omp_agent_dir``);
  with lich's binary found, ``mcpServers.lich`` too (``lichtools``).

``lich.js`` is where lich reads its companion plugin's marker line, and the module starts
with it (``lichtools.js_marker``; omp's only when lich's server is registered), so lich reads
the plugin installed with its tools. Releases before wrote ``lichhook.js``; install and
uninstall remove that file. lich's own plugin install or update rewrites ``lich.js`` whole
with lich-plugin's module: lichhook is then gone from that harness, never there twice.
"""

from __future__ import annotations

import json
import ntpath
import os
import pkgutil
import posixpath
import re
from typing import Dict, List, Mapping, Optional, Set

from lichhook.coldstart.quickjson import json_or_none
from lichhook.install import harness, quoting
from lichhook.install.plugin import lichplugin, lichtools
from lichhook.install.config import entries
from lichhook.install.disk import files
from lichhook.install.plugin.claim import harness_claim
from lichhook.install.copies.target import Target
from lichhook.install.errors import ConfigError

MARKER = b"Added by `lichhook install"
MODULES = {"opencode": "opencode/plugin.js", "omp": "omp/extension.js"}  # each harness's entry, in lichhook/js/
RELATIVE_IMPORT = re.compile(r'import \{[^}]*\} from "(\.\.?/[^"]+)";')
# In omp's module, under lich's marker line: uninstall takes ``mcpServers.lich`` out only then.
OWNS_SERVER = "// lichhook added mcpServers.lich to mcp.json beside this folder"


def module_source(kind: str, target: Target) -> bytes:
    """The module for ``kind`` ("opencode" or "omp") pointing at ``target``."""
    text = bundled(MODULES[kind], set())
    # FLAGS: the options every hook registration has (the launcher, which spares runpy's imports)
    values = {"PYTHON": target.python, "ARCHIVE": target.archive, "FLAGS": target.options(kind), "EVENTS": forwarded(kind)}
    for name, value in values.items():  # ensure_ascii: every non-ASCII character (and U+2028/9) becomes a \u escape
        text = text.replace(f'"@{name}@"', json.dumps(value, ensure_ascii=True), 1)
    return text.encode("utf-8")


def bundled(where: str, seen: Set[str]) -> str:
    """``lichhook/js/<where>`` with each relative import replaced by the file it names (bundled,
    once, ``export`` dropped: opencode calls every export of a plugin); other imports kept once."""
    found = pkgutil.get_data("lichhook.js", where)
    if found is None:
        raise ConfigError(f"lichhook/js/{where} is missing from this lichhook; rebuild the archive")
    out = []
    for line in found.decode("utf-8").splitlines(keepends=True):
        relative = RELATIVE_IMPORT.fullmatch(line.rstrip())
        key = posixpath.normpath(posixpath.join(posixpath.dirname(where), relative[1])) if relative else line
        if not (line.startswith("import ") and key in seen):
            seen.add(key)
            out.append(re.sub(r"(?m)^export ", "", bundled(key, seen)) if relative else line)
    return "".join(out)


def forwarded(kind: str) -> Dict[str, List[str]]:
    """event -> the command words after the archive, for every event the ``kind`` module
    forwards: its descriptor's registrations."""
    return {r.event: list(r.words) for r in harness.descriptor_rows(kind)}


def _baked(raw: bytes, name: str) -> object:
    """The JSON value install wrote as ``const <name> = ...;``, or None."""
    prefix = f"const {name} = "
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith(prefix) and line.endswith(";"):
            try:
                return json.loads(line[len(prefix):-1])
            except (ValueError, RecursionError):
                return None
    return None


def baked_paths(raw: bytes) -> tuple:
    """(python, archive) written into an installed module, None for each that is not a string."""
    python, archive = _baked(raw, "PYTHON"), _baked(raw, "ARCHIVE")
    return (python if isinstance(python, str) else None), (archive if isinstance(archive, str) else None)


def baked_flags(raw: bytes) -> List[str]:
    """The interpreter's options written into an installed module (none in a module an
    earlier release wrote)."""
    flags = _baked(raw, "FLAGS")
    return [f for f in flags if isinstance(f, str)] if isinstance(flags, list) else []


def baked_events(raw: bytes) -> Optional[Dict[str, List[str]]]:
    """event -> command words written into an installed module, or None for a module an
    earlier release wrote (it ran the bare ``<kind>`` on the session start alone)."""
    events = _baked(raw, "EVENTS")
    if not isinstance(events, dict):
        return None
    return {event: [w for w in words if isinstance(w, str)] for event, words in events.items()
            if isinstance(words, list)}


class JsModuleHarness(harness.Harness):
    kind = ""

    def module_path(self) -> str:
        """``lich.js``, where lich reads its companion plugin's marker line."""
        raise NotImplementedError

    def earlier_path(self) -> str:
        """``lichhook.js``, where releases before lich's tools wrote the module."""
        raise NotImplementedError

    def module(self, target: Target, marked: bool, claims: str = "") -> bytes:
        """The module; ``marked``: with lich's marker line first (then ``claims``)."""
        head = (lichtools.js_marker(harness_claim(self)) + "\n" + claims).encode("utf-8") if marked else b""
        return head + module_source(self.kind, target)

    def replaceable(self, raw: bytes) -> bool:
        """Whether install may write over ``raw``: lichhook's module, or (with
        ``--replace``, which sets it aside first) lich-plugin's at the same path."""
        return MARKER in raw or (self.replacing and lichplugin.JS_MARKER.encode() in raw)

    def install(self, target: Target) -> List[files.Edit]:
        return [files.write_owned(self.module_path(), self.module(target, True), self.replaceable),
                files.remove_owned(self.earlier_path(), files.holding(MARKER))]

    def uninstall(self, target: Target) -> List[files.Edit]:
        return [files.remove_owned(path, files.holding(MARKER)) for path in (self.module_path(), self.earlier_path())]

    def registrations(self, target: Target) -> List[harness.Registered]:
        found = []
        for path in (self.module_path(), self.earlier_path()):
            raw = files.read(path)
            if raw is None or MARKER not in raw:
                continue
            python, archive = baked_paths(raw)
            ours = archive is not None and target.archive_of(archive) is not None
            events = baked_events(raw)
            command = quoting.sh_join([str(w) for w in [python, *baked_flags(raw), archive, self.kind]])
            if events is not None:  # None: an earlier release's module, the bare command on the session start
                command += f" --serve, on {', '.join(events) or 'no event'}"
            found.append(harness.Registered(path, "module", command, python, archive, ours))
        return found


class Opencode(JsModuleHarness):
    name = "opencode"
    title = "opencode"
    kind = "opencode"
    programs = ("opencode",)

    def config_dir(self) -> str:
        return os.path.join(self.env.config_home(), "opencode")

    def module_path(self) -> str:
        return os.path.join(self.config_dir(), "plugin", "lich.js")

    def earlier_path(self) -> str:
        return os.path.join(self.config_dir(), "plugins", "lichhook.js")

    def _npm_note(self) -> Optional[str]:
        reason = opencode_install_pending(self.config_dir())
        if reason is None:
            return None
        return (f"opencode installs {OPENCODE_PLUGIN_PACKAGE} into {self.config_dir()} before it loads any plugin, "
                f"and that folder {reason}: with the npm registry reachable its next start takes a few seconds "
                "longer, once; without one every start waits about 70 s (see docs/install.md, opencode)")

    def notes(self, target: Target) -> List[str]:
        note = self._npm_note()
        return [note] if note else []

    def checks(self, target: Target) -> List[tuple]:
        note = self._npm_note()
        raw = files.read(self.module_path())
        tools = [] if raw is None or MARKER not in raw or lichplugin.JS_MARKER.encode() not in raw else [
            (f"lich's tools: defined by lichhook's module, running $LICH_BIN (else `lich`); lich's marker at "
             f"{harness_claim(self)} ({lichtools.update_note(True)})", None, None)]
        return tools + ([(f"note: {note}", None, None)] if note else [])


class Omp(JsModuleHarness):
    name = "omp"
    title = "oh-my-pi"
    kind = "omp"
    programs = ("omp",)

    def agent_dir(self) -> str:
        return omp_agent_dir(self.env.environ, self.env.home(), self.env.windows)

    def config_dirs(self) -> List[str]:
        root = omp_config_root(self.env.environ, self.env.home(), self.env.windows)
        try:
            return [self.agent_dir(), root]
        except ConfigError:  # a profile omp refuses: install and doctor say so
            return [root]

    def module_path(self) -> str:
        return os.path.join(self.agent_dir(), "extensions", "lich.js")

    def earlier_path(self) -> str:
        return os.path.join(self.agent_dir(), "extensions", "lichhook.js")

    def mcp_path(self) -> str:
        return os.path.join(self.agent_dir(), "mcp.json")

    def owns_lich_server(self) -> bool:
        """Whether lichhook's module records that lichhook added ``mcpServers.lich``."""
        raw = files.read(self.module_path())
        return raw is not None and MARKER in raw and OWNS_SERVER.encode() in raw

    def install(self, target: Target) -> List[files.Edit]:
        """The module and lichhook's waits server; with lich's binary found, lich's own
        server (unless a ``lich`` entry someone else wrote is there) and the marker."""
        path = self.mcp_path()
        lich, _ = lichtools.find_lich(self.env.environ, self.env.windows)
        owned_before = self.owns_lich_server()
        claim = lich is not None and (owned_before or not lichtools.has_server(path))

        def add(doc, notes: List[str]) -> None:
            entries.install_server(doc, path, ("mcpServers",), "lichhook", harness.server_entry(target, stdio_type=False),
                                   target, notes)
            if claim:
                lichtools.put_server(doc, path, lich)  # type: ignore[arg-type]
            elif owned_before:
                lichtools.take_server(doc, lambda where: None)

        module = self.module(target, lich is not None, OWNS_SERVER + "\n" if claim else "")
        return [files.write_owned(self.module_path(), module, self.replaceable),
                files.remove_owned(self.earlier_path(), files.holding(MARKER)),
                files.Edit(path, harness.json_edit(path, add))]

    def uninstall(self, target: Target) -> List[files.Edit]:
        path = self.mcp_path()
        owns = self.owns_lich_server()

        def change(doc, keep) -> None:
            entries.remove_server(doc, ("mcpServers",), "lichhook", target, keep)
            if owns:
                lichtools.take_server(doc, keep)

        return super().uninstall(target) + [files.Edit(path, harness.removal(path, change))]

    def notes(self, target: Target) -> List[str]:
        return lichtools.notes(self.title, harness_claim(self), *lichtools.find_lich(self.env.environ, self.env.windows), whole=True)

    def checks(self, target: Target) -> List[tuple]:
        raw = files.read(self.module_path())
        if raw is None or MARKER not in raw:
            return []
        registered = None
        if self.owns_lich_server() or lichplugin.JS_MARKER.encode() in raw:
            registered = lichtools.registered(self.mcp_path())
        return [lichtools.check(self.name, harness_claim(self), registered, self.env.environ, self.env.windows, whole=True)]

    def registrations(self, target: Target) -> List[harness.Registered]:
        return (super().registrations(target)
                + harness.found_in_json(self.mcp_path(), target, table=(),
                                        server=(("mcpServers",), "lichhook", harness.server_entry(target, stdio_type=False))))


# -- the folder omp reads --------------------------------------------------------------------
# As ``@oh-my-pi/pi-utils`` ``src/dirs.ts`` resolves it (omp 18.2.3): read there, not guessed.

PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
WINDOWS_RESERVED = re.compile(r"(?:CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(?:\..*)?", re.IGNORECASE | re.DOTALL)


def _join(windows: bool, first: str, *rest: str) -> str:
    """Node's ``path.join``: every part appended (an absolute one too), then normalised."""
    flavour = ntpath if windows else posixpath
    return flavour.normpath(flavour.sep.join((first,) + rest))


def omp_profile(environ: Mapping[str, str]) -> Optional[str]:
    """The profile omp runs under, or None for its default one. ``OMP_PROFILE`` wins
    whenever it is set, even empty (which means the default profile); ``PI_PROFILE`` is
    read only when it is not. Empty, blank and ``default`` mean no profile. Raises
    ConfigError for a name omp refuses to start with."""
    variable = "OMP_PROFILE" if "OMP_PROFILE" in environ else "PI_PROFILE"
    raw = environ.get(variable)
    name = raw.strip() if raw is not None else ""
    if not name or name == "default":
        return None
    if (name in (".", "..") or name.endswith(".") or not PROFILE_NAME.fullmatch(name)
            or WINDOWS_RESERVED.fullmatch(name)):
        raise ConfigError(
            f"{variable}={raw!r} is not a profile name omp accepts (lower-case letters, digits, '.', '_', '-', "
            "1-64 of them, starting with a letter or digit and not ending with '.'), so omp itself refuses to "
            f"start; fix or unset {variable}, then run again.")
    return name


def omp_config_root(environ: Mapping[str, str], home: str, windows: bool = False) -> str:
    """``~/.omp``, or ``~/$PI_CONFIG_DIR`` when that is set (relative to home, always)."""
    return _join(windows, home, environ.get("PI_CONFIG_DIR") or ".omp")


def omp_agent_dir(environ: Mapping[str, str], home: str, windows: bool = False) -> str:
    """The agent folder omp reads extensions and ``mcp.json`` from. A profile's is
    ``<config root>/profiles/<name>/agent``, whatever ``PI_CODING_AGENT_DIR`` says;
    without one, ``PI_CODING_AGENT_DIR`` (made absolute) when set, unless it is the
    agent folder of the ``PI_PROFILE`` that ``OMP_PROFILE`` overrode (a value a parent
    omp left behind), else ``<config root>/agent``."""
    root = omp_config_root(environ, home, windows)
    profile = omp_profile(environ)
    if profile:
        return _join(windows, root, "profiles", profile, "agent")
    override = environ.get("PI_CODING_AGENT_DIR") or ""
    if override:
        try:
            overridden = omp_profile({"PI_PROFILE": environ.get("PI_PROFILE", "")})
        except ConfigError:
            overridden = None
        if not (overridden and override == _join(windows, root, "profiles", overridden, "agent")):
            return os.path.abspath(override)
    return _join(windows, root, "agent")


# -- what opencode installs before it loads a plugin -------------------------------------------
# opencode 1.18.33 runs ``Npm.install(<config folder>, add @opencode-ai/plugin)`` for each of
# its config folders and, when any plugin is configured, waits for it before loading them.
# The install does nothing when the folder cannot be written, or when it has node_modules
# and its package-lock.json lists every dependency package.json names and the plugin package.

OPENCODE_PLUGIN_PACKAGE = "@opencode-ai/plugin"
_DEPENDENCY_KINDS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")


def _names(manifest: object) -> set:
    if not isinstance(manifest, dict):
        return set()
    return {name for kind in _DEPENDENCY_KINDS if isinstance(manifest.get(kind), dict) for name in manifest[kind]}


def _json_or_none(path: str) -> object:
    """The JSON in ``path``; None when it is absent, unreadable or not JSON (nested too
    deep too): then it lists no package."""
    try:
        raw = files.read(path)
    except ConfigError:
        return None
    return json_or_none(raw) if raw is not None else None


def opencode_install_pending(folder: str) -> Optional[str]:
    """Why opencode will run an npm install in its config ``folder`` at its next start,
    or None when it will not."""
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        return None
    if not os.path.isdir(os.path.join(folder, "node_modules")):
        return "has no node_modules"
    lock = _json_or_none(os.path.join(folder, "package-lock.json"))
    packages = lock.get("packages") if isinstance(lock, dict) else None
    root = packages.get("") if isinstance(packages, dict) else None
    wanted = _names(_json_or_none(os.path.join(folder, "package.json"))) | {OPENCODE_PLUGIN_PACKAGE}
    missing = sorted(wanted - _names(root))
    if not missing:
        return None
    return f"has no package-lock.json entry for {', '.join(missing)}"
