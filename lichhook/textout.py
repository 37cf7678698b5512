"""Text for people, written so that no code page can stop it.

On Windows a piped stdout encodes with the ANSI code page (cp1252 and the like; only a
console gets full Unicode), so one provider name, path or session id outside that page
would raise UnicodeEncodeError half way through a listing. The hooks print ASCII-only
JSON; the commands that print text for people escape what their stream cannot encode.
"""

from __future__ import annotations

import os
import sys


def tolerant_stdio() -> None:
    """Make stdout and stderr write ``\\u65e5`` for a character their encoding lacks,
    instead of failing, and let stdout's reader go away early (``_ReaderMayLeave``)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass  # not a text stream of its own (replaced, or closed)
    if sys.stdout is not None and not isinstance(sys.stdout, _ReaderMayLeave):
        sys.stdout = _ReaderMayLeave(sys.stdout)  # type: ignore[assignment]


class _ReaderMayLeave:
    """stdout for a command whose reader may stop early (``install | head``): once the pipe
    is gone, the rest of the output is dropped and the command carries on to the end (an
    install half done because its listing could not be shown would be worse), with no
    ``BrokenPipeError`` at exit."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self._gone = True
        # What stays in the stream's buffer would fail again when the interpreter
        # flushes it at exit: point the descriptor at devnull.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._stream, name)
