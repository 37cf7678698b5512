"""What an adapter is, and how the host checks one before trusting it."""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

# Hot-path modules avoid importing typing (about 8 ms); annotations stay strings.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

PROVIDER_PATTERN = "^[a-z][a-z0-9_-]{0,31}$"
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_PROVIDER_CHARS = _LOWER | frozenset("0123456789_-")

# Words the command line takes for itself; a provider can never be one of them.
SUBCOMMANDS = frozenset(
    {
        "adapters",
        "claude-code",
        "demo",
        "doctor",
        "help",
        "install",
        "listen",
        "mcp",
        "uninstall",
        "version",
        "wait",
    }
)


class Adapter:
    """Base class for harness adapters; subclasses set ``provider`` and ``session_id``."""

    provider: str = ""
    verdict: str = ""
    sample: "Mapping[str, Any]" = {}

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "str | None":
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} provider={self.provider!r}>"


def provider_id_ok(provider: object) -> bool:
    """True when ``provider`` matches PROVIDER_PATTERN (checked without ``re``, which
    the no-op path must not import)."""
    return (
        isinstance(provider, str)
        and 1 <= len(provider) <= 32
        and provider[0] in _LOWER
        and all(c in _PROVIDER_CHARS for c in provider)
    )


def adapter_problem(adapter: object) -> "str | None":
    """Say what is wrong with ``adapter``, or return None when the host can use it."""
    provider = getattr(adapter, "provider", None)
    if not provider_id_ok(provider):
        return f"provider {provider!r} must match {PROVIDER_PATTERN}"
    if provider in SUBCOMMANDS:
        return f"provider {provider!r} is a lichhook subcommand; choose another id"
    if not callable(getattr(adapter, "session_id", None)):
        return f"adapter for {provider!r} has no callable session_id(payload, environ)"
    if not isinstance(getattr(adapter, "verdict", ""), str):
        return f"adapter for {provider!r} has a verdict that is not a string"
    return None
