"""The built-in adapters, registered through the same hook as any third-party plugin."""

from importlib import import_module

from lichhook.adapters import BUILTIN
from lichhook.hookspecs import hookimpl

__all__ = ["BUILTIN", "builtin_adapter", "lichhook_adapters"]  # the host reads BUILTIN's order here


def builtin_adapter(provider: str) -> object:
    """The built-in adapter for ``provider`` (a key of BUILTIN), imported on demand."""
    return import_module(f"lichhook.adapters.{BUILTIN[provider]}").ADAPTER


@hookimpl
def lichhook_adapters() -> list:
    return [builtin_adapter(provider) for provider in BUILTIN]
