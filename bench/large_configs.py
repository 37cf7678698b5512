"""How install and uninstall scale with large configs: a ``settings.json`` holding an
array nested N deep beside the user's settings, and a Codex ``config.toml`` holding N
``[projects]`` tables.

    python bench/large_configs.py [--pyz dist/lichhook.pyz] [--python PY] [--runs 3]

Each command runs the archive in a fresh process against a throw-away home, timed whole
(wall and CPU, children included), the best of ``--runs``. For each config the table
gives the times at a small N and at five times that N, and their ratio: about 5 when the
work grows in step with the file (linear), far more when it grows faster. A row whose
large case takes 2 s or more of CPU time, or whose ratio is over 10, is marked MISS, and
the script exits 1. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PYZ = ROOT / "dist" / "lichhook.pyz"
BUDGET_CPU = 2.0
RATIO_LIMIT = 10.0


def deep_settings(depth: int) -> str:
    return '{"model": "opus", "deep": ' + "[" * depth + "]" * depth + ', "theme": "dark"}\n'


def many_projects(count: int) -> str:
    tables = "".join(f'[projects."/work/p{i}"]\ntrust_level = "trusted"\n\n' for i in range(count))
    return 'model = "o3"\n\n' + tables


CONFIGS = {
    # name: (harness, file under the home, its text for N, small N)
    "settings.json, array nested N deep": ("claude", ".claude/settings.json", deep_settings, 40_000),
    "config.toml, N [projects] tables": ("codex", ".codex/config.toml", many_projects, 1_000),
}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list, env: dict) -> tuple:
    """(wall seconds, CPU seconds) of one run; raises when it fails."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return wall, _children_cpu() - cpu


def measure(python: str, pyz: Path, harness: str, relpath: str, text: str, runs: int) -> dict:
    """Best (wall, cpu) of install and of uninstall, each from the file as given."""
    best: dict = {"install": None, "uninstall": None}
    for _ in range(runs):
        home = Path(tempfile.mkdtemp(prefix="lichhook-bench-"))
        try:
            config = home / relpath
            config.parent.mkdir(parents=True)
            config.write_text(text)
            env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"),
                       XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local" / "state"))
            for command in ("install", "uninstall"):
                took = timed([python, str(pyz), command, harness], env)
                if best[command] is None or took[1] < best[command][1]:
                    best[command] = took
            if config.read_text() != text:
                raise SystemExit(f"uninstall {harness} did not give {relpath} back as it was")
        finally:
            shutil.rmtree(home, ignore_errors=True)
    return best


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyz", type=Path, default=DEFAULT_PYZ)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.pyz.exists():
        raise SystemExit(f"{args.pyz} does not exist; build it first: python3 build_zipapp.py")
    print(f"{args.python} {args.pyz}, best of {args.runs}; CPU time includes the child's children")
    print(f"{'config':40} {'command':10} {'N':>8} {'wall s':>8} {'cpu s':>8} {'5N':>8} {'wall s':>8} {'cpu s':>8}"
          f" {'ratio':>6}")
    missed = False
    for name, (harness, relpath, make, small) in CONFIGS.items():
        low = measure(args.python, args.pyz, harness, relpath, make(small), args.runs)
        high = measure(args.python, args.pyz, harness, relpath, make(5 * small), args.runs)
        for command in ("install", "uninstall"):
            (w1, c1), (w5, c5) = low[command], high[command]
            ratio = c5 / c1 if c1 > 0 else float("inf")
            miss = c5 >= BUDGET_CPU or ratio > RATIO_LIMIT
            missed |= miss
            print(f"{name:40} {command:10} {small:>8} {w1:>8.2f} {c1:>8.2f} {5 * small:>8} {w5:>8.2f} {c5:>8.2f}"
                  f" {ratio:>6.1f}{'  MISS' if miss else ''}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
