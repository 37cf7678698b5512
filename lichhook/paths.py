"""Where lichhook keeps things, as platformdirs names them on each OS.

The config and state folders come from ``lichhook.coldstart``, which answers as
platformdirs does without importing it on Linux and macOS.
"""

import os

from lichhook.coldstart import user_config_dir, user_state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping


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
