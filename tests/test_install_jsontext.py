"""The JSON span parser and text editor under install, and the property that install
followed by uninstall gives back a config's original bytes, over generated configs."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsonconfigs import LAYOUTS, VALUES, configs, text_of
from lichhook.install.config import jsontext
from lichhook.install.errors import ConfigError
from lichhook.install.disk import files
from lichhook.install.config.jsonedit import Doc

QUICK = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAVY = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def strict_loads(text: str):
    """json.loads as JavaScript reads JSON: no NaN or Infinity, numbers kept as text."""
    def refuse(name):
        raise ValueError(name)
    return json.loads(text, parse_constant=refuse, parse_int=str, parse_float=str, object_pairs_hook=list)


# -- the parser --------------------------------------------------------------------------


@QUICK
@given(VALUES, LAYOUTS)
def test_every_generated_text_parses_and_spans_cover_it(tree, layout):
    text = text_of(("array", [tree]), layout)
    strict_loads(text)  # the generator writes valid JSON
    root = jsontext.parse(text)
    assert root is not None and root.kind == "array"
    stack = [root]
    while stack:
        node = stack.pop()
        assert strict_loads(node.raw) is not None or node.raw == "null"
        for child in node.children():
            value = child.value if isinstance(child, jsontext.Member) else child
            if isinstance(child, jsontext.Member):
                assert child.key == json.loads(text[child.start:child.key_end])
            stack.append(value)


# json names a trailing comma itself from 3.13 on, and points at the comma; before, it
# pointed where it expected the next member.
TRAILING_COMMA_COLUMN = 8 if sys.version_info >= (3, 13) else 9


@pytest.mark.parametrize("text,where", [
    ("[NaN]", (1, 2)), ("[Infinity]", (1, 2)), ('{"a": 1,}', (1, TRAILING_COMMA_COLUMN)), ("// c\n{}", (1, 1)), ("{'a': 1}", (1, 2)),
    ("[01]", (1, 3)), ('["\x01"]', (1, 3)), ('["abc', (1, 2)), ("[1] [2]", (1, 5)), ("[\u0661]", (1, 2)),
    ("[1.]", (1, 3)), ('{"a" 1}', (1, 6)), ("\u00a0{}", (1, 1)), ("[" * 5000 + "]" * 4999, None),
])
def test_what_is_not_json_is_refused_with_its_place(text, where):
    with pytest.raises(jsontext.JsonTextError) as info:
        jsontext.parse(text)
    if where:
        assert (info.value.line, info.value.column) == where


def test_any_depth_parses_without_recursion():
    text = '{"a": ' + "[" * 200_000 + "]" * 200_000 + ', "b": {"c": 1e400}}'
    root = jsontext.parse(text)
    assert root.get("b").get("c").raw == "1e400"
    assert root.get("a").end == len(text) - len(', "b": {"c": 1e400}}')


def test_values_are_read_as_javascript_reads_them():
    root = jsontext.parse('{"k": 1, "s": "\\ud800\\u00e9", "k": {"x": [true, null, "y"]}}')
    assert root.get("s").string() == "\ud800\u00e9"
    assert root.get("k").get("x").strings() == [None, None, "y"]  # the last duplicate wins
    assert [m.key for m in root.members()] == ["k", "s", "k"]


# -- the editor ----------------------------------------------------------------------------


@QUICK
@given(VALUES, LAYOUTS, st.data())
def test_adding_then_removing_a_child_anywhere_gives_back_the_text(tree, layout, data):
    text = text_of(("object", [('"top"', tree)]), layout)
    doc = Doc(text)
    containers = []
    stack = [()]
    while stack:
        path = stack.pop()
        node = doc.at(path)
        if node.kind in ("object", "array"):
            containers.append(path)
            for i, child in enumerate(node.children()):
                if isinstance(child, jsontext.Member):
                    if node.index_of(child.key) == i:  # reachable by key: the last duplicate
                        stack.append((*path, child.key))
                else:
                    stack.append((*path, i))
    path = data.draw(st.sampled_from(containers))
    node = doc.at(path)
    value = {"type": "command", "command": "/usr/bin/python3 /h/Zoë/lichhook.pyz claude", "timeout": 10}
    if node.kind == "object":
        doc.add_member(path, "lichhook", value)
        added = (*path, "lichhook")
    else:
        doc.add_item(path, value)
        added = (*path, len(node.children()))
    assert strict_loads(doc.text) is not None
    assert doc.at(added).get("command").string() == value["command"]
    if node.children():  # appended after a sibling: removal restores the text exactly
        doc.remove(added)
        assert doc.text == text
    else:
        doc.remove(added)
        assert doc.at(path).raw in ("{}", "[]")


def test_added_text_follows_its_neighbours():
    doc = Doc('{\r\n\t"a": [1, 2],\r\n\t"b": {"x": 1}\r\n}')
    doc.add_member((), "c", {"k": ["v"]})
    assert doc.text == '{\r\n\t"a": [1, 2],\r\n\t"b": {"x": 1},\r\n\t"c": {\r\n\t\t"k": [\r\n\t\t\t"v"\r\n\t\t]\r\n\t}\r\n}'
    doc.add_item(("a",), 3)
    doc.add_member(("b",), "y", {"z": 2})
    assert '"a": [1, 2, 3]' in doc.text and '"b": {"x": 1, "y": {"z": 2}}' in doc.text


def test_escaped_files_get_escaped_text_and_raw_files_raw_text():
    escaped = Doc('{"a": "\\u00e9"}')
    escaped.add_member((), "b", "Zoë")
    assert escaped.text == '{"a": "\\u00e9", "b": "Zo\\u00eb"}'
    raw = Doc('{"a": "é"}')
    raw.add_member((), "b", "Zoë")
    assert raw.text == '{"a": "é", "b": "Zoë"}'


# -- install then uninstall, through the real files layer ----------------------------------


def harness_files(home: str):
    """(harness, the JSON file of it the generated config goes in, env) for each kind of
    JSON config lichhook edits."""
    from lichhook.install.harnesses.claude import Claude
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harnesses.crush import Crush
    from lichhook.install.harness import Env
    from lichhook.install.harnesses.modules import Omp

    env = Env({"HOME": home, "PATH": ""}, windows=False)
    return [
        (Claude(env), os.path.join(home, ".claude", "settings.json")),
        (Claude(env), os.path.join(home, ".claude.json")),
        (Codex(env), os.path.join(home, ".codex", "hooks.json")),
        (Crush(env), os.path.join(home, ".config", "crush", "crush.json")),
        (Omp(env), os.path.join(home, ".omp", "agent", "mcp.json")),
    ]


def install_then_uninstall(text: bytes, which: int, windows: bool = False) -> None:
    from lichhook.install.copies.target import Target

    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        harness, path = harness_files(home)[which]
        # omp's folder is joined the Windows way under a Windows env, which a POSIX home
        # cannot stand for (it would name a file in the working folder): its entries still
        # take the Windows forms, from the target.
        harness.env.windows = windows and harness.name != "omp"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text)
        archive = os.path.join(home, ".local", "share", "lichhook", "lichhook.pyz")
        target = Target("/usr/bin/python3", archive, windows=windows, short_path=lambda p: None)
        try:
            for edit in harness.install(target):
                files.apply(edit)
        except ConfigError as exc:
            assert path in str(exc)  # refused (a hooks value that is not an object), naming the file
            with open(path, "rb") as f:
                assert f.read() == text
            return
        with open(path, "rb") as f:
            installed = f.read()
        strict_loads(installed.decode("utf-8-sig"))
        assert any(found.ours and found.path == path for found in harness.registrations(target))
        with open(path + files.BACKUP_SUFFIX, "rb") as f:
            assert f.read() == text
        for edit in harness.uninstall(target):
            files.apply(edit)
        with open(path, "rb") as f:
            assert f.read() == text


@QUICK
@given(configs(), LAYOUTS, st.integers(min_value=0, max_value=4), st.booleans())
def test_install_then_uninstall_gives_back_the_original_bytes(tree, layout, which, bom):
    text = text_of(tree, layout).encode("utf-8")
    install_then_uninstall((b"\xef\xbb\xbf" if bom else b"") + text, which)


@pytest.mark.heavy
@HEAVY
@given(configs(), LAYOUTS, st.integers(min_value=0, max_value=4), st.booleans())
def test_install_then_uninstall_gives_back_the_original_bytes_heavy(tree, layout, which, windows):
    install_then_uninstall(text_of(tree, layout).encode("utf-8"), which, windows)


@pytest.mark.parametrize("text", [
    b"", b"\n", b"{}", b"{ }", b"{\n}\n", b'{"hooks": {}}', b'{"hooks": {"Stop": []}}', b'{"mcpServers": {}}\r\n',
    b'{"n": 1e400, "m": 1e2, "f": 1.10, "i": 12345678901234567890, "s": "\\ud800", "z": "\xc3\xa9"}',
    b'{"hooks": 1, "hooks": {"SessionStart": [ ]}}',
])
@pytest.mark.parametrize("which", range(5))
def test_install_then_uninstall_gives_back_these_bytes(text, which):
    install_then_uninstall(text, which)


JSONISH = st.recursive(
    st.sampled_from(["1", "-0.5e3", '"s"', '"\\\\u00e9"', "true", "null", "[]", "{}", "[ ]"]),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + " , ".join(items) + "]"),
        st.lists(inner, max_size=3).map(lambda items: "{" + ",".join(f'"k{i}" : {v}' for i, v in enumerate(items)) + "}"),
        st.integers(1, 40).flatmap(lambda depth: inner.map(lambda v: "[" * depth + "\n" + v + " ]" * depth)),
    ), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(JSONISH, st.integers(0, 200), st.sampled_from(["", " ", "]", "}", ",", "]]"]))
def test_the_iterative_reader_agrees_with_the_standard_one(text, cut, tail):
    """The reader for any depth (runs of brackets taken whole) finds the same end as the
    standard library's scanner, and refuses what it refuses, at the same place."""
    from lichhook.install.config.jsontext import _SKIPPER, _iterative_value_end

    for candidate in (text + tail, text[:cut] + tail):
        try:
            expected = ("end", _SKIPPER.raw_decode(candidate, 0)[1])
        except json.JSONDecodeError as exc:
            expected = ("error", exc.pos)
        try:
            got = ("end", _iterative_value_end(candidate, 0))
        except jsontext.JsonTextError as exc:
            got = ("error", exc.pos)
        if expected[0] == "end" or got[0] == "end":
            assert got == expected, candidate
        else:
            assert got[0] == "error"


def test_an_array_nested_200000_deep_is_read_in_a_few_steps():
    """Two arrays nested 200,000 deep, one inside another, end where they end."""
    from lichhook.install.config.jsontext import _iterative_value_end

    deep = "[" * 200_000 + "1" + "]" * 200_000
    text = '{"a": ' + deep + ', "b": [' + deep + "]}"
    assert _iterative_value_end(text, 0) == len(text)
    assert _iterative_value_end(text, 6) == 6 + len(deep)
