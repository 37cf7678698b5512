"""What lichhook's Claude Code mods cost a turn: the real Claude Code's TUI (the pinned
e2e cache), lichhook installed through its plugin manager, in lich (its stand-in), against
the same plugin with its hooks file naming no module.

    LICHHOOK_E2E_CACHE=tests/e2e/.cache python bench/claude_mods.py [--pyz dist/lichhook.pyz] [--rounds 4] [--turns 3]

Each round starts one session of each kind (interleaved, with the mods first in odd rounds
and second in even ones) and types ``--turns`` prompts; a turn is the time from Enter to
the fake model's answer on the screen (polled every 20 ms). Prints the median turn of each
kind and their ratio. Standard library, testkit and pyte.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from testkit.servers import standin  # noqa: E402

# The e2e kit, by name: testkit.models is outside mypy's files, and an import statement would
# pull it into the check of this one.
harnesses = importlib.import_module("testkit.harnesses")
models = importlib.import_module("testkit.models")


def session(root: Path, pyz: Path, with_mods: bool, model: object, lich: object) -> object:
    box = harnesses.Sandbox(harnesses.HARNESSES["claude"], root, pyz, harnesses.cache_dir(), model, lich)
    box.plugin_route().install()
    if not with_mods:
        hooks = box.home / ".local" / "share" / "lichhook" / "marketplace" / "claude" / "hooks" / "hooks.json"
        value = json.loads(hooks.read_text())
        value.pop("modules")
        hooks.write_text(json.dumps(value, indent=2) + "\n")
    return box


def turns(box, count: int, with_mods: bool) -> list:  # type: ignore[no-untyped-def]
    took = []
    with box.harness.tui(box) as tui:
        tui.wait_for(r"❯", 60)
        if with_mods:  # the mods are running: the first poll reached lich
            deadline = time.monotonic() + 60
            while not box.standin.mods.attached(box.standin.session_id) and time.monotonic() < deadline:
                time.sleep(0.1)
        time.sleep(2)
        for n in range(count):
            marker = f"Answer number {n} here."
            box.model.script(models.text(marker))
            tui.send(f"turn {n}")
            time.sleep(0.5)
            began = time.monotonic()
            tui.send("\r")
            while not re.search(re.escape(marker), tui.text()):
                if time.monotonic() - began > 60:
                    raise SystemExit(f"turn {n} never answered; the screen reads:\n{tui.text()}")
                time.sleep(0.02)
            took.append(time.monotonic() - began)
            time.sleep(1)
    return took


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pyz", default=str(ROOT / "dist" / "lichhook.pyz"))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    found: dict = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="lichhook-bench-mods-") as tmp:
        for r in range(args.rounds):
            for with_mods in ((True, False) if r % 2 == 0 else (False, True)):
                with models.FakeModel() as model, standin() as lich:
                    root = Path(tmp) / f"{r}-{with_mods}"
                    found[with_mods] += turns(session(root, Path(args.pyz), with_mods, model, lich), args.turns,
                                              with_mods)
    mods, bare = statistics.median(found[True]), statistics.median(found[False])
    print(f"turns: {len(found[True])} each; median turn with the mods {mods * 1000:.0f} ms, "
          f"without {bare * 1000:.0f} ms; ratio {mods / bare:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
