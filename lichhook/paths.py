"""Where lichhook keeps things, as platformdirs names them on each OS.

``user_config_dir`` and ``user_state_dir`` mirror platformdirs for Linux and macOS without
importing it (about 10 ms the hot hooks cannot spare); a test holds them equal to
platformdirs. On Windows, whose folders come from the shell API, platformdirs is asked.
"""

# No ``from __future__ import annotations``: that line imports __future__ at run time
# (~0.1 ms) and this module runs on every hook, so annotations that name
# type-checking-only types are written as strings.

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

APP = "lichhook"


def _xdg(environ: "Mapping[str, str]", variable: str, default: str) -> str:
    value = environ.get(variable, "")
    if not value.strip():
        value = os.path.expanduser(default)
    return value


def user_config_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_config_dir("lichhook", appauthor=False)."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":
        import platformdirs

        return platformdirs.user_config_dir(APP, appauthor=False)
    return os.path.join(_xdg(environ, "XDG_CONFIG_HOME", "~/.config"), APP)


def user_state_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_state_dir("lichhook", appauthor=False)."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":
        import platformdirs

        return platformdirs.user_state_dir(APP, appauthor=False)
    return os.path.join(_xdg(environ, "XDG_STATE_HOME", "~/.local/state"), APP)


def user_data_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_data_dir("lichhook", appauthor=False); only cold paths use it."""
    import platformdirs

    return platformdirs.user_data_dir(APP, appauthor=False)


def plugin_dir(environ: "Mapping[str, str]" = os.environ) -> "str | None":
    """The plugin folder: LICHHOOK_PLUGIN_DIR, else <user config dir>/plugins.

    A relative LICHHOOK_PLUGIN_DIR is refused (None): it would run code from whatever
    folder the harness happens to start the hook in.
    """
    explicit = environ.get("LICHHOOK_PLUGIN_DIR", "")
    if explicit.strip():
        return explicit if os.path.isabs(explicit) else None
    return os.path.join(user_config_dir(environ), "plugins")


def plugin_files(folder: "str | None") -> list:
    """The plugin files in ``folder``, sorted: ``*.py`` not starting with ``_`` or ``.``."""
    if not folder:
        return []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(
        os.path.join(folder, n) for n in names if n.endswith(".py") and n[0] not in "._"
    )


def waits_dir(environ: "Mapping[str, str]" = os.environ, explicit: "str | None" = None) -> str:
    """The waits folder: ``explicit`` (--waits-dir), else LICHHOOK_WAITS_DIR, else
    <user state dir>/waits."""
    if explicit:
        return explicit
    from_env = environ.get("LICHHOOK_WAITS_DIR", "")
    if from_env.strip():
        return from_env
    return os.path.join(user_state_dir(environ), "waits")
