"""lichhook: report coding-agent sessions to lich from one cross-platform zipapp.

This is the face plugins import (``from lichhook import Adapter, Report, hookimpl``),
so it stands above the modules it names and none of lichhook's modules imports it.
Each name is loaded on first use, not at import: Python runs this file before any
module of the package, on the hot report path too, which must not pay for pluggy
when no plugin is in play.
"""

__all__ = ["Adapter", "Event", "Report", "__version__", "hookimpl", "hookspec"]


def __getattr__(name: str):
    if name == "__version__":  # on demand: the hot paths never need it
        from lichhook._version import __version__

        return __version__
    if name in ("hookimpl", "hookspec"):
        from lichhook import hookspecs

        return getattr(hookspecs, name)
    if name in ("Adapter", "Event", "Report"):
        from lichhook import adapter

        return getattr(adapter, name)
    raise AttributeError(f"module 'lichhook' has no attribute {name!r}")
