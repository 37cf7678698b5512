"""Codex's config.toml: lichhook's server added, updated and removed by its key, with
every other byte kept, over generated TOML files (comments anywhere, multi-line values
that look like tables or markers, CRLF, no final newline, a byte order mark)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lichhook.install.config import tomlconfig
from lichhook.install.copies.target import Target

QUICK = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEAVY = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARCHIVE = "/home/me/.local/share/lichhook/lichhook.pyz"
TARGET = Target("/usr/bin/python3", ARCHIVE, windows=False)
OTHER = Target("/opt/Zoë/python3", ARCHIVE, windows=False)

KEYS = st.sampled_from(["model", "approval_policy", '"quoted key"', "x", "enabled", "command", "args", "env",
                        "'literal key'", "a-b_c"])
SCALARS = st.sampled_from([
    '"o3"', "'C:\\Users\\x'", '"esc \\" \\\\ \\u00e9 \\t"', "1_000", "0x1F", "1e400", "+inf", "nan", "1.10", "-0.0",
    "true", "1979-05-27T07:32:00Z", "07:32:00", '"Zoë ☃"', '""',
])
TRICKY = st.sampled_from([
    '"""\n[mcp_servers.lichhook]\ncommand = "not a table"\n"""',
    "'''\n# <<< lichhook <<<\n'''",
    '"""\n# >>> lichhook: MCP server (added by \'lichhook install codex\'; \'lichhook uninstall codex\' removes it) >>>\n"""',
    '[\n  "a", # one\n  # a comment inside\n  "b",\n]',
    '{ command = "x", args = ["y"] }',
    "[1, 2, [3, 4]]",
])
VALUES = st.one_of(SCALARS, TRICKY)
COMMENTS = st.sampled_from(["# a comment", "#", "# [mcp_servers.lichhook]", "# <<< not lichhook's", "#\tzoë"])
TABLES = st.sampled_from(["tui", 'projects."/work/proj"', "mcp_servers.docs", "mcp_servers.other", "features",
                          'hooks.state."/h/.codex/hooks.json:session_start:0:0"', "tui.model_availability_nux",
                          "mcp_servers.docs.env", "shell_environment_policy"])


@st.composite
def blocks(draw, keys) -> list:
    """Lines of key/values with comments and blank lines between them."""
    lines = []
    for key in draw(st.lists(keys, unique=True, max_size=4)):
        lines += draw(st.lists(st.one_of(COMMENTS, st.just("")), max_size=2))
        value = draw(VALUES)
        comment = draw(st.sampled_from(["", "  # inline", " #x"]))
        lines.append(f"{key} = {value}{comment if chr(10) not in value else ''}")
    return lines


@st.composite
def toml_files(draw) -> bytes:
    lines = draw(blocks(KEYS))
    for table in draw(st.lists(TABLES, unique=True, max_size=4)):
        lines += draw(st.lists(st.one_of(COMMENTS, st.just("")), max_size=2))
        lines.append(f"[{table}]" + draw(st.sampled_from(["", "  # about it"])))
        lines += draw(blocks(KEYS))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + (newline if draw(st.booleans()) and lines else "")
    text = text.replace("\n", newline) if newline == "\r\n" else text
    bom = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    return bom + text.replace("\r\r\n", "\r\n").encode("utf-8")


def value_of(raw: bytes):
    """The file's value, fit to compare (a ``nan`` equals a ``nan``)."""
    return tomlconfig.plain(tomlconfig.parse(raw.decode("utf-8-sig"), "config.toml"))


def round_trip(raw: bytes) -> None:
    try:
        before = value_of(raw)
    except Exception:
        assume(False)  # the generator wrote something TOML refuses (a key twice across dotted forms)
    notes: list = []
    added = tomlconfig.add(raw, "config.toml", TARGET, notes)
    if added == raw:
        assert notes and "by hand" in notes[0]  # mcp_servers written inline: the user is asked
        return
    after = value_of(added)
    expected = dict(before)
    expected["mcp_servers"] = dict(before.get("mcp_servers", {}), lichhook={"command": TARGET.python,
                                                                           "args": ["-I", "-S", ARCHIVE, "mcp"]})
    assert after == expected
    assert added.startswith(raw.rstrip(b"\r\n"))  # appended: nothing before it moved
    assert tomlconfig.add(added, "config.toml", TARGET, []) == added  # a second install changes nothing
    assert tomlconfig.remove(added, "config.toml", TARGET, False) == raw
    updated = tomlconfig.add(added, "config.toml", OTHER, [])
    assert value_of(updated)["mcp_servers"]["lichhook"]["command"] == OTHER.python
    assert tomlconfig.remove(updated, "config.toml", OTHER, False) == raw


@QUICK
@given(toml_files())
def test_add_then_remove_gives_back_the_original_bytes(raw):
    round_trip(raw)


@pytest.mark.heavy
@HEAVY
@given(toml_files())
def test_add_then_remove_gives_back_the_original_bytes_heavy(raw):
    round_trip(raw)


@QUICK
@given(toml_files())
def test_the_fast_reader_agrees_with_tomlkit(raw):
    """Values are read by tomllib (tomli before 3.11) and edits made by tomlkit: where
    both read a file, they must read the same value, or a right edit would look wrong."""
    text = raw.decode("utf-8-sig")
    try:
        theirs = value_of(raw)
    except Exception:
        assume(False)
    assert tomlconfig.tomllib is not None
    assert lf_strings(tomlconfig._value(text)) == lf_strings(theirs)


def lf_strings(value):
    """``value`` with CRLF in strings as LF: a multi-line string written with CRLF reads
    with LF in tomllib and tomli, as written in tomlkit (TOML leaves it to the reader)."""
    if isinstance(value, str):
        return value.replace("\r\n", "\n")
    if isinstance(value, dict):
        return {k: lf_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lf_strings(v) for v in value]
    return value


@pytest.mark.parametrize("raw", [
    b'model = "o3"\n\n[projects."/p"]\ntrust_level = "trusted"\n', b"x = nan\n", b'model = "o3"\n[tui]\r\nx = 1',
    b'[mcp_servers.lichhook]\ncommand = "p"\nargs = ["' + ARCHIVE.encode() + b'", "mcp"]\n# about tui\n[tui]\nx = 1\n',
])
def test_without_a_fast_reader_tomlkit_reads_alone(raw, monkeypatch):
    """An archive assembled from a 3.11 environment (no tomli in it) and run by 3.9 or
    3.10 has neither tomllib nor tomli: the same edits, read by tomlkit, slower."""
    with_reader = (tomlconfig.add(raw, "config.toml", TARGET, []), tomlconfig.remove(raw, "config.toml", TARGET, False))
    monkeypatch.setattr(tomlconfig, "tomllib", None)
    assert tomlconfig.add(raw, "config.toml", TARGET, []) == with_reader[0]
    assert tomlconfig.remove(raw, "config.toml", TARGET, False) == with_reader[1]
    if b"mcp_servers" not in raw:
        round_trip(raw)


@pytest.mark.parametrize("raw", [b"", b"\n", b"x = 1", b"x = 1\r\n", b"\xef\xbb\xbf", b"# only a comment",
                                 b"x = 1\n\n\n", b'[mcp_servers]\n', b'mcp_servers.docs.command = "d"\n'])
def test_add_then_remove_gives_back_these_bytes(raw):
    round_trip(raw)


def test_a_table_written_with_dotted_keys_is_updated_and_removed():
    raw = (b'model = "o3"\n\n[mcp_servers]\nlichhook.command = "/old/python"\n'
           b'lichhook.args = ["' + ARCHIVE.encode() + b'", "mcp"]  # ours\nlichhook.env.A = "1"\n\n[tui]\nx = 1\n')
    updated = tomlconfig.add(raw, "config.toml", TARGET, [])
    assert updated == raw.replace(b"/old/python", b"/usr/bin/python3").replace(b'args = ["', b'args = ["-I", "-S", "')
    removed = tomlconfig.remove(updated, "config.toml", TARGET, False)
    assert removed == b'model = "o3"\n\n[mcp_servers]\n\n[tui]\nx = 1\n'


def test_comments_after_the_table_belong_to_what_follows_and_stay():
    raw = (b'[mcp_servers.lichhook]\ncommand = "p"\nargs = ["' + ARCHIVE.encode() + b'", "mcp"]\n'
           b"# about tui\n\n# more\n[tui]\nx = 1\n")
    assert tomlconfig.remove(raw, "config.toml", TARGET, False) == b"# about tui\n\n# more\n[tui]\nx = 1\n"


def test_a_server_of_that_name_that_is_not_lichhooks_is_left_alone():
    raw = b'[mcp_servers.lichhook]\ncommand = "mine"\n'
    notes: list = []
    assert tomlconfig.add(raw, "config.toml", TARGET, notes) == raw
    assert "does not run" in notes[0]
    assert tomlconfig.remove(raw, "config.toml", TARGET, False) == raw


@pytest.mark.parametrize("raw", [b"[mcp_servers\n", b"\xff", b"a = 1\na = 2\n"])
def test_what_is_not_toml_is_refused_naming_the_file(raw):
    from lichhook.install.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        tomlconfig.add(raw, "/h/.codex/config.toml", TARGET, [])
    assert "/h/.codex/config.toml" in str(info.value) and "untouched" in str(info.value)


@pytest.mark.parametrize("raw", [
    b"x = nan\n", b'model = "o3"\n\n[projects."/p"]\nscore = -nan\nlimit = +nan\n', b"x = [nan, 1.0]",
    # mixed line endings, as a file edited on two systems holds them
    b'model = "o3"\r\napproval_policy = "never"\n\n[tui]\r\nx = 1\n',
    b'model = "o3"\n[tui]\r\nx = 1',
], ids=["nan", "nan-in-a-table", "nan-in-an-array", "mixed-endings", "mixed-endings-no-final-newline"])
def test_nan_and_mixed_line_endings_are_installed_and_given_back_byte_for_byte(raw):
    """``nan != nan``: a comparison of the values before and after must not take a file
    holding one for changed; and a file with both line endings comes back exactly."""
    notes: list = []
    added = tomlconfig.add(raw, "config.toml", TARGET, notes)
    assert added != raw and b"[mcp_servers.lichhook]" in added, notes
    assert added.startswith(raw.rstrip(b"\r\n"))
    assert tomlconfig.add(added, "config.toml", TARGET, []) == added
    assert tomlconfig.remove(added, "config.toml", TARGET, False) == raw
    updated = tomlconfig.add(added, "config.toml", OTHER, [])
    assert tomlconfig.remove(updated, "config.toml", OTHER, False) == raw
