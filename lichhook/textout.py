"""Text for people, written so that no code page can stop it.

On Windows a piped stdout encodes with the ANSI code page (cp1252 and the like; only a
console gets full Unicode), so one provider name, path or session id outside that page
would raise UnicodeEncodeError half way through a listing. The hooks print ASCII-only
JSON; the commands that print text for people escape what their stream cannot encode.
"""

from __future__ import annotations

import sys


def tolerant_stdio() -> None:
    """Make stdout and stderr write ``\\u65e5`` for a character their encoding lacks,
    instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass  # not a text stream of its own (replaced, or closed)
