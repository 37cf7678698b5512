"""What each op reads and writes of the store and the mirrors.

Every op reads the whole store and the index, and the mirror of its own session (and of
any session whose name it changes), and writes the whole store back when it changed.
These tests hold the format on disk to what the hooks and earlier releases read (compact
JSON, as ``json.dumps`` spells it); hold the mirrors changed behind the ops' back to being
mended: a missing one, and any when the index is out of line with the store (a store
restored from a backup, an index emptied or removed) by the next op of any session, one
changed in place by the next op of its own session; and hold an op cut short to a check
of every mirror by the next op.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lichhook.waits import folder as folder_module
from lichhook.waits.api import run_op
from testkit.constants import NODE
from testkit.waits import assert_consistent, read

COMPACT = {"ensure_ascii": False, "separators": (",", ":")}


@pytest.fixture
def env(tmp_path) -> dict:
    return {"LICHHOOK_WAITS_DIR": str(tmp_path / "waits"), "LICHHOOK_NODE": NODE}


@pytest.fixture
def waits(env) -> Path:
    for who, session in (("rev", "s1"), ("ci", "s2"), ("qa", "s3")):
        assert run_op("add", by=who, session=session, what=f"{who} waits", environ=env)["ok"]
    return Path(env["LICHHOOK_WAITS_DIR"])


# ---- the store ------------------------------------------------------------------------------


def test_the_store_is_compact_json_as_json_writes_it(env, waits):
    assert run_op("add", by="zed", session="s4", what="caf\u00e9 \u2603", environ=env)["ok"]
    assert run_op("said", by="rev", session="s1", id="w1", note="n\u00f6te", environ=env)["ok"]
    text = (waits / "store.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), **COMPACT)
    assert "caf\u00e9 \u2603" in text  # UTF-8 as it is, not escaped


def test_a_store_spelt_otherwise_is_read_and_written_back_compact(env, waits):
    store = waits / "store.json"
    state = read(store)
    store.write_text(json.dumps(state, indent=2, ensure_ascii=True), encoding="utf-8")  # as a hand might
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]  # changes nothing: left as it is
    assert json.loads(store.read_text(encoding="utf-8")) == state
    assert run_op("add", by="rev", session="s1", what="more", environ=env)["ok"]
    text = store.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), **COMPACT)
    assert json.loads(text)["names"][f"ci@{NODE}"] == state["names"][f"ci@{NODE}"]
    assert_consistent(waits)


def test_ids_folded_on_load_are_written_folded(tmp_path):
    env = {"LICHHOOK_WAITS_DIR": str(tmp_path / "w"), "LICHHOOK_NODE": NODE}
    assert run_op("add", by="rev", session="s1", what="x", environ=env)["ok"]
    assert run_op("add", by="ci", session="s2", what="y", environ=env)["ok"]
    store = tmp_path / "w" / "store.json"
    store.write_text(store.read_text().replace('"session":"s2"', '"session":"S2"'), encoding="utf-8")
    assert run_op("add", by="rev", session="s1", what="z", environ=env)["ok"]  # changes rev only
    assert read(store)["names"][f"ci@{NODE}"]["session"] == "s2"


# ---- the mirrors: read by the op of their session, mended when they disagree ------------------


def files_read(monkeypatch, env: dict, *op: str, **kw: str) -> list:
    """The store and mirror files an op read."""
    seen: list = []
    real_read = folder_module.Dir.read

    def read_file(self, name, limit=None):  # type: ignore[no-untyped-def]
        if self.path.endswith("sessions") or name in ("index.json", "store.json"):
            seen.append(name)
        return real_read(self, name, limit)

    monkeypatch.setattr(folder_module.Dir, "read", read_file)
    answer = run_op(op[0], by=op[1], session=op[2], environ=env, **kw)
    monkeypatch.undo()
    assert answer["ok"], answer
    return sorted(seen)


def test_an_op_reads_the_store_the_index_and_the_mirror_of_its_session(monkeypatch, env, waits):
    assert files_read(monkeypatch, env, "list", "rev", "s1") == ["index.json", "s1.json", "store.json"]
    # An op that changes the store rewrites the mirrors it changes without reading them:
    # its session's, and (adopt) the one of the session that lost the name.
    mirrors = waits / "sessions"
    before = {p.name: p.stat().st_ino for p in mirrors.iterdir()}  # a replaced file is a new one
    assert files_read(monkeypatch, env, "add", "rev", "s1", what="more") == ["index.json", "store.json"]
    assert files_read(monkeypatch, env, "adopt", "ci", "s4") == ["index.json", "store.json"]
    after = {p.name: p.stat().st_ino for p in mirrors.iterdir()}
    assert sorted(n for n in after if after[n] != before.get(n)) == ["s1.json", "s2.json", "s4.json"]
    assert_consistent(waits)


def test_an_op_cut_short_has_the_next_op_read_every_mirror(monkeypatch, env, waits):
    (waits / "store.dirty").write_bytes(b"")
    (waits / "sessions" / "s3.json").write_text("{", encoding="utf-8")
    every = ["index.json", "s1.json", "s2.json", "s3.json", "store.json"]
    assert files_read(monkeypatch, env, "list", "rev", "s1") == every
    assert not (waits / "store.dirty").exists()
    assert_consistent(waits)


def test_the_index_is_rewritten_only_when_what_it_lists_changes(env, waits):
    before = (waits / "index.json").read_bytes()
    assert run_op("watched", by="rev", session="s1", id="w1", environ=env)["ok"]  # open counts stay
    assert (waits / "index.json").read_bytes() == before
    assert run_op("adopt", by="ci", session="s4", environ=env)["ok"]  # a holder changes
    assert_consistent(waits)
    assert run_op("done", by="qa", session="s3", id="w1", environ=env)["ok"]  # a name leaves it
    assert [n["name"] for n in read(waits / "index.json")["names"]] == [f"ci@{NODE}", f"rev@{NODE}"]
    assert_consistent(waits)


def test_a_mirror_changed_in_place_is_mended_by_its_sessions_next_op(env, waits):
    mirror = waits / "sessions" / "s2.json"
    text = mirror.read_text(encoding="utf-8")
    mirror.write_text(text.replace("ci waits", "CI WAITS"), encoding="utf-8")
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]
    assert "CI WAITS" in mirror.read_text(encoding="utf-8")  # another session's op: not read (docs/waits.md)
    assert run_op("list", by="ci", session="s2", environ=env)["ok"]
    assert_consistent(waits)


def test_a_mirror_changed_in_place_is_mended_by_any_op_once_the_index_is_removed(env, waits):
    mirror = waits / "sessions" / "s2.json"
    mirror.write_text(mirror.read_text(encoding="utf-8").replace("ci waits", "CI WAITS"), encoding="utf-8")
    (waits / "index.json").unlink()  # the way docs/waits.md gives to have every mirror checked
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]
    assert_consistent(waits)


@pytest.mark.parametrize("damage", ["removed", "replaced", "index emptied"])
def test_a_mirror_removed_or_replaced_behind_the_ops_back_is_mended(env, waits, damage):
    if damage == "removed":
        (waits / "sessions" / "s2.json").unlink()
    elif damage == "replaced":
        (waits / "sessions" / "s3.json").rename(waits / "sessions" / "s2.json")
    else:
        (waits / "index.json").write_text("", encoding="utf-8")
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]
    if damage == "replaced":  # s3's mirror, missing, is written; s2's now says s3's waits
        assert read(waits / "sessions" / "s3.json")["session"] == "s3"
        assert run_op("list", by="ci", session="s2", environ=env)["ok"]
    assert_consistent(waits)


def test_a_store_restored_from_a_backup_brings_the_mirrors_back_in_line(env, waits):
    backup = (waits / "store.json").read_bytes()
    assert run_op("done", by="ci", session="s2", id="w1", environ=env)["ok"]
    assert read(waits / "sessions" / "s2.json")["waits"] == []
    (waits / "store.json").write_bytes(backup)
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]
    assert [w["id"] for w in read(waits / "sessions" / "s2.json")["waits"]] == ["w1"]
    assert_consistent(waits)


# The release before kept, after the holder's record in store.lock, what each op left for
# the next; a well-formed one claiming all is in line, and torn ones.
EARLIER_RECORDS = [
    b"64\nnode " + NODE.encode() + b"\nstore.json 1 2 3 4\nindex.json 1 2 3 4\nnames\nrev@x s1 1 0 1 2",
    b"", b"9999999\nnode", b"12\nnode x\nsto", b"garbage\xff\n", b"5\n\xff\xfe\xfd\xfc\xfb",
]


@pytest.mark.parametrize("record", EARLIER_RECORDS)
def test_what_an_earlier_release_left_in_the_lock_is_ignored(monkeypatch, env, waits, record):
    lock = waits / "store.lock"
    holder = lock.read_bytes()[:32]
    with open(lock, "r+b") as f:
        f.seek(32)
        f.write(record)
        f.truncate()
    (waits / "sessions" / "s3.json").write_text("{", encoding="utf-8")
    assert files_read(monkeypatch, env, "list", "qa", "s3") == ["index.json", "s3.json", "store.json"]
    assert_consistent(waits)
    assert int(lock.read_bytes()[:32].split()[1]) == int(holder.split()[1]) + 1


def test_another_node_name_rewrites_the_index(env, waits):
    assert run_op("list", by=f"rev@{NODE}", session="s1", environ=dict(env, LICHHOOK_NODE="elsewhere"))["ok"]
    assert read(waits / "index.json")["node"] == "elsewhere"
