"""Quoting for the shells that run registered commands, and the pure helpers of install.

sh and bash are on this machine, so POSIX quoting is checked by running them. PowerShell
and cmd.exe are not; their lines are checked against reference readers written from the
rules each shell documents (the C runtime's argument split, checked against CPython's
``subprocess.list2cmdline``; cmd's ``/C`` quote handling from ``cmd /?``; PowerShell's
verbatim strings from about_Quoting_Rules and its tokenizer; Rust's argument escaping,
which Codex's hook runner goes through), so a quoting change that breaks a rule fails
here. Property runs (hypothesis) check that each form reads back as the words it was
made from.
"""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lichhook.install import quoting
from lichhook.install.config import textblock
from lichhook.install.harness import split_line
from lichhook.install.copies.target import Target
from testkit.windows import PS_QUOTES, crt_split, ps_read_verbatim, windows_powershell_51_line

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
    "~user", "a=~", "PROGRA~1", "C:\\MY_PRO~1\\O-BRI~1",
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

@pytest.mark.parametrize("word", AWKWARD + ["it\u2019s", "\u2018curly\u2019", "a''b"])
def test_ps_quote_round_trips(word):
    value, rest = ps_read_verbatim(quoting.ps_quote(word))
    assert value == word and rest == ""


def test_ps_command_uses_call_operator():
    line = quoting.ps_command(["C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz", "codex"])
    assert line == "& 'C:\\Program Files\\Python312\\python.exe' 'C:\\Users\\Jo Smith\\lichhook.pyz' 'codex'"
    assert split_line(line) == ("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz")


def ps_read_command(line: str) -> list:
    """Every word of a ``& '...' '...'`` line, by the reference reader."""
    assert line.startswith("& ")
    rest, words = line[2:], []
    while rest:
        value, rest = ps_read_verbatim(rest)
        words.append(value)
        assert rest == "" or rest.startswith(" ")
        rest = rest[1:]
    return words


# Words drawn mostly from the characters the shells treat specially, so that the property
# runs below meet them often.
AWKWARD_CHARS = (st.sampled_from(list(PS_QUOTES + '"\u201c\u201d\u201e $`%&|;^()<>!*?[]{}~#=,:\\/\t-')
                                 + ["a", "Z", "0", "ë", "日", "\u2013"])
                 | st.characters(blacklist_characters="\0"))
ARGV = st.lists(st.text(AWKWARD_CHARS, max_size=12), min_size=1, max_size=5)


def python_and_program(argv: list) -> tuple:
    """What ``split_line`` reads from a line of ``argv``: the Python, then the first word
    after it that is not an option."""
    return argv[0], next((w for w in argv[1:] if not w.startswith("-")), None)


@settings(max_examples=400, deadline=None)
@given(ARGV)
def test_reading_a_powershell_line_back_is_the_exact_inverse(argv):
    line = quoting.ps_command(argv)
    assert quoting.split_ps(line) == argv
    assert ps_read_command(line) == argv  # which is how PowerShell itself reads the line
    if len(argv) >= 2:
        assert split_line(line) == python_and_program(argv)


@pytest.mark.parametrize("line,words", [
    ("& 'C:\\Users\\O\u2019\u2019Brien\\python.exe' 'C:\\x.pyz' 'codex'",
     ["C:\\Users\\O\u2019Brien\\python.exe", "C:\\x.pyz", "codex"]),
    ("& 'a\u2019'b' 'c'", ["a'b", "c"]),  # a mixed pair stands for its second quote
    ("& \u2018quoted\u2019 \u201bit\u201a", ["quoted", "it"]),  # typographic quotes open and close too
    ("& " + "'" * 4, ["'"]),
    ("& '' 'x'", ["", "x"]),
])
def test_split_ps_reads_as_powershell_does(line, words):
    assert quoting.split_ps(line) == words == ps_read_command(line)


@pytest.mark.parametrize("line", ["& 'open", "'no call operator'", "& bare", "& 'a'b", "&"])
def test_split_ps_refuses_what_it_did_not_write(line):
    assert quoting.split_ps(line) is None


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
    # 8.3 names: NTFS keeps _ and - of the long name before the ~
    ("C:\\Users\\ZOEOB_~1\\python.exe", True), ("C:\\Users\\O-BRI~1", True), ("C:\\a\\~1", False),
    ("x=~", False),
])
def test_bare_word_ok(word, ok):
    assert quoting.bare_word_ok(word) is ok


# -- Target: the per-harness spellings -------------------------------------------------


def test_target_windows_forms():
    shorts = {"C:\\Program Files\\Python312\\python.exe": "C:\\PROGRA~1\\PYTHON~1\\python.exe"}
    t = Target("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\jo\\AppData\\Local\\lichhook\\lichhook.pyz",
               windows=True, short_path=shorts.get)
    # Git Bash and Crush's interpreter: forward slashes, and no quotes thanks to the short form
    assert t.sh_line("crush") == "C:/PROGRA~1/PYTHON~1/python.exe -I -S C:/Users/jo/AppData/Local/lichhook/lichhook.pyz crush"
    line, warning = t.windows_line("codex")
    assert warning is None
    assert line == "C:\\PROGRA~1\\PYTHON~1\\python.exe -I -S C:\\Users\\jo\\AppData\\Local\\lichhook\\lichhook.pyz codex"
    assert t.owns(line) and t.owns(t.sh_line("codex"))


def test_target_windows_falls_back_to_powershell_with_a_warning():
    t = Target("C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Jo Smith\\lichhook.pyz",
               windows=True, short_path=lambda p: None)
    line, warning = t.windows_line("codex")
    assert line == "& 'C:\\Program Files\\Python312\\python.exe' '-I' '-S' 'C:\\Users\\Jo Smith\\lichhook.pyz' 'codex'"
    assert "PowerShell" in warning
    assert "fsutil file setshortname" in warning  # how to get the line both shells run
    assert t.sh_line("x") == "'C:/Program Files/Python312/python.exe' -I -S 'C:/Users/Jo Smith/lichhook.pyz' x"
    assert t.owns(line) and t.owns(t.sh_line("x"))


def test_target_posix_line_and_ownership():
    t = Target("/usr/bin/python3", "/home/Jo Smith/.local/share/lichhook/lichhook.pyz", windows=False)
    line = t.sh_line("claude-code", "stop")
    assert line == "/usr/bin/python3 -I -S '/home/Jo Smith/.local/share/lichhook/lichhook.pyz' claude-code stop"
    assert split_line(line) == ("/usr/bin/python3", "/home/Jo Smith/.local/share/lichhook/lichhook.pyz")
    assert t.owns(line)
    assert not t.owns("/usr/bin/python3 /elsewhere/lichhook.pyz claude")


# -- textblock: crushrc's delimited block ---------------------------------------------


def test_textblock_put_and_remove_round_trip():
    begin, end = "# >>> b >>>", "# <<< b <<<"
    block = f"{begin}\nline\n{end}\n"

    def own(line: str) -> bool:
        return line == "line"

    for text in ["", "\n", "a = 1\n", "a = 1\n\n", "a = 1", "a = 1\r\nb", f"{begin}\nmine\n", f"{begin}\nmine"]:
        added = textblock.put(text, block, begin, end, own)
        assert textblock.find(added, begin, end, own)
        assert textblock.put(added, block, begin, end, own) == added
        assert textblock.remove(added, begin, end, own) == text  # byte for byte, final newline or not


def test_textblock_round_trip_in_a_file_of_blank_lines():
    # remove takes one blank line away with the block: put must have added it, also
    # where the file holds nothing but blank lines
    begin, end = "# >>> b >>>", "# <<< b <<<"
    for text in ["\n\n", " \n\n", "\r\n\r\n", "\n\n\n"]:
        block = textblock.newline_of(text).join([begin, "line", end, ""])
        added = textblock.put(text, block, begin, end, lambda line: line == "line")
        assert textblock.remove(added, begin, end, lambda line: line == "line") == text


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
    assert first.sh_line("crush") == ("C:/PROGRA~1/PYTHON~1/python.exe -I -S "
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
    assert crt_split(run) == [SHORTS_BEFORE_COPY[PY_LONG], "-I", "-S",
                              "C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook\\lichhook.pyz", "codex"]


def powershell_via_rust(line: str) -> list:
    """What the program gets when Codex (Rust) runs ``powershell.exe -NoProfile -Command
    <line>``: powershell.exe splits its own command line by the C runtime's rules, which
    undoes Rust's escaping, so PowerShell parses ``line`` as written (bare words and
    double-quoted words without ``$`` or backticks read as their text); then Windows
    PowerShell 5.1 writes each argument back for the program, quoted when it holds a
    space, and the program splits that by the same rules."""
    own = crt_split("powershell.exe -NoProfile -Command " + rust_windows_arg(line))
    assert own[3] == line
    words = ps_native_words(own[3])
    return [words[0]] + crt_split(windows_powershell_51_line(words[1:]))


ARCHIVE_WITHOUT_SHORT_NAME = "D:\\Profiles\\Zoë O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz"


def test_a_double_quoted_archive_works_in_powershell_breaks_under_cmd_and_says_so():
    """An archive path with a space or quote and no 8.3 name (a volume with short names
    off) can only be double-quoted. PowerShell hands Python the path; cmd.exe, given the
    line by Rust with each quote as \\", hands Python pieces with quotes in them."""
    short = SHORTS_BEFORE_COPY[PY_LONG]
    target = Target(PY_LONG, ARCHIVE_WITHOUT_SHORT_NAME, windows=True, short_path={PY_LONG: short}.get)
    line, warning = target.windows_line("codex")
    assert line == f'{short} -I -S "{ARCHIVE_WITHOUT_SHORT_NAME}" codex'
    assert powershell_via_rust(line) == [short, "-I", "-S", ARCHIVE_WITHOUT_SHORT_NAME, "codex"]
    under_cmd = crt_split(cmd_slash_c(rust_windows_arg(line)))
    assert under_cmd == [short, "-I", "-S", '"D:\\Profiles\\Zoë', "O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz\"", "codex"]
    assert warning and ARCHIVE_WITHOUT_SHORT_NAME in warning and "cmd.exe" in warning
    assert "fsutil file setshortname" in warning
    assert split_line(line) == (short, ARCHIVE_WITHOUT_SHORT_NAME)


def test_a_line_without_quotes_gets_no_cmd_warning():
    target = Target(PY_LONG, ARCHIVE_IN_SPACED_HOME, windows=True, short_path=SHORTS_AFTER_COPY.get)
    line, warning = target.windows_line("codex")
    assert '"' not in line and warning is None
    assert powershell_via_rust(line) == crt_split(cmd_slash_c(rust_windows_arg(line)))


WINDOWS_WORD = st.lists(st.sampled_from(list("aZ0ë日 '&()^;,=!~_-.\\:") + ["Program Files", "O'Brien", "R&D"]),
                        min_size=1, max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(WINDOWS_WORD, min_size=1, max_size=3))
def test_the_dual_line_reads_back_as_written(rest):
    argv = ["C:\\Python312\\python.exe", *rest]
    try:
        line = quoting.dual_command(argv)
    except quoting.QuotingError:
        return
    assert quoting.split_dual(line) == argv == crt_split(line)
    assert cmd_exposed(line) == []
    if len(argv) >= 2:
        assert split_line(line) == python_and_program(argv)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(AWKWARD_CHARS, max_size=12), min_size=2, max_size=4))
def test_the_posix_line_reads_back_as_written(argv):
    if any("\0" in w for w in argv):
        return
    line = quoting.sh_join(argv)
    assert shlex.split(line) == argv
    assert split_line(line) == python_and_program(argv)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(AWKWARD_CHARS, max_size=12), max_size=4))
def test_the_c_runtime_reference_agrees_with_cpython(argv):
    """The reference split above against CPython's subprocess.list2cmdline, which writes
    a command line for the same Microsoft C runtime rules ("Parsing C Command-Line
    Arguments"): what one writes, the other must read back."""
    if any("\0" in w for w in argv):
        return
    assert crt_split(subprocess.list2cmdline(argv)) == argv
