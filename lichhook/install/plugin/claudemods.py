"""lichhook's Claude Code mods, as its plugin carries them.

The mods are JavaScript in ``lichhook/js/claude/`` (docs/claude-code-mods.md); Claude Code
loads them from a plugin whose ``hooks/hooks.json`` names the entry module under
``modules``, a path relative to that file. The plugin install writes (``plugin.route``) and
the release the build writes (``harnesses.release``) both carry them under
``hooks/claude/``, with the release they send as ``X-Lich-Plugin`` written into
``release.js``: the one the plugin's manifest claims (``lichhook.install.plugin.claim``).
"""

from __future__ import annotations

import pkgutil
from typing import Dict

from lichhook.install.errors import ConfigError

FOLDER = "hooks/claude"
ENTRY = "./claude/lich.js"  # relative to hooks/hooks.json
NAMES = ("lich.js", "release.js", "client.js", "footer.js", "texts.js", "control.js", "usage.js", "status.js",
         "editguard.js", "answer.js", "cards.js", "selfcommand.js")
RELEASE_MARK = '"@RELEASE@"'


def files(claim: str) -> Dict[str, bytes]:
    """Plugin-relative path -> bytes of every mod, the release ``claim`` written in."""
    out = {}
    for name in NAMES:
        found = pkgutil.get_data("lichhook", f"js/claude/{name}")
        if found is None:
            raise ConfigError(f"lichhook's Claude Code mod {name} is missing from this lichhook; rebuild the archive")
        if name == "release.js":
            found = found.replace(RELEASE_MARK.encode(), f'"{claim}"'.encode(), 1)
        out[f"{FOLDER}/{name}"] = found
    return out
