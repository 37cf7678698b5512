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
