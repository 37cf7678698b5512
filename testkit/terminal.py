"""A harness's interactive TUI in a pseudo-terminal, read through a terminal emulator.

Some things a user does only in a TUI: trusting Codex's hooks ("Trust all and continue"),
omp's ``/fork``. A test starts the TUI here, waits for words on its screen and types keys,
as the user would. The screen is kept by pyte, a VT100 emulator, because TUIs redraw only
the cells that changed: the raw byte stream never holds the sentence on screen in one piece.
POSIX only (``pty``), like the rest of the end-to-end run.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import time
from typing import Mapping, Optional, Sequence

ROWS, COLUMNS = 50, 160
# A terminal's answer to "where is the cursor?" (ESC [ 6 n), which some TUIs wait for.
CURSOR_QUERY = b"\x1b[6n"


class Terminal:
    """``argv`` running in a pseudo-terminal of ROWS x COLUMNS; ``close`` ends it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: os.PathLike) -> None:
        import fcntl
        import pty
        import struct
        import termios

        import pyte

        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self._lock = threading.Lock()
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.master = master
        self.proc = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                                     env=dict(env, TERM="xterm-256color"), start_new_session=True)
        os.close(slave)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.2)
                if not ready:
                    if self.proc.poll() is not None:
                        return
                    continue
                data = os.read(self.master, 65536)
            except OSError:  # the other end closed
                return
            if not data:
                return
            if CURSOR_QUERY in data:
                self.send("\x1b[1;1R")
            with self._lock:
                self.stream.feed(data)

    def text(self) -> str:
        """The screen as lines of text."""
        with self._lock:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, pattern: str, timeout: float = 60) -> str:
        """The screen once ``pattern`` (a regular expression) shows on it; fails the test
        with the screen when it does not show within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if re.search(pattern, screen):
                return screen
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{pattern!r} never showed on the screen "
                                     f"(exit {self.proc.poll()}); it reads:\n{screen}")
            time.sleep(0.2)

    def send(self, keys: str) -> None:
        """Type ``keys`` ("\\r" is Enter, "\\x1b" Escape)."""
        os.write(self.master, keys.encode("utf-8"))

    def type_line(self, text: str, settle: float = 0.5) -> None:
        """Type ``text``, then Enter (after a pause, as a TUI may read a paste differently)."""
        self.send(text)
        time.sleep(settle)
        self.send("\r")

    def close(self, timeout: float = 10) -> Optional[int]:
        """End the program (SIGTERM, then SIGKILL) and release the terminal."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout)
        try:
            os.close(self.master)
        except OSError:
            pass
        return self.proc.returncode

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
