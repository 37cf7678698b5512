"""lichhook's Claude Code mods, as its plugin carries them.

The mods are JavaScript in ``lichhook/js/claude/`` (docs/claude-code-mods.md); Claude Code
loads them from a plugin whose ``hooks/hooks.json`` names the entry module under
``modules``, a path relative to that file. The plugin install writes (``plugin.route``) and
the release the build writes (``harnesses.release``) both carry them under
``hooks/claude/`` (and ``js/common/`` in ``hooks/common/``), the release they send as
``X-Lich-Plugin`` written into ``release.js``: the one the manifest claims
(``lichhook.install.plugin.claim``).
"""

from __future__ import annotations

import pkgutil
from typing import Dict

from lichhook.install.errors import ConfigError

FOLDER = "hooks"  # holds claude/ and common/ as lichhook/js/ does: the mods' imports find the same files
ENTRY = "./claude/lich.js"  # relative to hooks/hooks.json
NAMES = ("claude/lich.js", "claude/release.js", "claude/client.js", "claude/footer.js", "claude/texts.js",
         "claude/control.js", "claude/usage.js", "claude/status.js", "claude/editguard.js", "claude/answer.js",
         "claude/cards.js", "claude/selfcommand.js", "common/lich.js", "common/text.js")  # in lichhook/js/
RELEASE_MARK = '"@RELEASE@"'


def files(claim: str) -> Dict[str, bytes]:
    """Plugin-relative path -> bytes of every mod, the release ``claim`` written in."""
    out = {}
    for name in NAMES:
        found = pkgutil.get_data("lichhook.js", name)
        if found is None:
            raise ConfigError(f"lichhook's Claude Code mod {name} is missing from this lichhook; rebuild the archive")
        if name == "claude/release.js":
            found = found.replace(RELEASE_MARK.encode(), f'"{claim}"'.encode(), 1)
        out[f"{FOLDER}/{name}"] = found
    return out
