"""What every registration points at: one Python and the stable archive, and how to
spell ``<python> <archive> <subcommand...>`` for each harness's shell."""

from __future__ import annotations

import os
import sys

from lichhook.install import quoting

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional


def windows_short_path(path: str) -> Optional[str]:
    """The 8.3 short form of an existing path (``C:\\PROGRA~1\\...``), or None where the
    volume keeps no short names or this is not Windows."""
    if sys.platform != "win32":
        return None
    try:
        import ctypes

        size = ctypes.windll.kernel32.GetShortPathNameW(path, None, 0)
        if not size:
            return None
        buffer = ctypes.create_unicode_buffer(size)
        if not ctypes.windll.kernel32.GetShortPathNameW(path, buffer, size):
            return None
        return buffer.value or None
    except (OSError, AttributeError, ValueError):
        return None


class Target:
    """``python`` and ``archive`` as registered; ``windows`` says which OS the
    registration is for (tests render Windows forms on any OS)."""

    def __init__(self, python: str, archive: str, windows: bool = sys.platform == "win32",
                 short_path: Optional[Callable[[str], Optional[str]]] = None) -> None:
        self.python = python
        self.archive = archive
        self.windows = windows
        self.short_path = short_path if short_path is not None else (windows_short_path if windows else None)

    def argv(self, *args: str) -> List[str]:
        return [self.python, self.archive, *args]

    def short(self, path: str) -> Optional[str]:
        """The 8.3 short form of ``path``, also before its last parts exist: the archive
        is planned before it is copied, and the first install must write what a second
        one would, so the deepest existing folder is shortened and the rest kept."""
        if self.short_path is None:
            return None
        import ntpath

        head, rest = path, []  # type: tuple[str, list[str]]
        while True:
            found = self.short_path(head)
            if found:
                return ntpath.join(found, *reversed(rest))
            parent, name = ntpath.split(head)
            if not name or parent == head:
                return None
            rest.append(name)
            head = parent

    def _sh_path(self, path: str) -> str:
        """A path as a POSIX shell on Windows (Git Bash, Crush's interpreter) takes it:
        forward slashes, and the short form when that spares the quotes."""
        if not self.windows:
            return path
        forward = path.replace("\\", "/")
        if quoting.sh_quote(forward) == forward:
            return forward
        short = self.short(path)
        if short and quoting.sh_quote(short.replace("\\", "/")) == short.replace("\\", "/"):
            return short.replace("\\", "/")
        return forward

    def sh_line(self, *args: str) -> str:
        """The command for a POSIX shell: ``sh -c``, bash, Git Bash, Crush's interpreter."""
        return quoting.sh_join([self._sh_path(self.python), self._sh_path(self.archive), *args])

    def sh_quoted(self) -> List[str]:
        """The paths the POSIX line has to put in quotes, as it writes them: none when each
        is plain or has a plain short form."""
        return [p for p in (self._sh_path(self.python), self._sh_path(self.archive)) if quoting.sh_quote(p) != p]

    def windows_line(self, *args: str) -> tuple:
        """(command line, warning or None) for a Windows shell that may be PowerShell or
        cmd.exe. The dual form works in both as long as no word needs double quotes; when
        one does, it still works in PowerShell, and the warning says cmd.exe breaks it.
        When the paths make the dual form impossible, the PowerShell form is used (Codex's
        usual Windows shell) and the warning says so."""
        argv = self.argv(*args)
        try:
            words = quoting.dual_words(argv, self.short)
        except quoting.QuotingError as exc:
            return quoting.ps_command(argv), (
                f"{exc}; wrote the PowerShell form, which cmd.exe cannot run")
        quoted = [a for a, w in zip(argv, words) if w.startswith('"')]
        if not quoted:
            return " ".join(words), None
        return " ".join(words), (
            f"{' and '.join(quoted)} needs double quotes in commandWindows: it holds a space or a "
            "quote and has no short (8.3) name. PowerShell, Codex's usual Windows shell, runs that "
            "line; cmd.exe (Codex's fallback, %COMSPEC% /C) would not, as Codex hands the quotes on "
            "to it as \\\" and Python then gets a broken path. If Codex runs its hooks with cmd.exe "
            "here, give each folder on that path whose name needs the quotes a short name (as "
            "administrator: fsutil file setshortname), then run install again")

    def marks(self) -> tuple:
        """Texts of which one appears in every command line that runs this archive, in
        whichever form lichhook wrote it. A hook entry holding one is lichhook's own."""
        forms = {self.archive, self._sh_path(self.archive)}
        forms |= {quoting.sh_quote(f) for f in list(forms)}
        forms.add(quoting.ps_quote(self.archive))
        short = self.short(self.archive)
        if short:
            forms.add(short)
        return tuple(sorted(forms))

    def owns(self, text: str) -> bool:
        return any(mark in text for mark in self.marks())


def current_python() -> str:
    """The absolute path of the Python running this install. Symlinks are kept, not
    resolved: a virtual environment's python is a symlink, and resolving it would drop
    the environment's entry-point plugins."""
    return os.path.abspath(sys.executable)
