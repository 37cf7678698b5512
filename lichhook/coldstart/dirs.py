"""platformdirs' user config and state folders for lichhook, without importing it.

``import platformdirs`` costs about 10 ms, more than a hook's whole budget above the
interpreter. On Linux and macOS the answer is a few environment variables and a join,
mirrored here; on Windows, whose folders come from the shell API, platformdirs is asked.
``tests/test_coldstart.py`` holds these equal to platformdirs.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

APP = "lichhook"


def _folder(environ: "Mapping[str, str]", kind: str, variable: str, default: str) -> str:
    if sys.platform == "darwin":  # config and state alike
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform == "win32":
        import platformdirs

        return getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False)
    value = environ.get(variable, "")
    if not value.strip():
        value = os.path.expanduser(default)
    return os.path.join(value, APP)


def user_config_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_config_dir("lichhook", appauthor=False)."""
    return _folder(environ, "config", "XDG_CONFIG_HOME", "~/.config")


def user_state_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """platformdirs.user_state_dir("lichhook", appauthor=False)."""
    return _folder(environ, "state", "XDG_STATE_HOME", "~/.local/state")
