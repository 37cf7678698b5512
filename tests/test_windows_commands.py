"""The wait commands the Claude Code hooks print for the model, in their Windows spelling.

On Windows the model runs them in Git Bash (Claude Code's Bash tool) or, without Git
Bash, in PowerShell, where the hooks tell it to put ``&`` first. Bash is on this
machine, so the Bash reading is checked by running it; PowerShell is not, so its reading
comes from a reference reader written from about_Quoting_Rules and PowerShell's
tokenizer: in '...' every character is literal and a quote character followed by
another stands for the second (any of ' U+2018 U+2019 U+201A U+201B); in "..." ``$``
and the backtick are expanded and any of " U+201C U+201D U+201E ends the string.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from lichhook.waits.hooks import text as commands
from lichhook.install.quoting import ps_quote
from testkit.windows import PS_QUOTES, ps_read_verbatim

PS_DOUBLE_QUOTES = '"\u201c\u201d\u201e'
bash = shutil.which("bash")
needs_bash = pytest.mark.skipif(not bash, reason="no bash here")

PATHS = [
    "C:\\Users\\zoe\\AppData\\Local\\Programs\\Python\\Python312\\python.exe",
    "C:\\Program Files\\Python312\\python.exe",
    "C:\\Users\\adm$x\\AppData\\Local\\lichhook\\lichhook.pyz",  # PowerShell expanded $x in the old form
    "C:\\Users\\a`b\\lichhook.pyz",
    "C:\\Users\\Zoë O'Brien\\AppData\\Local\\lichhook\\lichhook.pyz",
    "C:\\Users\\O\u2019Brien\\lichhook.pyz",
    "C:\\Users\\O'Brien $HOME\\lichhook.pyz",  # a single quote and a $: no common spelling
    "C:\\Users\\\u2018it\u2019 `x`\\lichhook.pyz",
    "C:\\R&D (x86)\\日本\\lichhook.pyz",
    "C:\\100%\\a;b|c\\lichhook.pyz",
]


def ps_read_word(word: str):
    """How PowerShell reads one argument written as ``word``; None when it would expand
    something or end early, so that the text it passes on is not ``word``'s content."""
    if word[0] in PS_QUOTES:
        value, rest = ps_read_verbatim(word)
        return value if rest == "" else None
    if word[0] in PS_DOUBLE_QUOTES:
        inside = word[1:-1]
        if word[-1] not in PS_DOUBLE_QUOTES or any(c in inside for c in "$`" + PS_DOUBLE_QUOTES):
            return None
        return inside
    return word


def bash_words(line: str) -> list:
    out = subprocess.run([bash, "-c", "printf '%s\\n' " + line], capture_output=True, check=True, timeout=30)
    return out.stdout.decode("utf-8").split("\n")[:-1]


@needs_bash
@pytest.mark.parametrize("path", PATHS)
def test_each_path_reads_right_in_bash_and_powershell_or_gets_its_own_form(path):
    forward = path.replace("\\", "/")
    word = commands.quote(path, windows=True)
    assert bash_words(word) == [forward]
    same = commands.same_in_powershell(path)
    assert (ps_read_word(word) == forward) is same
    advice = commands.powershell_advice([path], "here")
    assert advice.startswith("The commands here are for Bash; in PowerShell put & and a space before them")
    if not same:
        own = ps_quote(forward)
        assert f"{word} as {own}" in advice
        assert ps_read_verbatim(own) == (forward, "")


def test_a_dollar_in_a_path_now_reaches_powershell_as_written():
    """The defect: POSIX double quotes escaped $ with a backslash, which PowerShell keeps,
    and then expanded the variable anyway."""
    path = "C:\\Users\\adm$x\\python.exe"
    old = '"C:/Users/adm\\$x/python.exe"'
    assert ps_read_word(old) is None
    assert ps_read_word(commands.quote(path, windows=True)) == "C:/Users/adm$x/python.exe"


class Folder:
    explicit, path = True, "D:\\waits $shared"


@needs_bash
def test_a_whole_printed_command_runs_the_same_words_in_both_shells(monkeypatch):
    python, archive = "C:\\Program Files\\Python312\\python.exe", "C:\\Users\\Zoë O'Brien\\lichhook.pyz"
    monkeypatch.setattr(sys, "platform", "win32")
    prefix = f"{commands.quote(python)} {commands.quote(archive)}"
    line = commands.wait_command(prefix, "done", "fix-login", "s-1", Folder(), "--id w1")
    monkeypatch.undo()
    expected = [python.replace("\\", "/"), archive.replace("\\", "/"), "wait", "done", "--by", "fix-login",
                "--session", "s-1", "--id", "w1", "--waits-dir", "D:/waits $shared"]
    assert bash_words(line) == expected
    assert [ps_read_word(w) for w in powershell_words("& " + line)] == expected
    assert commands.powershell_advice([python, archive, Folder.path], "here") == \
        "The commands here are for Bash; in PowerShell put & and a space before them."


def test_the_note_gives_powershell_its_own_form_where_none_is_common(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(sys, "executable", "C:\\Users\\O'Brien $HOME\\python.exe")
    note = commands.powershell_note(Folder(), "below")
    monkeypatch.undo()
    assert note == ("The commands below are for Bash; in PowerShell put & and a space before them, and write "
                    "\"C:/Users/O'Brien \\$HOME/python.exe\" as 'C:/Users/O''Brien $HOME/python.exe' "
                    "(PowerShell expands $ and ` inside double quotes).")


def powershell_words(line: str) -> list:
    """Split an ``& ...`` line made of quoted words and plain words into its words as
    written (quotes kept), after the call operator."""
    assert line.startswith("& ")
    words, i, text = [], 0, line[2:]
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        if text[i] in PS_QUOTES:
            _, rest = ps_read_verbatim(text[i:])
            end = len(text) - len(rest)
        elif text[i] in PS_DOUBLE_QUOTES:
            end = next(j for j in range(i + 1, len(text)) if text[j] in PS_DOUBLE_QUOTES) + 1
        else:
            end = text.find(" ", i)
            end = len(text) if end < 0 else end
        words.append(text[i:end])
        i = end
    return words


def test_no_powershell_note_off_windows():
    assert commands.powershell_note(None, "here") is None
