"""Paths of this checkout and the values the tests agree on."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
E2E = TESTS / "e2e"
BENCH = ROOT / "bench"
SHARED = ROOT.parent / "shared"
# lich's own fixture; tests read it when it is beside the checkout and pass without it.
SHARED_CONTRACT = SHARED / "lich-contract" / "session-start.jsonl"
# The fact sheets on each harness's hook and config formats, and on how they really run.
HARNESS_FACTS = SHARED / "reference" / "harnesses.md"
REAL_HARNESS_FACTS = SHARED / "reference" / "real-harnesses.md"

# The stand-in's token holds characters a URL must encode, so every report proves it does.
TOKEN = "t&k=n #\u00fc"
LICH_SESSION = "lich-s1"
# The waits node name the tests pass as LICHHOOK_NODE, so names read "who@testnode".
NODE = "testnode"
