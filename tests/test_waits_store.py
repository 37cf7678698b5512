"""What each op reads and writes of the store and the mirrors, and what it may skip.

An op copies the store's entries it did not change back as they were spelt, and reads
only the mirrors its change concerns while the identities the last op left in
``store.lock`` say that nothing else changed. These tests hold both to the plain way:
the store written is the one ``json.dumps`` writes, and every mirror changed behind the
ops' back (in place, size and time kept; replaced; removed; a store restored from a
backup; the record in the lock torn) is still found and mended by the next op.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lichhook.waits import folder as folder_module
from lichhook.waits.api import run_op
from lichhook.waits.rules import Refused, apply
from testkit.constants import NODE
from testkit.waits import assert_consistent, read

COMPACT = {"ensure_ascii": False, "separators": (",", ":")}

# ---- the store: entries copied as they were, or encoded again ------------------------------

names = st.sampled_from(["rev@n", "ci@n", "b\u00e9b\u00e9@n", "x@n"])
sessions = st.sampled_from(["s1", "s2", "s3", "s4"])
ops = st.tuples(st.sampled_from(["add", "list", "watched", "said", "done", "adopt"]), names, sessions,
                st.text(min_size=1, max_size=12), st.integers(1, 6))


def run_ops(state: dict, sequence: list) -> set:
    """Apply ``sequence`` to ``state`` as the ops would; returns the names they changed."""
    changed: set = set()
    for i, (op, name, session, what, number) in enumerate(sequence):
        kwargs: dict = {}
        if op == "add":
            kwargs = {"what": what, "family": None}
        elif op in ("watched", "said", "done"):
            kwargs = {"wait_id": f"w{number}", **({"note": what} if op != "done" else {})}
        try:
            _, names_changed = apply(state, op, name, session, f"2026-01-01T00:00:{i % 60:02d}Z", **kwargs)
        except Refused:
            continue
        changed.update(names_changed)
    return changed


@settings(max_examples=150, deadline=None)
@given(st.lists(ops, max_size=12), st.lists(ops, max_size=6))
def test_the_store_written_is_the_one_json_writes(first, then):
    state = folder_module.empty_state()
    run_ops(state, first)
    text, spans = folder_module.store_text(state)
    assert text == json.dumps(state, **COMPACT) and spans is not None
    loaded = json.loads(text)
    changed = run_ops(loaded, then)
    written, where = folder_module.store_text(loaded, (text, spans), changed)
    assert written == json.dumps(loaded, **COMPACT)
    assert {name: json.loads(written[start:end]) for name, (_, start, end) in where.items()} == loaded["names"]
    assert {name: json.loads("{" + written[member:end] + "}")[name] for name, (member, _, end) in where.items()} \
        == loaded["names"]


@settings(max_examples=60, deadline=None)
@given(st.lists(ops, min_size=1, max_size=10), st.lists(ops, max_size=6), st.sampled_from([2, None]))
def test_a_store_spelt_otherwise_is_written_with_the_same_content(first, then, indent):
    state = folder_module.empty_state()
    run_ops(state, first)
    text = json.dumps(state, indent=indent, ensure_ascii=True)  # as a hand or another tool might
    loaded = json.loads(text)
    changed = run_ops(loaded, then)
    written, where = folder_module.store_text(loaded, None, changed)
    assert json.loads(written) == loaded
    assert {name: json.loads(written[start:end]) for name, (_, start, end) in where.items()} == loaded["names"]
    assert {name: json.loads("{" + written[member:end] + "}")[name] for name, (member, _, end) in where.items()} \
        == loaded["names"]


def test_ids_folded_on_load_are_written_folded(tmp_path):
    env = {"LICHHOOK_WAITS_DIR": str(tmp_path / "w"), "LICHHOOK_NODE": NODE}
    assert run_op("add", by="rev", session="s1", what="x", environ=env)["ok"]
    assert run_op("add", by="ci", session="s2", what="y", environ=env)["ok"]
    store = tmp_path / "w" / "store.json"
    store.write_text(store.read_text().replace('"session":"s2"', '"session":"S2"'), encoding="utf-8")
    assert run_op("add", by="rev", session="s1", what="z", environ=env)["ok"]  # changes rev only
    assert read(store)["names"][f"ci@{NODE}"]["session"] == "s2"


# ---- the mirrors: read only when something may have changed them --------------------------


@pytest.fixture
def env(tmp_path) -> dict:
    return {"LICHHOOK_WAITS_DIR": str(tmp_path / "waits"), "LICHHOOK_NODE": NODE}


@pytest.fixture
def waits(env) -> Path:
    for who, session in (("rev", "s1"), ("ci", "s2"), ("qa", "s3")):
        assert run_op("add", by=who, session=session, what=f"{who} waits", environ=env)["ok"]
    return Path(env["LICHHOOK_WAITS_DIR"])


def mirrors_read(monkeypatch, env: dict, *op: str, **kw: str) -> list:
    """The mirror files an op read, in order, and "store" where it parsed the whole store."""
    seen: list = []
    real_read, real_loads = folder_module.Dir.read, folder_module.json.loads

    def read_file(self, name, limit=None):  # type: ignore[no-untyped-def]
        if self.path.endswith("sessions") or name == "index.json":
            seen.append(name)
        return real_read(self, name, limit)

    def load_whole(text, **kw):  # type: ignore[no-untyped-def]
        value = real_loads(text, **kw)
        if isinstance(value, dict) and list(value) == ["format", "names"]:
            seen.append("store")
        return value

    monkeypatch.setattr(folder_module.Dir, "read", read_file)
    monkeypatch.setattr(folder_module.json, "loads", load_whole)
    answer = run_op(op[0], by=op[1], session=op[2], environ=env, **kw)
    monkeypatch.undo()
    assert answer["ok"], answer
    return seen


def test_an_op_reads_only_the_mirrors_and_entries_its_change_concerns(monkeypatch, env, waits):
    assert mirrors_read(monkeypatch, env, "list", "rev", "s1") == []
    assert mirrors_read(monkeypatch, env, "add", "rev", "s1", what="more") == []  # written, not read
    assert mirrors_read(monkeypatch, env, "adopt", "ci", "s4") == ["s4.json"]  # it held no name before
    assert mirrors_read(monkeypatch, env, "list", "qa", "s3") == []
    assert_consistent(waits)
    # Anything the last op did not leave so: the whole store and every mirror are read.
    (waits / "sessions" / "s3.json").write_text("{}", encoding="utf-8")
    assert sorted(mirrors_read(monkeypatch, env, "list", "qa", "s3")) == ["index.json", "s1.json", "s3.json",
                                                                          "s4.json", "store"]
    assert_consistent(waits)


def test_the_index_is_written_from_the_store_when_it_changes_and_left_when_not(env, waits):
    before = (waits / "index.json").read_bytes()
    assert run_op("watched", by="rev", session="s1", id="w1", environ=env)["ok"]  # open counts stay
    assert (waits / "index.json").read_bytes() == before
    assert run_op("adopt", by="ci", session="s4", environ=env)["ok"]  # a holder changes
    assert_consistent(waits)
    assert run_op("done", by="qa", session="s3", id="w1", environ=env)["ok"]  # a name leaves it
    assert [n["name"] for n in read(waits / "index.json")["names"]] == [f"ci@{NODE}", f"rev@{NODE}"]
    assert_consistent(waits)


def test_a_mirror_changed_in_place_with_its_size_and_time_kept_is_mended(env, waits):
    mirror = waits / "sessions" / "s2.json"
    before = os.stat(mirror)
    text = mirror.read_text(encoding="utf-8")
    mirror.write_text(text.replace("ci waits", "CI WAITS"), encoding="utf-8")
    os.utime(mirror, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(mirror).st_size == before.st_size
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
    assert_consistent(waits)


def test_a_store_restored_from_a_backup_brings_the_mirrors_back_in_line(env, waits):
    backup = (waits / "store.json").read_bytes()
    assert run_op("done", by="ci", session="s2", id="w1", environ=env)["ok"]
    assert read(waits / "sessions" / "s2.json")["waits"] == []
    (waits / "store.json").write_bytes(backup)
    assert run_op("list", by="rev", session="s1", environ=env)["ok"]
    assert [w["id"] for w in read(waits / "sessions" / "s2.json")["waits"]] == ["w1"]
    assert_consistent(waits)


@pytest.mark.parametrize("record", [b"", b"9999999\nnode", b"12\nnode x\nsto", b"garbage\xff\n", b"5\n\xff\xfe\xfd\xfc\xfb"])
def test_a_lost_or_torn_record_in_the_lock_costs_a_read_of_every_mirror(monkeypatch, env, waits, record):
    lock = waits / "store.lock"
    with open(lock, "r+b") as f:
        f.seek(32)
        f.write(record)
        f.truncate()
    (waits / "sessions" / "s3.json").write_text("{", encoding="utf-8")
    assert sorted(mirrors_read(monkeypatch, env, "list", "rev", "s1")) == ["index.json", "s1.json", "s2.json",
                                                                            "s3.json", "store"]
    assert_consistent(waits)
    assert mirrors_read(monkeypatch, env, "list", "rev", "s1") == []  # and the record is whole again


def test_another_node_name_rewrites_the_index(env, waits):
    assert run_op("list", by=f"rev@{NODE}", session="s1", environ=dict(env, LICHHOOK_NODE="elsewhere"))["ok"]
    assert read(waits / "index.json")["node"] == "elsewhere"
