"""Claude Code and Codex: lichhook installed as their plugin ``lich@lich-plugin``, through
their own plugin manager, so that lich reads it as its companion plugin.

``install`` writes a local marketplace in lichhook's data folder
(``<data dir>/marketplace/<harness>/``, in lich-plugin's layout: ``plugin.layout``) whose
hooks and MCP server are exactly the entries the config route writes, then asks the
harness's CLI to add the marketplace and install the plugin (Claude Code: ``claude
plugin marketplace add <dir>`` + ``claude plugin install lich@lich-plugin``; Codex:
``codex plugin marketplace add <dir>`` + ``codex plugin add lich@lich-plugin``). Entries
an earlier lichhook wrote into the harness's config are taken out in the same run, so
nothing runs twice. ``uninstall`` removes the plugin and the marketplace the same way.

When the CLI is not on PATH, or too old to have a ``plugin`` command, the config route
runs instead (install says so), and lich reads lichhook as not installed there.

This module is the one owner of the route's facts: which harnesses have it (those built
on ``PluginRouted``), where the marketplace is, what the harness recorded (``installed``)
and the registrations the installed plugin carries (``registrations``, which ``doctor``
reads through the harness).
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Set

from lichhook.install import harness
from lichhook.install.plugin import harnesscli, layout, lichplugin, skills
from lichhook.coldstart import user_data_dir
from lichhook.install.disk import files
from lichhook.install.harness import Registered, Harness
from lichhook.install.errors import ConfigError
from lichhook.install.plugin.claim import harness_claim
from lichhook.install.copies.target import Target

# Set to 1 to keep a harness on the config route even where its plugin CLI works.
CONFIG_ONLY = "LICHHOOK_NO_PLUGIN_ROUTE"


def marketplace_dir(name: str) -> str:
    return os.path.join(user_data_dir(), "marketplace", name)


def program(h: Harness) -> Optional[str]:
    return h.env.which(h.name)


def unavailable(h: Harness) -> Optional[str]:
    """Why the plugin route cannot be taken for ``h`` (None: it can). Asks the CLI for
    its ``plugin`` command, bounded."""
    if h.env.get(CONFIG_ONLY) == "1":
        return f"{CONFIG_ONLY}=1 is set"
    # Windows takes it too: the marketplace is written on this machine, so its hooks are
    # the config route's Windows entries (Claude Code's exec form, Codex's commandWindows).
    found = program(h)
    if not found:
        return f"`{h.name}` is not on PATH"
    result = harnesscli.run(found, ["plugin", "marketplace", "--help"], h.env.environ)
    if not result.ok or "marketplace" not in result.output.lower():
        return f"this {h.title} has no `{h.name} plugin marketplace` command (too old: {result.describe()})"
    return None


def plugin_files(h: Harness, target: Target) -> Dict[str, bytes]:
    """The marketplace's files: hooks and server as the config route writes them."""
    server = harness.server_entry(target, stdio_type=(h.name == "claude")).entry
    return layout.marketplace(h.name, target, lambda r: dict(h.handler(target, r).entry),  # type: ignore[attr-defined]
                                    server, harness_claim(h))


def edits(h: Harness, target: Target) -> List[files.Edit]:
    """The marketplace's files, written whole: every file in that folder is lichhook's."""
    folder = marketplace_dir(h.name)
    return [files.write_owned(os.path.join(folder, *rel.split("/")), data, lambda raw: True)
            for rel, data in sorted(plugin_files(h, target).items())]


def installed(h: Harness) -> Optional[lichplugin.Sighting]:
    """lichhook's own plugin as the harness recorded it, or None."""
    return next((s for s in lichplugin.find(h) if s.ours), None)


def check_can_install(h: Harness, replacing: bool) -> None:
    """Raise ConfigError, before anything changes, when the harness could not take the
    plugin: the marketplace name held by another source, a cache folder not writable."""
    mine = marketplace_dir(h.name)
    source = _marketplace_source(h)
    cache = os.path.join(h.config_dir(), "plugins")  # Claude Code's config folder, CODEX_HOME
    if source is not None and not _same(source, mine) and not replacing:
        raise ConfigError(
            f"{h.title} already has a marketplace named {lichplugin.MARKETPLACE}, from {source}; lichhook's plugin "
            f"needs that name (lich looks for {lichplugin.KEY}). Remove it ({h.name} plugin marketplace remove "
            f"{lichplugin.MARKETPLACE}) and run install {h.name} again, or run install {h.name} --replace")
    folder = cache
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{h.title} keeps its plugins in {cache}, and {folder} is not writable by you, so it "
                          f"could not copy lichhook's plugin there; give it back to your user (chown) and run "
                          f"install {h.name} again")


def _same(source: str, folder: str) -> bool:
    return os.path.normcase(os.path.abspath(source)) == os.path.normcase(os.path.abspath(folder))


def _marketplace_source(h: Harness) -> Optional[str]:
    return lichplugin.claude_marketplace_source(h) if h.name == "claude" else _codex_marketplace_source(h)


def checks(h: Harness, target: Target) -> List[tuple]:
    """(line, problem or None, fix): whether the harness runs the plugin lichhook's
    marketplace holds (an update that did not reach the harness leaves it running an
    older one)."""
    folder = marketplace_dir(h.name)
    if not os.path.isdir(folder) or route_problem(h) is not None:
        return []
    have = installed(h)
    want = layout.version_of(plugin_files(h, target), h.name)
    if have is None:
        return [(f"plugin: lichhook's marketplace is in {folder}, but {h.title} has not installed "
                 f"{lichplugin.KEY} from it", f"{h.title} does not run lichhook's plugin",
                 f"run install {h.name} again")]
    if have.version != want:
        return [(f"plugin: {h.title} runs {lichplugin.KEY} {have.version}, lichhook's marketplace holds {want}",
                 f"{h.title} runs an older lichhook plugin ({have.version})", f"run install {h.name} again")]
    root = installed_root(h)
    return [(f"plugin: {lichplugin.KEY} {have.version}, installed through `{h.name} plugin`", None, None)] + (
        [skills.check(root, skills.command(target), f"run uninstall {h.name}, then install {h.name} ({h.title} keeps "
                      f"its copy of a plugin whose version is unchanged)")] if root else [])


def _codex_marketplace_source(h: Harness) -> Optional[str]:
    marketplaces = h.config_values().get("marketplaces")  # type: ignore[attr-defined]
    entry = marketplaces.get(lichplugin.MARKETPLACE) if isinstance(marketplaces, dict) else None
    source = entry.get("source") if isinstance(entry, dict) else None
    return source if isinstance(source, str) else None


def apply(h: Harness, target: Target) -> List[str]:
    """Ask the harness's CLI to add lichhook's marketplace and install (or update) its
    plugin; the sentences to print. Raises ConfigError naming the command that failed."""
    found = program(h)
    assert found is not None
    folder = marketplace_dir(h.name)
    want = layout.version_of(plugin_files(h, target), h.name)
    if (installed(h) is not None and installed(h).version == want  # type: ignore[union-attr]
            and _same(_marketplace_source(h) or "", folder) and installed_root(h)):
        return []
    run = lambda *args: harnesscli.run(found, list(args), h.env.environ, change=True)  # noqa: E731
    key, market = lichplugin.KEY, lichplugin.MARKETPLACE
    lines: List[str] = []
    other = _marketplace_source(h)
    if other is not None and not _same(other, folder):
        # reached only with --replace (check_can_install refused otherwise); the plugin
        # installed from that marketplace goes with it, so the way back installs it too
        seen = lichplugin.find(h)
        result = run("plugin", "marketplace", "remove", market)
        if not result.ok:
            raise ConfigError(f"could not remove the marketplace {market} (from {other}) from {h.title}: "
                              f"{result.describe()}")
        lines.append(f"plugin: removed the marketplace {market} (from {other}); to put it back: "
                     + (seen[0].restore if seen else f"{h.name} plugin marketplace add {other}"))
    have = installed(h)  # a marketplace's removal takes its plugin with it
    known = _marketplace_source(h)
    if h.name == "claude":
        steps = [("plugin", "marketplace", "update", market) if known else ("plugin", "marketplace", "add", folder),
                 # the copy it runs gone (its cache folder deleted): installed afresh
                 ("plugin", "update", key) if have is not None and installed_root(h) else ("plugin", "install", key)]
    else:
        steps = ([] if known else [("plugin", "marketplace", "add", folder)]) + [("plugin", "add", key)]
    for args in steps:
        result = run(*args)
        if not result.ok:
            raise ConfigError(f"{h.title} did not install lichhook's plugin: {result.describe()}")
    now = installed(h)
    if now is None or now.version != want:
        raise ConfigError(f"{h.title} ran {' and '.join(' '.join((h.name,) + s) for s in steps)} but does not "
                          f"record {key} {want} as installed")
    return lines + [f"plugin: {key} {want} installed through `{h.name} plugin` from {folder}; lich reads it as its "
            f"companion plugin"]


def remove(h: Harness) -> List[str]:
    """Uninstall lichhook's plugin and marketplace through the CLI (when the harness
    records lichhook's own, by lich's reading or by its own files); the sentences to print."""
    if installed(h) is None and not plugin_roots(h):
        return []
    found = program(h)
    if not found:
        return [f"lichhook's plugin {lichplugin.KEY} is still installed in {h.title}, and `{h.name}` is not on "
                f"PATH to remove it: run {lichplugin.REMOVE[h.name]}"]
    for args in lichplugin.REMOVE[h.name].split(" && "):
        result = harnesscli.run(found, args.split()[1:], h.env.environ, change=True)
        if not result.ok:
            raise ConfigError(f"could not remove lichhook's plugin from {h.title}: {result.describe()}")
    return [f"plugin: removed {lichplugin.KEY} and its marketplace through `{h.name} plugin`"]


def registrations(h: Harness, target: Target) -> List[Registered]:
    """The hooks and MCP server of lichhook's plugin as the harness installed it (its
    copy in the harness's plugin cache), read as the config route's entries are."""
    return [f for root in plugin_roots(h) for f in _registrations_in(h, root, target)]


def _registrations_in(h: Harness, root: str, target: Target) -> List[Registered]:
    hooks = os.path.join(root, *(layout.CLAUDE_HOOKS if h.name == "claude" else layout.CODEX_HOOKS
                                 ).split("/"))
    mcp = os.path.join(root, layout.CLAUDE_MCP if h.name == "claude" else layout.CODEX_MCP)
    server = harness.server_entry(target, stdio_type=(h.name == "claude"))
    found = (harness.found_in_json(hooks, target, wanted=h.wanted(target))
             + harness.found_in_json(mcp, target, table=(), server=(("mcpServers",), "lichhook", server)))
    for f in found:  # the release's paths, as the harness resolves them
        for attr in ("text", "archive"):
            value = getattr(f, attr)
            if isinstance(value, str):
                value = value.replace(layout.ROOT_VAR, root)
                if value.startswith("./"):
                    value = os.path.join(root, value[2:])  # Codex runs the server from the plugin folder
                setattr(f, attr, value)
    return found


def release_root(h: Harness) -> Optional[str]:
    """The folder of the build's release when the harness runs it as its plugin (not the
    marketplace install writes), or None."""
    root = installed_root(h)
    if root is None:
        return None
    try:
        with open(os.path.join(root, lichplugin.OURS_FILE), "rb") as f:
            return root if f.read().startswith(b"lichhook release") else None
    except OSError:
        return None


def installed_root(h: Harness) -> Optional[str]:
    """The folder the harness copied lichhook's plugin to, or None."""
    try:
        return next(iter(plugin_roots(h)), None)
    except ConfigError:
        return None


def plugin_roots(h: Harness) -> List[str]:
    """The folders of lichhook's plugin (its marketplace's, or the release) that the
    harness's own files say it runs, read without its CLI (which may be off PATH while
    the harness still runs them): Claude Code's record in ``installed_plugins.json``;
    Codex's ``[plugins."lich@lich-plugin"]`` in config.toml and its copy in the plugin
    cache. Raises ConfigError when a record cannot be read."""
    if h.name == "claude":
        entry = lichplugin.claude_entry(h)
        roots = [entry.get("installPath")] if entry else []
    elif h.name == "codex":
        plugins = h.config_values().get("plugins")  # type: ignore[attr-defined]
        table = plugins.get(lichplugin.KEY) if isinstance(plugins, dict) else None
        if not isinstance(table, dict) or table.get("enabled") is False:
            return []
        cache = os.path.dirname(lichplugin.codex_plugin_root(h, "-"))
        try:
            roots = [os.path.join(cache, name) for name in sorted(os.listdir(cache))]
        except OSError:
            return []
    else:
        return []
    return [r for r in roots if isinstance(r, str) and lichplugin.is_ours(r)]


def beside_config(h: Harness) -> List[lichplugin.Sighting]:
    """lichhook's plugin as the harness's files record it, when install would write
    config entries beside it (the config route: no CLI to update the plugin with): both
    would run, so every report would be sent twice."""
    if not isinstance(h, PluginRouted) or route_problem(h) is None:
        return []
    return [lichplugin.Sighting(h.name, f"{root}; {route_problem(h)}", os.path.basename(root), True,
                                lichplugin.REMOVE[h.name], "") for root in plugin_roots(h)]


def twice(h: Harness, found: List[Registered]) -> Optional[tuple]:
    """(problem, fix) when lichhook's plugin and lichhook's config entries (``found``
    outside the plugin) both run in ``h``: every report would be sent twice."""
    try:
        roots = plugin_roots(h)
    except ConfigError:
        return None
    inside = lambda path: any(os.path.abspath(path).startswith(os.path.join(os.path.abspath(r), "")) for r in roots)  # noqa: E731
    config = list(dict.fromkeys(f.path for f in found if not inside(f.path)))
    if not roots or not config:
        return None
    return (f"reports would be sent twice: {h.title} runs lichhook's plugin {lichplugin.KEY} ({roots[0]}) and "
            f"lichhook's entries in {', '.join(config)}",
            f"run install {h.name} again with `{h.name}` on PATH (it keeps the plugin and takes the entries out; "
            f"--replace when the plugin is the release), or remove the plugin: {lichplugin.REMOVE[h.name]}")


def route_problem(h: Harness) -> Optional[str]:
    """Why ``h`` takes the config route (None: the plugin route), asked once per run."""
    if not isinstance(h, PluginRouted):
        return "no plugin manager"
    cached = getattr(h, "_route_problem", False)
    if cached is False:
        cached = unavailable(h)
        h._route_problem = cached  # type: ignore[attr-defined]
    return cached  # type: ignore[return-value]


def dry_run(h: Harness) -> List[str]:
    """What install would ask the harness's CLI, in words (nothing for the config route)."""
    if not isinstance(h, PluginRouted) or route_problem(h) is not None:
        return []
    return [f"{h.title} ({h.name}): would then run `{h.name} plugin marketplace add {marketplace_dir(h.name)}` "
            f"(or refresh it) and install {lichplugin.KEY} from it"]


def finish_install(h: PluginRouted, target: Target, owners: object) -> List[str]:
    """After install wrote ``h``'s files: the CLI step of the plugin route, or, when it
    fails, the config route after all (sessions must report either way), unless the
    harness records lichhook's plugin anyway (a CLI that failed or was stopped after it
    installed it): then the plugin reports, and config entries beside it would too."""
    why = route_problem(h)
    if why is not None:
        return [f"{h.title}: {why}, so lichhook's hooks are in its config, where lich does not look for its "
                f"companion plugin: lich shows it as not installed there (docs/lich-plugin.md)"]
    try:
        return apply(h, target)
    except ConfigError as exc:
        kept = plugin_roots(h)
        if kept:
            raise ConfigError(f"{exc}; {h.title} records lichhook's plugin as installed all the same ({kept[0]}), "
                              f"so it reports through that, and lichhook wrote no entries into its config beside "
                              f"it (every report would be sent twice)") from None
        for edit in h.config_install(target):
            files.apply(edit, owners)  # type: ignore[arg-type]
        return [f"{exc}; lichhook's hooks went into {h.title}'s config instead, where lich does not look for its "
                f"companion plugin"]


def finish_uninstall(h: PluginRouted, target: Target) -> List[str]:
    """After uninstall took ``h``'s config entries out: the plugin, its marketplace, and
    the marketplace's folder once the harness no longer lists it (a marketplace whose
    folder is gone makes ``codex plugin list``, which lich reads, fail)."""
    lines = remove(h)
    folder, found = marketplace_dir(h.name), program(h)
    if found and _same(_marketplace_source(h) or "", folder):  # left without its plugin
        result = harnesscli.run(found, ["plugin", "marketplace", "remove", lichplugin.MARKETPLACE], h.env.environ,
                                change=True)
        if not result.ok:
            raise ConfigError(f"could not remove lichhook's marketplace from {h.title}: {result.describe()}")
        lines.append(f"plugin: removed the marketplace {lichplugin.MARKETPLACE} ({folder}) through `{h.name} plugin`")
    if not os.path.lexists(folder):
        return lines
    if plugin_roots(h) or _same(_marketplace_source(h) or "", folder):
        return lines + [f"plugin: kept {folder}: {h.title} still lists it as its marketplace {lichplugin.MARKETPLACE}"
                        f" (without it, `{h.name} plugin list` fails); with `{h.name}` on PATH, run uninstall "
                        f"{h.name} again"]
    return lines + [_delete_folder(folder, set(plugin_files(h, target)))]


def _delete_folder(folder: str, names: Set[str]) -> str:
    """Delete lichhook's marketplace folder: the files of ``names`` (the ones lichhook
    writes there), then the folders they leave empty, never through a symbolic link."""
    for path in (os.path.dirname(folder), folder):
        if os.path.islink(path):
            return (f"plugin: left {folder}: {path} is a symbolic link, and lichhook deletes nothing through one; "
                    f"remove it yourself")
    for at, dirs, names_here in os.walk(folder, topdown=False):
        for name in names_here:
            path = os.path.join(at, name)
            if os.path.relpath(path, folder).replace(os.sep, "/") in names and not os.path.islink(path):
                _quietly(os.remove, path)
        for name in dirs:
            if not os.path.islink(os.path.join(at, name)):
                _quietly(os.rmdir, os.path.join(at, name))
    for path in (folder, os.path.dirname(folder)):  # the parent only when no other harness's is left
        _quietly(os.rmdir, path)
    if os.path.lexists(folder):
        return f"plugin: left {folder}: it holds files lichhook did not write, or some could not be deleted"
    return f"plugin: removed lichhook's marketplace folder {folder}"


def _quietly(delete, path: str) -> None:  # type: ignore[no-untyped-def]
    try:
        delete(path)
    except OSError:
        pass  # not empty (it holds something lichhook did not write), or not ours to delete: named after


class PluginRouted(harness.EntryHarness):
    """A harness whose config entries can instead come through its own plugin manager
    (Claude Code, Codex): it writes its entries with ``config_install`` and takes them
    out with ``config_uninstall``; this class picks the route."""

    def config_install(self, target: Target) -> List[files.Edit]:
        return self.json_edits(target)

    def config_uninstall(self, target: Target) -> List[files.Edit]:
        return self.json_edits(target, install=False)

    def install(self, target: Target) -> List[files.Edit]:
        """Through the harness's plugin manager where its CLI can, taking out what an
        earlier lichhook wrote into the config; else into the config."""
        if route_problem(self) is None:
            check_can_install(self, self.replacing)
            return edits(self, target) + self.config_uninstall(target)
        return self.config_install(target)

    def uninstall(self, target: Target) -> List[files.Edit]:
        return self.config_uninstall(target)

    def after_install(self, target: Target, owners: object) -> List[str]:
        return finish_install(self, target, owners)

    def after_uninstall(self, target: Target) -> List[str]:
        return finish_uninstall(self, target)
