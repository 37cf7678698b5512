"""Quoting for the shells that run registered commands, and the pure helpers of install.

sh and bash are on this machine, so POSIX quoting is checked by running them. PowerShell
and cmd.exe are not; their lines are checked against reference readers written from the
rules each shell documents (the C runtime's argument split, cmd's quote handling,
PowerShell's verbatim strings), so a quoting change that breaks a rule fails here.
"""

from __future__ import annotations

import subprocess

import pytest

from lichhook.install import jsonmerge, quoting, textblock
from lichhook.install.harness import split_line
from lichhook.install.target import Target
from testkit.windows import crt_split

AWKWARD = [
    "plain",
    "/home/u/.local/share/lichhook/lichhook.pyz",
    "/home/Jo Smith/lichhook.pyz",
    "it's here",
    'say "hi"',
    "a&b|c;d",
    "$HOME and `x` and $(y)",
    "100%",
    "tab\there",
    "nön-äscii ☃ 日本",
    "*?[]~#!",
    "~user", "a=~", "PROGRA~1",
    "",
    "-dash",
    "back\\slash",
]


# -- POSIX sh: run the real shells ------------------------------------------------------


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_sh_join_survives_real_shells(shell):
    line = "printf '%s\\n' " + quoting.sh_join(AWKWARD)
    out = subprocess.run([shell, "-c", line], capture_output=True, check=True, timeout=10).stdout
    assert out.decode("utf-8").split("\n")[:-1] == AWKWARD


def test_sh_quote_leaves_plain_paths_bare():
    assert quoting.sh_quote("/usr/bin/python3") == "/usr/bin/python3"
    assert quoting.sh_quote("C:/Users/jo/AppData/Local/lichhook/lichhook.pyz") == "C:/Users/jo/AppData/Local/lichhook/lichhook.pyz"
    assert quoting.sh_quote("a b") == "'a b'"
    assert quoting.sh_quote("it's") == "'it'\\''s'"


def test_sh_quote_refuses_nul():
    with pytest.raises(quoting.QuotingError):
        quoting.sh_quote("a\0b")


# -- PowerShell: verbatim strings ------------------------------------------------------

PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_read_verbatim(text: str) -> tuple:
    """Reference reader for one PowerShell single-quoted string at the start of ``text``:
    any of the five single-quote characters opens and closes it, and two in a row stand
    for one. Returns (value, rest)."""
    assert text[0] in PS_QUOTES
    i, value = 1, []
    while i < len(text):
        c = text[i]
        if c in PS_QUOTES:
            if i + 1 < len(text) and text[i + 1] in PS_QUOTES:
                value.append(c)
                i += 2
                continue
            return "".join(value), text[i + 1:]
        value.append(c)
        i += 1
    raise AssertionError(f"unterminated string in {text!r}")


@pytest.mark.parametrize("word", AWKWARD + ["it\u2019s", "\u2018curly\u2019", "a''b"])
def test_ps_quote_round_trips(word):
    value, rest = ps_read_verbatim(quoting.ps_quote(word))
    assert value == word and rest == ""


def test_ps_command_uses_call_operator():
    line = quoting.ps_command(["C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz", "codex"])
    assert line == "& 'C:\\Program Files\\Python312\\python.exe' 'C:\\Users\\Jo Smith\\lichhook.pyz' 'codex'"
    assert split_line(line) == ("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz")


# -- cmd.exe and the C runtime --------------------------------------------------------


def cmd_exposed(line: str) -> list:
    """Characters cmd.exe acts on that sit outside double quotes (cmd toggles its quote
    state on every double quote), plus any % anywhere (expanded even inside quotes)."""
    exposed, quoted = [], False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == "%" or (not quoted and c in "&|<>^()"):
            exposed.append(c)
    return exposed


CMD_WORDS = [
    "C:\\Program Files\\Python312\\python.exe",
    "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook\\lichhook.pyz",
    "C:\\Users\\R&D (x86)\\lichhook.pyz",
    "C:\\Users\\Zoë\\日本\\lichhook.pyz",
    "C:\\dir with trailing\\",
    "a^b|c<d>e",
    "codex",
]


@pytest.mark.parametrize("word", CMD_WORDS)
def test_cmd_quote_reaches_the_program_intact(word):
    line = quoting.cmd_command(["prog.exe", word, "codex"])
    assert cmd_exposed(line) == []
    assert crt_split(line) == ["prog.exe", word, "codex"]


@pytest.mark.parametrize("word", ["C:\\100%\\x", "C:\\%PATH%\\x", 'say "hi"', "two\nlines"])
def test_cmd_quote_refuses_what_cmd_cannot_carry(word):
    with pytest.raises(quoting.QuotingError) as info:
        quoting.cmd_quote(word)
    assert repr(word) in str(info.value)


# -- the line that must work from both PowerShell and cmd ------------------------------


def ps_native_words(line: str) -> list:
    """What PowerShell passes to a native program for a line made of bare words and
    double-quoted words holding no $, backtick or typographic quote: each word's text
    without its quotes."""
    return quoting.split_dual(line)


@pytest.mark.parametrize("python,archive", [
    ("C:\\Python312\\python.exe", "C:\\Users\\jo\\AppData\\Local\\lichhook\\lichhook.pyz"),
    ("C:\\Python312\\python.exe", "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook\\lichhook.pyz"),
    ("C:\\Users\\Zoë\\Python\\python.exe", "C:\\Users\\Zoë\\R&D (x86)\\lichhook.pyz"),
])
def test_dual_command_means_the_same_to_powershell_and_cmd(python, archive):
    line = quoting.dual_command([python, archive, "codex"])
    assert line.split(" ")[0] == python  # a bare program: PowerShell runs it, cmd too
    assert not line.startswith(("&", '"', "'"))
    assert cmd_exposed(line) == []
    assert crt_split(line) == [python, archive, "codex"]
    assert ps_native_words(line) == [python, archive, "codex"]


def test_dual_command_uses_the_short_path_for_a_program_with_spaces():
    shorts = {"C:\\Program Files\\Python312\\python.exe": "C:\\PROGRA~1\\PYTHON~1\\python.exe"}
    line = quoting.dual_command(["C:\\Program Files\\Python312\\python.exe", "C:\\a b\\lichhook.pyz", "codex"],
                                shorts.get)
    assert line == 'C:\\PROGRA~1\\PYTHON~1\\python.exe "C:\\a b\\lichhook.pyz" codex'


def test_dual_command_refuses_when_no_bare_program_exists():
    with pytest.raises(quoting.QuotingError):
        quoting.dual_command(["C:\\Program Files\\python.exe", "x.pyz"], lambda p: None)
    with pytest.raises(quoting.QuotingError):
        quoting.dual_command(["C:\\py\\python.exe", "C:\\$weird\\x.pyz"])
    with pytest.raises(quoting.QuotingError):
        quoting.dual_command(["C:\\py\\python.exe", "C:\\100%\\x.pyz"])


@pytest.mark.parametrize("word,ok", [
    ("C:\\Python312\\python.exe", True), ("C:/x/y.exe", True), ("Zoë", True),
    ("a b", False), ("a&b", False), ("it's", False), ("a$b", False), ("a\u2013b", False),
    ("a\u201cb", False), ("-x", False), ("", False), ("a(b)", False), ("a%b", False),
])
def test_bare_word_ok(word, ok):
    assert quoting.bare_word_ok(word) is ok


# -- Target: the per-harness spellings -------------------------------------------------


def test_target_windows_forms():
    shorts = {"C:\\Program Files\\Python312\\python.exe": "C:\\PROGRA~1\\PYTHON~1\\python.exe"}
    t = Target("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\jo\\AppData\\Local\\lichhook\\lichhook.pyz",
               windows=True, short_path=shorts.get)
    # Git Bash and Crush's interpreter: forward slashes, and no quotes thanks to the short form
    assert t.sh_line("crush") == "C:/PROGRA~1/PYTHON~1/python.exe C:/Users/jo/AppData/Local/lichhook/lichhook.pyz crush"
    line, warning = t.windows_line("codex")
    assert warning is None
    assert line == "C:\\PROGRA~1\\PYTHON~1\\python.exe C:\\Users\\jo\\AppData\\Local\\lichhook\\lichhook.pyz codex"
    assert t.owns(line) and t.owns(t.sh_line("codex"))


def test_target_windows_falls_back_to_powershell_with_a_warning():
    t = Target("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz",
               windows=True, short_path=lambda p: None)
    line, warning = t.windows_line("codex")
    assert line == "& 'C:\\Program Files\\Python312\\python.exe' 'C:\\Users\\Jo Smith\\lichhook.pyz' 'codex'"
    assert "PowerShell" in warning
    assert t.sh_line("x") == "'C:/Program Files/Python312/python.exe' 'C:/Users/Jo Smith/lichhook.pyz' x"
    assert t.owns(line) and t.owns(t.sh_line("x"))


def test_target_posix_line_and_ownership():
    t = Target("/usr/bin/python3", "/home/Jo Smith/.local/share/lichhook/lichhook.pyz", windows=False)
    line = t.sh_line("claude-code", "stop")
    assert line == "/usr/bin/python3 '/home/Jo Smith/.local/share/lichhook/lichhook.pyz' claude-code stop"
    assert split_line(line) == ("/usr/bin/python3", "/home/Jo Smith/.local/share/lichhook/lichhook.pyz")
    assert t.owns(line)
    assert not t.owns("/usr/bin/python3 /elsewhere/lichhook.pyz claude")


# -- jsonmerge: the user's style -------------------------------------------------------


@pytest.mark.parametrize("text,indent,newline", [
    ('{\n    "a": 1\n}\n', 4, "\n"),
    ('{\n\t"a": 1\n}\n', "\t", "\n"),
    ('{\r\n  "a": 1\r\n}\r\n', 2, "\r\n"),
    ('{"a": 1}', None, "\n"),
])
def test_style_is_kept(text, indent, newline):
    style = jsonmerge.detect_style(text)
    assert style.indent == indent and style.newline == newline
    data, _ = jsonmerge.parse(text.encode(), "x.json")
    assert jsonmerge.render(data, style).decode() == text.replace('{"a": 1}', '{"a": 1}')


def test_edit_keeps_key_order_and_unchanged_bytes():
    raw = b'{\n    "z": 1,\n    "a": {"k": [1, 2]},\n    "m": "\\u00fc"\n}'
    assert jsonmerge.edit(raw, "x.json", lambda d: None) is raw
    new = jsonmerge.edit(raw, "x.json", lambda d: d.__setitem__("new", True))
    assert list(jsonmerge.parse(new, "x.json")[0]) == ["z", "a", "m", "new"]
    assert b'"\\u00fc"' in new and not new.endswith(b"\n")  # escaped style and no final newline kept


@pytest.mark.parametrize("raw", [b"{", b"[1, 2]", b"\xff\xfe{}", b'{"a": }'])
def test_parse_refuses_and_names_the_file(raw):
    with pytest.raises(jsonmerge.ConfigError) as info:
        jsonmerge.parse(raw, "/x/settings.json")
    assert "/x/settings.json" in str(info.value) and "untouched" in str(info.value)


def test_textblock_put_and_remove_round_trip():
    begin, end = "# >>> b >>>", "# <<< b <<<"
    block = f"{begin}\nline\n{end}\n"
    for text in ["", "a = 1\n", "a = 1\n\n", "a = 1"]:
        added = textblock.put(text, block, begin, end)
        assert textblock.find(added, begin, end)
        assert textblock.put(added, block, begin, end) == added
        assert textblock.remove(added, begin, end) == (text if text.endswith("\n") or not text else text + "\n")


def test_edit_keeps_a_byte_order_mark():
    raw = b'\xef\xbb\xbf{\r\n  "a": 1\r\n}\r\n'
    new = jsonmerge.edit(raw, "x.json", lambda d: d.__setitem__("b", 2))
    assert new == b'\xef\xbb\xbf{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n'


# -- the archive is planned before it is copied ------------------------------------------

PY_LONG = "C:\\Program Files\\Python312\\python.exe"
ARCHIVE_IN_SPACED_HOME = "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook\\lichhook.pyz"
# What GetShortPathNameW answers, which is only ever for paths that exist.
SHORTS_BEFORE_COPY = {
    PY_LONG: "C:\\PROGRA~1\\PYTHON~1\\python.exe",
    "C:\\Users\\Jo Smith": "C:\\Users\\JOSMIT~1",
    "C:\\Users\\Jo Smith\\AppData": "C:\\Users\\JOSMIT~1\\AppData",
    "C:\\Users\\Jo Smith\\AppData\\Local": "C:\\Users\\JOSMIT~1\\AppData\\Local",
}
SHORTS_AFTER_COPY = dict(SHORTS_BEFORE_COPY, **{
    "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook": "C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook",
    ARCHIVE_IN_SPACED_HOME: "C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook\\lichhook.pyz",
})


def test_first_install_writes_the_windows_lines_a_second_install_would():
    first = Target(PY_LONG, ARCHIVE_IN_SPACED_HOME, windows=True, short_path=SHORTS_BEFORE_COPY.get)
    second = Target(PY_LONG, ARCHIVE_IN_SPACED_HOME, windows=True, short_path=SHORTS_AFTER_COPY.get)
    assert first.windows_line("codex") == second.windows_line("codex")
    assert first.sh_line("crush") == second.sh_line("crush")
    assert first.sh_line("crush") == ("C:/PROGRA~1/PYTHON~1/python.exe "
                                      "C:/Users/JOSMIT~1/AppData/Local/lichhook/lichhook.pyz crush")
    assert second.owns(first.windows_line("codex")[0]) and first.owns(second.sh_line("crush"))


def rust_windows_arg(arg: str) -> str:
    """How Rust's std::process::Command writes one argument into a Windows command line:
    quoted when it holds a space or a tab, a double quote escaped as \\" (with the
    backslashes before it doubled)."""
    quote = not arg or " " in arg or "\t" in arg
    out, backslashes = ['"'] if quote else [], 0
    for c in arg:
        if c == "\\":
            backslashes += 1
        else:
            if c == '"':
                out.append("\\" * (backslashes + 1))
            backslashes = 0
        out.append(c)
    if quote:
        out.append("\\" * backslashes + '"')
    return "".join(out)


def cmd_slash_c(line: str) -> str:
    """What ``cmd /C <line>`` runs when the line starts with a quote and is not one quoted
    program name: the line without its first and its last double quote."""
    if line.startswith('"'):
        last = line.rindex('"')
        line = line[1:last] + line[last + 1:]
    return line


def test_codex_line_survives_rust_handing_it_to_cmd():
    """Codex (Rust) runs commandWindows as one argument of ``%COMSPEC% /C``."""
    target = Target(PY_LONG, ARCHIVE_IN_SPACED_HOME, windows=True, short_path=SHORTS_BEFORE_COPY.get)
    line, warning = target.windows_line("codex")
    assert warning is None
    run = cmd_slash_c(rust_windows_arg(line))
    assert cmd_exposed(run) == []
    assert crt_split(run) == [SHORTS_BEFORE_COPY[PY_LONG],
                              "C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook\\lichhook.pyz", "codex"]
