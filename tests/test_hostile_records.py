"""Hostile plugin records: what the harnesses record of lich-plugin (Claude Code's
``installed_plugins.json`` and ``known_marketplaces.json``, Antigravity's ``plugin.json``,
``codex plugin list --json``) holding anything at all.

The property: install, uninstall and doctor never end in a traceback over one; every
other harness is done as if it were not there; the record is left byte for byte. The
record's own harness may be skipped with a sentence naming the file.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit import archive, environment
from tests.jsonconfigs import VALUES, Layout, render

HARNESSES = {"claude": "Claude Code", "codex": "Codex CLI", "antigravity": "Antigravity", "opencode": "opencode"}
PLUGIN = {"scope": "user", "installPath": "/nowhere/lich/0.17.2", "version": "0.17.2"}
# (harness, where the record is, the record as the harness writes it, other files it needs)
RECORDS = {
    "installed_plugins": ("claude", ".claude/plugins/installed_plugins.json",
                          {"version": 2, "plugins": {"lich@lich-plugin": [PLUGIN]}}, {}),
    "known_marketplaces": ("claude", ".claude/plugins/known_marketplaces.json",
                           {"lich-plugin": {"source": {"source": "github", "repo": "omartelo/lich-plugin"}}},
                           {".claude/plugins/installed_plugins.json": {"plugins": {"lich@lich-plugin": [PLUGIN]}}}),
    "plugin.json": ("antigravity", ".gemini/config/plugins/lich/plugin.json", {"name": "lich", "version": "0.18.0"},
                    {}),
    "codex list": ("codex", "codex-list.json",
                   {"installed": [{"pluginId": "lich@lich-plugin", "version": "0.18.1", "installed": True,
                                   "marketplaceSource": {"source": "https://github.com/omartelo/lich-plugin"}}],
                    "available": []}, {}),
}

# `codex`, printing the listing the test wrote as its `plugin list --json`
FAKE_CODEX = f"""#!{sys.executable}
import os, sys
if sys.argv[1:4] == ["plugin", "list", "--json"]:
    sys.stdout.buffer.write(open(os.path.join(os.environ["HOME"], "codex-list.json"), "rb").read())
"""


def _deep(depth: int, kind: str) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


HOSTILE_VALUES = st.one_of(
    st.builds(_deep, st.sampled_from([1000, 5000, 100_000]), st.sampled_from(["array", "object"])),
    st.sampled_from(['"' + "x" * 1_000_000 + '"', "NaN", "-Infinity", "1e400", "-1e-400", "null", "true", "[]", "{}",
                     '"../../x"', '"\\ud800"', '"a\\u0000b"', "5", '[{"version": 7}]']),
    VALUES.map(lambda tree: render(tree, Layout(None, "\n", ":", ",", False, ""))),
)


def _paths(value, prefix=()) -> list:
    """Every path to a value in ``value``, the root's included."""
    found = [prefix]
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        found += _paths(child, prefix + (key,))
    return found


def _write(value, path: tuple, hostile: str, duplicate: bool) -> str:
    """``value`` as JSON text with ``hostile`` (JSON text) at ``path``: in place of the
    value there, or, with ``duplicate``, as a second member of the same name after it."""
    if not path:
        return hostile
    key, rest = path[0], path[1:]
    if isinstance(value, list):
        return "[" + ",".join(_write(v, rest, hostile, duplicate) if i == key else json.dumps(v)
                              for i, v in enumerate(value)) + "]"
    parts = []
    for k, v in value.items():
        if k != key:
            parts.append(f"{json.dumps(k)}:{json.dumps(v)}")
        elif duplicate and not rest:
            parts += [f"{json.dumps(k)}:{json.dumps(v)}", f"{json.dumps(k)}:{hostile}"]
        else:
            parts.append(f"{json.dumps(k)}:{_write(v, rest, hostile, duplicate)}")
    return "{" + ",".join(parts) + "}"


@st.composite
def hostile_records(draw) -> tuple:
    """(record name, its bytes): the record with one value anywhere replaced or repeated
    by a hostile one, or bytes that are not JSON at all."""
    name = draw(st.sampled_from(sorted(RECORDS)))
    good = RECORDS[name][2]
    if draw(st.integers(0, 5)) == 0:
        whole = json.dumps(good).encode()
        raw = draw(st.sampled_from([b"\xff\xfe" + whole, whole[:len(whole) // 2], b"", b"\xef\xbb\xbf" + whole,
                                    whole + b"garbage", whole.replace(b'"', b"'")]))
        return name, raw
    path = draw(st.sampled_from(_paths(good)))
    text = _write(good, path, draw(HOSTILE_VALUES), duplicate=bool(path) and draw(st.booleans()))
    return name, text.encode("utf-8", "surrogatepass")


def _home(folder: Path, name: str, raw: bytes) -> tuple:
    """A home with every harness of HARNESSES detected and the record ``name`` holding ``raw``."""
    home = folder / "home"
    for sub in (".claude/plugins", ".codex", ".gemini/config", ".config/opencode"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    _, where, _, others = RECORDS[name]
    for rel, doc in others.items():
        (home / rel).write_text(json.dumps(doc))
    record = home / where
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_bytes(raw)
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    if name == "codex list":
        codex = bin_dir / "codex"
        codex.write_text(FAKE_CODEX)
        codex.chmod(codex.stat().st_mode | stat.S_IXUSR)
    env = dict(environment.clean_env(home), PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return record, env


def _stopped(stderr: str, command: str) -> set:
    """The harnesses ``command`` named as not done."""
    return {line.split(": ")[1] for line in stderr.splitlines() if line.startswith(f"lichhook {command}: ")}


def _every_other_harness_done(pyz: Path, name: str, raw: bytes, commands=("install", "doctor", "uninstall")) -> str:
    """What the first command said on stderr."""
    harness = RECORDS[name][0]
    said = []
    folder = Path(tempfile.mkdtemp(prefix="lichhook-hostile-"))
    try:
        record, env = _home(folder, name, raw)
        run = archive.Run(pyz, env)
        for command in commands:
            args = (command, "--no-run") if command == "doctor" else (command, "--all")
            done = run(*args, timeout=120)
            out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
            said.append(err)
            assert "Traceback" not in err + out, (command, err[-3000:])
            assert done.returncode in (0, 1), (command, done.returncode, err[-3000:])
            if command != "doctor":
                assert _stopped(err, command) <= {harness}, (command, err[-3000:])
                for other in HARNESSES:
                    if other != harness:  # one line a harness: "claude: created ..."
                        assert any(line.startswith(f"{other}: ") for line in out.splitlines()), \
                            (command, other, out[-3000:])
            assert record.read_bytes() == raw, command
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return said[0]


@pytest.mark.heavy  # about 20 s: run once, in the heavy lane, not on every Python
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_records())
def test_no_hostile_record_stops_another_harness_or_gives_a_traceback(pyz, case):
    _every_other_harness_done(pyz, *case)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("name, path, hostile", [
    ("installed_plugins", (), DEEP),
    ("installed_plugins", ("plugins", "lich@lich-plugin", 0, "scope"), DEEP),
    ("known_marketplaces", (), DEEP),
    ("plugin.json", (), DEEP),
    ("installed_plugins", ("plugins", "lich@lich-plugin", 0, "installPath"), "5"),
    ("codex list", ("installed",), DEEP),
    ("codex list", ("installed",), "5"),
    ("codex list", ("installed", 0, "version"), '"../../x"'),
], ids=["installed_plugins-deep", "installed_plugins-deep-inside", "known_marketplaces-deep", "plugin.json-deep",
        "installPath-not-a-string", "codex-list-deep", "codex-installed-not-a-list", "codex-version-a-path"])
def test_each_hostile_record_the_issue_names_stops_only_its_harness(pyz, name, path, hostile):
    said = _every_other_harness_done(pyz, name, _write(RECORDS[name][2], path, hostile, False).encode(),
                                     ("install", "doctor"))
    if hostile == '"../../x"':  # refused as what it is, never looked for as a folder
        assert "codex: `codex plugin list --json` says lich@lich-plugin '../../x' is installed, which is not a " \
               "version" in said, said
