"""The environment a hook under test runs in: nothing of the developer's own setup, every
per-user folder inside a throw-away home."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Mapping, Optional

from testkit.constants import LICH_SESSION

# Variables that would leak the developer's own setup into a hook or a harness under test.
SCRUBBED = ("LICH_", "LICHHOOK_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
            "http_proxy", "https_proxy", "all_proxy", "no_proxy", "CRUSH_", "CLAUDE", "CODEX_",
            "OPENCODE", "OMP_", "PI_", "ANTHROPIC_", "OPENAI_", "XDG_", "PYTHONPATH", "PYTHONHOME")


def clean_env(home: Path, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """``base`` (this process's environment by default) without anything that would change
    what a hook does, and with every per-user folder in ``home``."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith(SCRUBBED)}
    env.update({
        "HOME": str(home),
        "USERPROFILE": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    })
    return env


def lich_env(server, session_id: str = LICH_SESSION, token: Optional[str] = None) -> Dict[str, str]:
    """The ``LICH_*`` variables pointing at ``server`` (a stand-in or any loopback server)."""
    return {
        "LICH_PORT": str(server.port),
        "LICH_TOKEN": token if token is not None else getattr(server, "token", "tok"),
        "LICH_SESSION_ID": session_id,
    }


def outside_lich(env: Mapping[str, str]) -> Dict[str, str]:
    """``env`` without any ``LICH_*`` variable: a harness started outside lich."""
    return {k: v for k, v in env.items() if not k.startswith("LICH_")}


# A project module named like a standard-library one a hook imports: it leaves a marker
# named after itself when imported, and fails.
_SHADOW = """
import os
with open(os.path.join({markers!r}, {name!r}), "w") as f:
    f.write("ran")
raise ImportError("the project's {name} ran inside lichhook")
"""
SHADOWED = ("select", "json", "_json", "_socket", "fcntl", "struct", "zlib")


def shadowing_project(folder: Path) -> "tuple[Path, Path]":
    """(project, markers): ``folder/project`` holds modules named like the standard
    library's that hooks import (SHADOWED), each leaving a file in ``folder/markers`` when
    a Python started with that project on ``PYTHONPATH`` (or in it) imports it."""
    project, markers = folder / "project", folder / "markers"
    project.mkdir(exist_ok=True)
    markers.mkdir()
    for name in SHADOWED:
        (project / f"{name}.py").write_text(_SHADOW.format(markers=str(markers), name=name), encoding="utf-8")
    return project, markers


def other_pythons() -> list:
    """One interpreter of every other minor version pyenv or PATH has (never the running one's:
    under a virtualenv the running version's own interpreter is found there too)."""
    mine = "%d.%d" % sys.version_info[:2]
    found = []
    for version in [v for v in ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15") if v != mine]:
        candidates = glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}*/bin/python{version}"))
        candidates += [p for p in [shutil.which(f"python{version}")] if p]
        for exe in candidates:
            if subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
                found.append(exe)
                break
    return found
