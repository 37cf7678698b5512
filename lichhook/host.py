"""The pluggy host: built-in adapters, the plugin folder and installed entry points.

Precedence, highest first: a plugin-folder adapter (it may replace a built-in), a
built-in, an entry-point adapter (it may add a provider, not replace one). A plugin that
fails to import, raises or returns something unusable is skipped; it never stops any
other provider from reporting. With LICHHOOK_DEBUG=1 each skip is named on stderr.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import site
import sys
from typing import Any, Callable, Container, Iterable, Mapping, NamedTuple

import pluggy

from lichhook import hookspecs
from lichhook.adapter import adapter_problem
from lichhook.adapters import BY_PROVIDER, load
from lichhook.paths import plugin_dir, plugin_files
from lichhook.trust import untrusted

BUILTIN = "built-in"
PLUGIN_FOLDER = "plugin folder"
ENTRY_POINT = "entry point"


class Candidate(NamedTuple):
    """An adapter and where it came from."""

    adapter: Any  # anything adapter_problem() lets through: provider, verdict, session_id()
    tier: str  # BUILTIN, PLUGIN_FOLDER or ENTRY_POINT
    origin: str  # a human-readable source: a module, a file or a distribution


class Builtins:
    """The built-in adapters, registered through the same hook as any third-party plugin."""

    @hookspecs.hookimpl
    def lichhook_adapters(self) -> list[object]:
        return [load(provider) for provider in BY_PROVIDER]


def get_plugin_manager() -> pluggy.PluginManager:
    """A plugin manager holding the hook specs and the built-in adapters only."""
    pm = pluggy.PluginManager(hookspecs.NAME)
    pm.add_hookspecs(hookspecs)
    pm.register(Builtins(), name=BUILTIN)
    return pm


def load_plugin_folder(pm: pluggy.PluginManager, folder: str | None, debug: Callable[[str], None]) -> None:
    """Import each ``*.py`` in ``folder`` and register it; a broken file is skipped, and
    so is a file, or the whole folder, that someone else controls (lichhook.trust)."""
    paths = plugin_files(folder) if folder else []
    if not folder or not paths:
        return
    problem = untrusted(folder)
    if problem:
        debug(f"plugin folder {folder} skipped: {problem}, or move the plugins elsewhere")
        return
    for path in paths:
        problem = untrusted(path)
        if problem:
            debug(f"plugin {path} skipped: {problem}, or move the plugins elsewhere")
            continue
        stem = os.path.splitext(os.path.basename(path))[0]
        name = f"{PLUGIN_FOLDER}:{path}"
        try:
            # Compiled from its source here, never through the file loader: that would
            # run bytecode from ``__pycache__``, which the checks above do not cover (a
            # hook under umask 000 makes it writable by all), and write some there.
            with open(path, "rb") as f:
                source = f.read()
            spec = importlib.util.spec_from_loader(f"lichhook_plugin_{stem}", loader=None, origin=path)
            if spec is None:
                raise ImportError(f"cannot load {path} as a module")
            module = importlib.util.module_from_spec(spec)
            module.__file__ = path
            exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)
            pm.register(module, name=name)
        except BaseException as exc:  # a plugin may even call sys.exit()
            debug(f"plugin {path} skipped: {type(exc).__name__}: {exc}")


def load_entry_points(pm: pluggy.PluginManager, debug: Callable[[str], None]) -> None:
    """Register every ``lichhook`` entry point; unlike pluggy's loader, one that fails to
    load is skipped rather than stopping the others."""
    add_site_packages()
    seen = set()
    # By distribution, so each entry point is named with its distribution on every Python
    # (an entry point knows its distribution only from 3.10); the first of a name on the
    # path wins, as importlib.metadata.entry_points() has it.
    for dist in importlib.metadata.distributions():
        project = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if project and project in seen:
            continue
        seen.add(project)
        for ep in dist.entry_points:
            if ep.group != hookspecs.NAME:
                continue
            label = f"{dist.metadata['Name']} {dist.version}"
            _load_entry_point(pm, ep, label, debug)


def _load_entry_point(pm: pluggy.PluginManager, ep: importlib.metadata.EntryPoint, label: str,
                      debug: Callable[[str], None]) -> None:
    name = f"{ENTRY_POINT}:{ep.name} ({label})"
    if pm.get_plugin(name) is not None or pm.is_blocked(name):
        return
    try:
        pm.register(ep.load(), name=name)
    except BaseException as exc:
        debug(f"entry point {ep.name} ({label}) skipped: {type(exc).__name__}: {exc}")


def add_site_packages() -> None:
    """Put the interpreter's site-packages on sys.path, as ``site`` does at start-up, when
    the interpreter was started without it (``-S``).

    Hooks may be registered with ``-S``: site costs every run its .pth files (tens of
    milliseconds with some), and the built-in adapters and plugin folder need none of it.
    Adapters installed as packages live in site-packages, so they are found by running
    ``site.main()`` here, on the only path that looks for them.
    """
    if not sys.flags.no_site:
        return

    if site.ENABLE_USER_SITE is None:  # set by site.main(): it has not run yet
        site.main()


def check_hooks(pm: pluggy.PluginManager, debug: Callable[[str], None], named: frozenset[str] = frozenset()
                ) -> frozenset[str]:
    """Name each hook a registered plugin implements that lichhook has no spec for (a
    misspelt ``lichhook_adapters``, say): pluggy would never call it. pluggy's
    ``check_pending`` finds whether there is one; each is then named once (the plugins in
    ``named`` were already). The plugin stays registered: its other hooks serve.
    Returns the plugins named so far."""
    try:
        pm.check_pending()
        return named
    except pluggy.PluginValidationError:
        pass
    hooks = {name: caller for name, caller in vars(pm.hook).items() if isinstance(caller, pluggy.HookCaller)}
    specified = ", ".join(sorted(name for name, caller in hooks.items() if caller.has_spec()))
    unknown = [(name, impl) for name, caller in sorted(hooks.items()) if not caller.has_spec()
               for impl in caller.get_hookimpls() if not impl.optionalhook]
    for name, impl in unknown:
        if impl.plugin_name not in named:
            tier, origin = _tier_of(impl.plugin_name)
            debug(f"{tier} {origin}: unknown hook {name!r}, which lichhook never calls (its hooks: {specified})")
    return named | {impl.plugin_name for _name, impl in unknown}


def _tier_of(plugin_name: str) -> tuple[str, str]:
    tier, _, origin = plugin_name.partition(":")
    return tier, origin or "lichhook.adapters"


def collect(pm: pluggy.PluginManager, debug: Callable[[str], None], reserved: Container[str] = ()) -> list[Candidate]:
    """Every usable adapter, as Candidate, from every registered plugin; one whose provider is
    in ``reserved`` (the command line's own words, ``lichhook.cli.WORDS``) is not.

    Each plugin's hook is called on its own, so one that raises cannot hide the
    adapters of the others.
    """
    found = []
    for impl in pm.hook.lichhook_adapters.get_hookimpls():
        tier, origin = _tier_of(impl.plugin_name)
        try:
            # pluggy types a hookimpl's result as object before 1.7; the spec says iterable.
            made: Any = impl.function()
            adapters = list(made or ())
        except BaseException as exc:
            debug(f"{tier} {origin} skipped: lichhook_adapters raised {type(exc).__name__}: {exc}")
            continue
        for adapter in adapters:
            problem = adapter_problem(adapter, reserved)
            if problem:
                debug(f"{tier} {origin}: adapter skipped: {problem}")
                continue
            if tier == BUILTIN:
                origin = type(adapter).__module__
            found.append(Candidate(adapter, tier, origin))
    return found


_RANK = {PLUGIN_FOLDER: 0, BUILTIN: 1, ENTRY_POINT: 2}


def by_provider(found: Iterable[Candidate], debug: Callable[[str], None]) -> dict[str, Candidate]:
    """provider -> the Candidate that wins it, by precedence, then first registered."""
    winners: dict[str, Candidate] = {}
    for item in sorted(found, key=lambda f: _RANK[f.tier]):
        provider = item.adapter.provider
        held = winners.get(provider)
        if held is None:
            winners[provider] = item
        elif held.tier == item.tier or item.tier == ENTRY_POINT:
            debug(f"{item.tier} {item.origin}: provider {provider!r} already comes from {held.origin}; ignored")
    return winners


def find_adapter(provider: str, environ: Mapping[str, str], debug: Callable[[str], None],
                 reserved: Container[str] = ()) -> object:
    """The adapter for ``provider``, or None. Entry points are scanned only when neither
    the plugin folder nor the built-ins claim the provider: the scan is the costly part."""
    pm = get_plugin_manager()
    load_plugin_folder(pm, _checked_plugin_dir(environ, debug), debug)
    named = check_hooks(pm, debug)
    winners = by_provider(collect(pm, debug, reserved), debug)
    if provider not in winners:
        load_entry_points(pm, debug)
        check_hooks(pm, debug, named)
        winners = by_provider(collect(pm, debug, reserved), lambda _m: None)
    item = winners.get(provider)
    return item.adapter if item else None


def all_adapters(environ: Mapping[str, str], debug: Callable[[str], None], reserved: Container[str] = ()) -> list[Candidate]:
    """Every provider's winning adapter, as Candidate, sorted built-ins first, then by id."""
    pm = get_plugin_manager()
    load_plugin_folder(pm, _checked_plugin_dir(environ, debug), debug)
    load_entry_points(pm, debug)
    check_hooks(pm, debug)
    winners = by_provider(collect(pm, debug, reserved), debug)
    builtin_order = list(BY_PROVIDER)
    return sorted(
        winners.values(),
        key=lambda f: (
            builtin_order.index(f.adapter.provider) if f.adapter.provider in builtin_order else len(builtin_order),
            f.adapter.provider,
        ),
    )


def _checked_plugin_dir(environ: Mapping[str, str], debug: Callable[[str], None]) -> str | None:
    folder = plugin_dir(environ)
    if folder is None:
        debug("LICHHOOK_PLUGIN_DIR is relative; plugin folder ignored (give an absolute path)")
    return folder
