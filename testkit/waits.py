"""Reading a waits folder in tests, and checking that its mirrors agree with its store."""

from __future__ import annotations

import json
from pathlib import Path


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def assert_consistent(folder: Path) -> dict:
    """The mirrors say exactly what the store says; returns the store."""
    store = read(folder / "store.json")
    bound = {e["session"]: n for n, e in store["names"].items() if e["session"]}
    for sid, name in bound.items():
        mirror = read(folder / "sessions" / f"{sid}.json")
        assert set(mirror) == {"session", "name", "waits", "updated"}
        assert (mirror["session"], mirror["name"]) == (sid, name)
        assert mirror["waits"] == store["names"][name]["waits"]
    for path in (folder / "sessions").iterdir():
        assert path.suffix == ".json", path  # no temporary file left behind
        if path.stem not in bound:
            mirror = read(path)
            assert (mirror["session"], mirror["name"], mirror["waits"]) == (path.stem, None, [])
    index = read(folder / "index.json")
    assert set(index) == {"node", "updated", "names"}
    expected = sorted(
        ({"name": n, "session": e["session"], "open": len(e["waits"])} for n, e in store["names"].items() if e["waits"]),
        key=lambda x: x["name"],
    )
    assert index["names"] == expected
    return store
