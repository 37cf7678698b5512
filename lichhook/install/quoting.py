"""Quoting words for the shells that run registered commands.

Pure functions, no I/O. Each harness runs its command line through a different shell:
POSIX ``sh -c`` and bash (Claude Code, Codex and Antigravity on Linux and macOS, Git Bash
on Windows, Crush's embedded interpreter everywhere), PowerShell and cmd.exe (Codex's
``commandWindows``). Windows programs receive one command line and split it themselves
with the Microsoft C runtime rules, so a word must survive the shell *and* that split.
"""

from __future__ import annotations

import shlex
import string
from typing import Callable, List, Optional, Sequence


class QuotingError(ValueError):
    """A word that the target shell cannot carry safely; the message names it."""


_SH_SAFE = frozenset(string.ascii_letters + string.digits + "@%+=:,./-_")


def sh_quote(word: str) -> str:
    """``word`` as one POSIX shell word: bare when every character is inert, otherwise
    single-quoted (inside single quotes nothing is special but the quote itself)."""
    if "\0" in word:
        raise QuotingError(f"{word!r} holds a NUL byte, which no command line can carry")
    # Non-ASCII letters are never shell syntax (UTF-8 never encodes one with an ASCII
    # byte), so a path like /home/Zoë stays bare and readable.
    if word and all(c in _SH_SAFE or (ord(c) > 127 and c.isalnum()) or _inner_tilde(word, i)
                    for i, c in enumerate(word)):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _inner_tilde(word: str, i: int) -> bool:
    """A ``~`` right after a letter, a digit, ``_`` or ``-`` (as in the 8.3 names
    ``PROGRA~1``, ``MY_PRO~1``, ``O-BRI~1``) is plain text to sh, bash, PowerShell and
    cmd; at a word's start, or after ``=`` or ``:``, shells expand it to a home folder."""
    return word[i] == "~" and i > 0 and (word[i - 1].isalnum() or word[i - 1] in "_-")


def sh_join(argv: Sequence[str]) -> str:
    return " ".join(sh_quote(w) for w in argv)


# PowerShell treats the typographic single quotes as quote characters too, so each must
# be doubled like the ASCII one or it ends the string early.
_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_quote(word: str) -> str:
    """``word`` as a PowerShell verbatim (single-quoted) string: no ``$``, backtick or
    double-quote expansion happens inside it."""
    if "\0" in word:
        raise QuotingError(f"{word!r} holds a NUL byte, which no command line can carry")
    return "'" + "".join(c + c if c in _PS_SINGLE_QUOTES else c for c in word) + "'"


def ps_command(argv: Sequence[str]) -> str:
    """A PowerShell command line running ``argv``: the call operator ``&`` makes the
    quoted program path a command instead of a string to print."""
    return "& " + " ".join(ps_quote(w) for w in argv)


def split_ps(line: str) -> Optional[List[str]]:
    """The words of a line made by ``ps_command``, read back exactly: the inverse of
    ``ps_command`` for every word it accepts. None when the line is not ``&`` followed by
    verbatim strings.

    The rule is PowerShell's own (its tokenizer's ``ScanStringLiteral``): any of the five
    single-quote characters opens and closes a verbatim string, and inside one a quote
    character followed by another stands for the second, whichever two they are.
    """
    text = line.strip()
    if not text.startswith("&"):
        return None
    words: List[str] = []
    i, n = 1, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i == n:
            return words or None
        if text[i] not in _PS_SINGLE_QUOTES:
            return None
        i += 1
        value = []
        while True:
            if i == n:
                return None  # unterminated
            c = text[i]
            if c in _PS_SINGLE_QUOTES:
                if i + 1 < n and text[i + 1] in _PS_SINGLE_QUOTES:
                    value.append(text[i + 1])
                    i += 2
                    continue
                i += 1
                break
            value.append(c)
            i += 1
        if i < n and text[i] not in " \t":
            return None
        words.append("".join(value))


# Characters cmd.exe acts on even inside double quotes (``%VAR%`` expansion), characters
# a Windows command line cannot carry inside one double-quoted word, and line breaks.
_CMD_FORBIDDEN = '"%\r\n\0'


def cmd_quote(word: str) -> str:
    """``word`` double-quoted for cmd.exe and the C runtime's argument split.

    Inside double quotes cmd leaves ``& | < > ^ ( )`` and spaces alone, but it still
    expands ``%NAME%``, and there is no escape for ``%`` inside quotes; such a word is
    refused. A backslash run before the closing quote is doubled so the C runtime does
    not read ``\\"`` as a literal quote.
    """
    bad = sorted({c for c in word if c in _CMD_FORBIDDEN})
    if bad:
        raise QuotingError(f"{word!r} contains {', '.join(repr(c) for c in bad)}, which cmd.exe cannot pass through quotes")
    trailing = len(word) - len(word.rstrip("\\"))
    return '"' + word + "\\" * trailing + '"'


def cmd_command(argv: Sequence[str]) -> str:
    return " ".join(cmd_quote(w) for w in argv)


_BARE_EXTRA = frozenset("\\/:._-")


def bare_word_ok(word: str) -> bool:
    """True when ``word`` means the same unquoted in POSIX sh, PowerShell and cmd.exe:
    letters and digits (any script), ``\\ / : . _ -``, and ``~`` after a letter, a digit,
    ``_`` or ``-`` (8.3 short names), not starting with ``-``.

    Every other ASCII punctuation mark is special to at least one of the three, and
    PowerShell reads some non-ASCII punctuation (typographic quotes and dashes) as
    syntax, so only letters and digits pass beyond ASCII.
    """
    if not word or word[0] == "-":
        return False
    return all(c in _BARE_EXTRA or (c.isalnum() and c.isprintable()) or _inner_tilde(word, i)
               for i, c in enumerate(word))


# Inside "..." PowerShell expands $ and the backtick escape, and takes the typographic
# double quotes as quote characters.
_PS_DOUBLE_SPECIAL = "$`\u201c\u201d\u201e"


def dual_quote(word: str) -> str:
    """``word`` in a form PowerShell and cmd.exe both pass to a program unchanged: bare
    when it can be, else in double quotes (refusing what either shell would expand)."""
    if bare_word_ok(word) and word[-1] != "\\":
        return word
    bad = sorted({c for c in word if c in _PS_DOUBLE_SPECIAL})
    if bad:
        raise QuotingError(f"{word!r} contains {', '.join(repr(c) for c in bad)}, which PowerShell expands inside double quotes")
    if word.endswith("\\"):
        raise QuotingError(f"{word!r} ends with a backslash, which PowerShell and cmd.exe pass on differently")
    return cmd_quote(word)


def dual_words(argv: Sequence[str], short_path: Optional[Callable[[str], Optional[str]]] = None) -> List[str]:
    """Each word of ``argv`` as ``dual_command`` writes it: bare, in its short form, or
    double-quoted (the one form a caller passing the line through Rust to cmd.exe breaks).

    The program comes first and must be a bare word: PowerShell prints a leading quoted
    string instead of running it, and cmd.exe reads PowerShell's ``&`` as a command
    separator. A word that cannot be bare is tried in its 8.3 short form (``short_path``,
    e.g. ``C:\\PROGRA~1\\...``); an argument without one is double-quoted. A one-letter
    option (``-I``) is bare: both shells hand it to a program as it is. Raises
    QuotingError when no such line exists.
    """
    def bare(word: str) -> Optional[str]:
        if bare_word_ok(word) and word[-1] != "\\":
            return word
        short = short_path(word) if short_path else None
        return short if short and bare_word_ok(short) and short[-1] != "\\" else None

    program = bare(argv[0])
    if program is None:
        raise QuotingError(
            f"the program path {argv[0]!r} has characters that need quoting, and no short (8.3) "
            "form without them exists; PowerShell and cmd.exe need different quoting for it"
        )
    return [program] + [a if _short_option(a) else bare(a) or dual_quote(a) for a in argv[1:]]


def _short_option(word: str) -> bool:
    return len(word) == 2 and word[0] == "-" and word[1].isascii() and word[1].isalpha()


def dual_command(argv: Sequence[str], short_path: Optional[Callable[[str], Optional[str]]] = None) -> str:
    """One command line that runs ``argv`` the same way from PowerShell and from cmd.exe,
    as long as the line reaches cmd.exe as written (see ``dual_words``).

    Quotes are best avoided even here: a caller that passes the line on as one argument
    (Codex, written in Rust, to ``cmd /C``) escapes each as ``\\"``, which cmd.exe does
    not undo, so a double-quoted word reaches the program split at its spaces and with
    the quotes inside it.
    """
    return " ".join(dual_words(argv, short_path))


def split_dual(line: str) -> list:
    """Split a line made by ``dual_command`` (or any simple Windows command line) back into
    words: double quotes group, nothing else is special. Used to read registrations."""
    words: list = []
    current: list = []
    quoted, started = False, False
    for c in line:
        if c == '"':
            quoted = not quoted
            started = True
        elif c in " \t" and not quoted:
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(c)
            started = True
    if started:
        words.append("".join(current))
    return words


def split_words(text: str) -> Optional[list]:
    """Every word of a command line in any of the forms lichhook writes: the PowerShell
    form (``& '...' '...'``), the PowerShell-and-cmd form (a bare Windows program path
    first, then bare words and double quotes), or a POSIX line; None when it does not
    split."""
    text = text.strip()
    first = text.split(None, 1)[0] if text else ""
    if text.startswith("& "):
        words = split_ps(text) or []
    elif "\\" in first and not any(q in first for q in "'\""):
        # POSIX lines lichhook writes never start with a bare backslash: on Windows they
        # use forward slashes, and elsewhere a backslash is quoted.
        words = split_dual(text)
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            return None
    return words
