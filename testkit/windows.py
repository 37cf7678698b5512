"""How Windows programs read a command line, for checking the lines lichhook writes
without Windows."""

from __future__ import annotations


def crt_split(line: str) -> list:
    """Reference for how a Windows program built with the Microsoft C runtime splits its
    command line: whitespace separates unless inside double quotes; 2n backslashes before
    a quote give n and the quote toggles; 2n+1 give n and a literal quote; a doubled
    quote inside quotes gives a literal quote."""
    words, i, n = [], 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            return words
        word, quoted = [], False
        while i < n and (quoted or line[i] not in " \t"):
            c = line[i]
            if c == "\\":
                j = i
                while j < n and line[j] == "\\":
                    j += 1
                count = j - i
                if j < n and line[j] == '"':
                    word.append("\\" * (count // 2))
                    if count % 2:
                        word.append('"')
                        i = j + 1
                    else:
                        i = j
                else:
                    word.append("\\" * count)
                    i = j
            elif c == '"':
                if quoted and i + 1 < n and line[i + 1] == '"':
                    word.append('"')
                    i += 2
                else:
                    quoted = not quoted
                    i += 1
            else:
                word.append(c)
                i += 1
        words.append("".join(word))


PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def ps_read_verbatim(text: str) -> tuple:
    """Reference reader for one PowerShell single-quoted string at the start of ``text``,
    after PowerShell's tokenizer (``ScanStringLiteral`` in its ``tokenizer.cs``, with
    ``IsSingleQuote`` in ``CharTraits.cs``): any of the five single-quote characters opens
    and closes it, and a quote character followed by another stands for the second.
    Returns (value, rest)."""
    assert text[0] in PS_QUOTES
    i, value = 1, []
    while i < len(text):
        c = text[i]
        if c in PS_QUOTES:
            if i + 1 < len(text) and text[i + 1] in PS_QUOTES:
                value.append(text[i + 1])
                i += 2
                continue
            return "".join(value), text[i + 1:]
        value.append(c)
        i += 1
    raise AssertionError(f"unterminated string in {text!r}")


def windows_powershell_51_line(argv: list) -> str:
    """The command line Windows PowerShell 5.1 builds for a native program: an argument
    holding a space or a tab is wrapped in double quotes, and double quotes inside it
    are passed as they are, not escaped."""
    return " ".join(f'"{a}"' if (not a or " " in a or "\t" in a) else a for a in argv)
