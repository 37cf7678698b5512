"""The fast resolver: a built-in adapter without the pluggy host, when nothing can replace it.

The host imports pluggy and every built-in adapter, and may scan installed entry points:
several milliseconds a hook does not need when the provider is built in and the plugin
folder holds no plugin file (only a plugin-folder adapter may replace a built-in). Then
the adapter comes straight from its module, the very object the host would give
(``tests/test_coldstart.py`` holds them equal); outside lich even that module is not
loaded, since the verdict (from the harness's descriptor) is all there is to print.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

HOST = ""  # builtin_module's answer when the pluggy host must decide


def builtin_module(provider: str, environ: "Mapping[str, str]") -> str:
    """The module of the built-in adapter that serves ``provider`` unaided, or HOST when the
    pluggy host must decide: not a built-in, or the plugin folder holds plugin files (which
    may replace it) or is refused."""
    from lichhook.adapters import BUILTIN
    from lichhook.paths import plugin_dir, plugin_files

    module = BUILTIN.get(provider, HOST)
    if module:
        folder = plugin_dir(environ)
        if folder is None or plugin_files(folder):
            return HOST
    return module


def builtin_adapter(module: str) -> object:
    """The ADAPTER of ``lichhook.adapters.<module>``, a name builtin_module gave."""
    from importlib import import_module

    return import_module(f"lichhook.adapters.{module}").ADAPTER


def builtin_verdict(provider: str, event: "str | None" = None) -> str:
    """What the built-in hook for ``provider`` prints for ``event`` (None: the bare
    command), from its harness's descriptor, without loading the adapter's module."""
    from lichhook.adapters import BY_PROVIDER

    descriptor = BY_PROVIDER.get(provider)
    return descriptor.verdict(event) if descriptor is not None else ""
