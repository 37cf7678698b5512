"""Rewrite the e2e locks after a pin changed: tests/e2e/package-lock.json (the harness
CLIs) and tests/e2e/opencode-config/package-lock.json (what opencode installs into its
config folder, which must match the pinned opencode).

    python -m testkit.relock

Runs ``npm install --package-lock-only`` in each folder. A registry that lacks some platform
packages (a mirror carrying only what this platform needs) leaves them out of the lock,
and ``npm ci`` then refuses the lock as out of step with package.json; each such package
gets an entry with its version and the platform it is for (read from its name), which
``npm ci`` skips on every other platform. The lock is otherwise npm's own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from typing import Dict, List

from testkit.harnesses import LOCKED


def platform_of(name: str) -> Dict[str, List[str]]:
    """os, cpu and libc of a platform package, from the parts of its name."""
    base = name.rsplit("/", 1)[-1]
    words = set(re.split(r"[-_]", base))
    fields: Dict[str, List[str]] = {}
    for os_name, keys in (("darwin", {"darwin", "macos"}), ("win32", {"win32", "windows", "win"}),
                          ("linux", {"linux"}), ("freebsd", {"freebsd"}), ("android", {"android"})):
        if words & keys:
            fields["os"] = [os_name]
            break
    for cpu, keys in (("arm64", {"arm64", "aarch64"}), ("x64", {"x64", "amd64"}), ("ia32", {"ia32", "x86"})):
        if words & keys:
            fields["cpu"] = [cpu]
            break
    if "musl" in words:
        fields["libc"] = ["musl"]
    return fields


def fill_missing_optionals(lock: dict) -> List[str]:
    """Add an entry for each optional dependency the registry did not list; their names."""
    packages = lock["packages"]
    added = []
    for key, entry in list(packages.items()):
        for dep, version in (entry.get("optionalDependencies") or {}).items():
            path = f"node_modules/{dep}"
            if path in packages or f"{key}/{path}" in packages:
                continue
            fields = platform_of(dep)
            if "os" not in fields:
                raise SystemExit(f"relock: {dep} is missing from the registry and its name names no platform")
            packages[path] = {"version": version, **fields, "optional": True}
            added.append(f"{dep}@{version}")
    lock["packages"] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != "", kv[0])))
    return added


def main() -> int:
    npm = shutil.which("npm")
    if npm is None:
        print("relock: npm is not on PATH", file=sys.stderr)
        return 2
    for folder in LOCKED.values():
        subprocess.run([npm, "install", "--package-lock-only", "--no-audit", "--no-fund"], cwd=folder, check=True)
        lock_path = folder / "package-lock.json"
        lock = json.loads(lock_path.read_text(encoding="utf-8"))
        added = fill_missing_optionals(lock)
        lock_path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
        for name in added:
            print(f"relock: {name} is not in this registry; entered for its platform only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
