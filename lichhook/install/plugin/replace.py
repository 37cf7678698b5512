"""``install --replace``: take lich-plugin out of a harness before lichhook goes in, and
keep a way back.

Claude Code and Codex record lich-plugin in their own plugin state, so it is removed
through their CLI (the same commands that installed it, reversed) and the way back is
lich's own install command. opencode, omp and Antigravity hold it as files: those are
moved, whole, into ``<lichhook data dir>/set-aside/<harness>/`` and the way back is a
``mv``. Crush holds it as a block of lines in ``crushrc``: the file as it was is kept
there, and the block is cut out of it.
"""

from __future__ import annotations

import os
import shutil
import time
from lichhook.install.plugin import harnesscli, lichplugin, route
from lichhook.coldstart import user_data_dir
from lichhook.install.disk import files
from lichhook.install.harness import Harness
from lichhook.install.errors import ConfigError
from lichhook.install.plugin.lichplugin import Sighting
from lichhook.install.quoting import sh_quote


def set_aside_dir(harness: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return os.path.join(user_data_dir(), "set-aside", harness, stamp)


def remove(h: Harness, seen: Sighting) -> str:
    """Take ``seen`` out of ``h``; return the command that puts it back. Raises
    ConfigError (naming the command that failed) when it cannot."""
    if isinstance(h, route.PluginRouted):
        return _through_cli(h, seen)
    if seen.path is None:
        raise ConfigError(f"lichhook does not know how to remove {seen.describe()}; {seen.remove}")
    folder = set_aside_dir(h.name)
    os.makedirs(folder, exist_ok=True)
    kept = os.path.join(folder, os.path.basename(seen.path.rstrip("/\\")))
    if h.name == "crush":
        return _cut_crush_block(seen.path, kept)
    try:
        shutil.move(seen.path, kept)
    except OSError as exc:
        raise ConfigError(f"cannot move {seen.path} to {kept} ({exc.strerror or exc}); {seen.remove} by hand, "
                          "then run install again") from None
    return f"mv {sh_quote(kept)} {sh_quote(seen.path)}"


def _through_cli(h: Harness, seen: Sighting) -> str:
    program = route.program(h)
    if not program:
        raise ConfigError(f"lich-plugin is installed in {h.title} but `{h.name}` is not on PATH to remove it with; "
                          f"put it on PATH and run again, or run: {seen.remove}")
    for i, command in enumerate(lichplugin.REMOVE[h.name].split(" && ")):  # the plugin, then its marketplace
        result = harnesscli.run(program, command.split()[1:], h.env.environ, change=True)
        if not result.ok and i == 0:
            raise ConfigError(f"could not remove lich-plugin from {h.title}: {result.describe()}; nothing else "
                              f"was changed. Remove it yourself ({seen.remove}), then run install again")
        # A marketplace that would not go only keeps lichhook from registering its own
        # under that name, which install then says in its own words.
    return seen.restore


def _cut_crush_block(path: str, kept: str) -> str:
    raw = files.read(path)
    if raw is None:
        return ""
    files.write_whole(kept, raw, 0o600, None)

    def cut(data, notes):
        if data is None:
            return None
        text = data.decode("utf-8", "replace")
        found = lichplugin.crush_block(text)
        if found is None:
            return data
        return (text[:found[0]] + text[found[1]:]).encode("utf-8")

    files.apply(files.Edit(path, cut, backup=False))
    return f"cp {sh_quote(kept)} {sh_quote(path)}"
