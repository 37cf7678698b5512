"""What every registration points at: one Python and its copy of the archive, and how to
spell ``<python> -I -S <archive> <subcommand...>`` for each harness's shell.

The flags (``INTERPRETER_FLAGS``) start the interpreter isolated from the caller's
environment: ``-I`` ignores ``PYTHONPATH`` and every other ``PYTHON*`` variable, the
current folder and the user's site-packages, so a project's ``json.py`` or ``select.py``
never runs inside a hook; ``-S`` skips ``site``, whose ``.pth`` files can cost tens of
milliseconds at every start for nothing lichhook uses (adapters installed as packages are
still found: the host runs ``site`` itself before it looks for them).
docs/performance.md measures both.

A hook does not name its archive to Python: it runs ``-c <launcher> <archive> <words>``
(``launcher``), so that a hook whose archive is gone (deleted, or its data folder removed)
still exits 0 with its harness's allow verdict. ``python <archive>`` would exit 2 there,
which Claude Code and Codex read as a block: every tool call or prompt refused.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import sys
from typing import Callable, List, Optional

from lichhook.adapters import BY_PROVIDER
from lichhook.install import quoting
from lichhook.install.copies import stable

try:
    import ctypes
except ImportError:  # a Python built without _ctypes: no short paths
    ctypes = None  # type: ignore[assignment]


def windows_short_path(path: str) -> Optional[str]:
    """The 8.3 short form of an existing path (``C:\\PROGRA~1\\...``), or None where the
    volume keeps no short names or this is not Windows."""
    if sys.platform != "win32":
        return None
    try:
        size = ctypes.windll.kernel32.GetShortPathNameW(path, None, 0)
        if not size:
            return None
        buffer = ctypes.create_unicode_buffer(size)
        if not ctypes.windll.kernel32.GetShortPathNameW(path, buffer, size):
            return None
        return buffer.value or None
    except (OSError, AttributeError, ValueError):
        return None


INTERPRETER_FLAGS = ("-I", "-S")

# Runs the archive (its first argument) as ``python <archive>`` does (on sys.path first,
# its zipimporter the one Python keeps for it, its __main__ run as the main module, argv
# from the archive on), or, where it is not there, prints the verdict (nothing, or
# Antigravity's) and exits 0. zipimport is imported at every start; runpy would import
# re and typing (about 15 ms). Written without quotes, ``%``, ``$`` or backticks, so POSIX
# shells, PowerShell and cmd.exe all pass it on unchanged inside one pair of quotes.
_LAUNCHER = "import os,sys,zipimport;del sys.argv[0];a=sys.argv[0];" \
            "i=os.path.isfile(a) and zipimport.zipimporter(a);sys.path[:0]=[a];sys.path_importer_cache[a]=i or None;" \
            "exec(i.get_code(__name__)) if i else "


def launcher(verdict: str = "") -> str:
    """The ``-c`` code of a hook whose harness reads ``verdict`` as its allow."""
    return _LAUNCHER + (f"print({verdict!r})" if verdict else "0")


def hook_verdict(words: tuple) -> str:
    """The allow verdict of the hook ``words`` (``antigravity PreToolUse``): what it prints."""
    descriptor = BY_PROVIDER.get(words[0]) if words else None
    return descriptor.verdict(words[1] if len(words) > 1 else None) if descriptor else ""


def is_launcher(word: object) -> bool:
    """Whether ``word`` is a launcher lichhook writes (for any verdict)."""
    if not isinstance(word, str) or not word.startswith(_LAUNCHER):
        return False
    return word == launcher() or any(word == launcher(v) for d in BY_PROVIDER.values() for v in d.verdicts.values())


def options_end(words: list, start: int) -> int:
    """The index of the first word at or after ``start`` that is not an interpreter
    option (``-I``; ``-c`` and the code after it, as Python takes it): where a
    registration names its archive."""
    i = start
    while i < len(words) and isinstance(words[i], str) and words[i].startswith("-"):
        i += 2 if words[i] == "-c" else 1
    return i


def foreign_options(words: list, start: int) -> List[str]:
    """The interpreter options in ``words[start:]``, before the first operand, that
    lichhook does not write (anything but ``-I``, ``-S`` and ``-c <launcher>``)."""
    out: List[str] = []
    i = start
    while i < options_end(words, start):
        if words[i] == "-c":
            if not is_launcher(words[i + 1] if i + 1 < len(words) else None):
                out.append(" ".join(str(w) for w in words[i:i + 2]))
            i += 2
            continue
        if words[i] not in INTERPRETER_FLAGS:
            out.append(words[i])
        i += 1
    return out


class Target:
    """``python`` and ``archive`` as registered; ``windows`` says which OS the
    registration is for (tests render Windows forms on any OS).

    Every archive copy lichhook installs lies in one folder (``root``): the copy for each
    Python version in a sub-folder named for it (``stable``: a complete archive and its
    hooks archive), or, as an earlier release put it, in the folder itself. An entry
    naming any of them is lichhook's. ``archive`` is what hooks run; ``server()`` gives
    the target of the MCP server."""

    def __init__(self, python: str, archive: str, windows: bool = sys.platform == "win32",
                 short_path: Optional[Callable[[str], Optional[str]]] = None) -> None:
        self.python = python
        self.archive = archive
        self.windows = windows
        self.short_path = short_path if short_path is not None else (windows_short_path if windows else None)
        folder = self._paths.dirname(archive)
        self.root = self._paths.dirname(folder) if stable.is_version_folder(self._paths.basename(folder)) else folder

    @property
    def _paths(self):
        return ntpath if self.windows else posixpath

    def with_python(self, python: str) -> Target:
        return Target(python, self.archive, self.windows, self.short_path)

    def options(self, *args: str) -> List[str]:
        """The interpreter's words between the Python and the archive: hooks (which run
        the hooks archive) through the launcher, the MCP server as is (a server that
        cannot start blocks nothing)."""
        if self._paths.basename(self.archive) != stable.HOOKS_NAME:
            return list(INTERPRETER_FLAGS)
        return [*INTERPRETER_FLAGS, "-c", launcher(hook_verdict(args))]

    def argv(self, *args: str) -> List[str]:
        return [self.python, *self.options(*args), self.archive, *args]

    def short(self, path: str) -> Optional[str]:
        """The 8.3 short form of ``path``, also before its last parts exist: the archive
        is planned before it is copied, and the first install must write what a second
        one would, so the deepest existing folder is shortened and the rest kept."""
        if self.short_path is None:
            return None

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
        short = (self.short(path) or "").replace("\\", "/")
        return short if short and quoting.sh_quote(short) == short else forward

    def sh_line(self, *args: str) -> str:
        """The command for a POSIX shell: ``sh -c``, bash, Git Bash, Crush's interpreter."""
        return quoting.sh_join([self._sh_path(self.python), *self.options(*args), self._sh_path(self.archive), *args])

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
                f"{exc}; wrote the PowerShell form, which cmd.exe cannot run. If Codex runs its hooks "
                "with cmd.exe here, give each folder on that path whose name needs quoting a short name "
                "(as administrator: fsutil file setshortname), or install with a Python from a folder "
                "whose path has no space, quote or other special character, then run install again")
        # the launcher is always quoted: PowerShell passes it on; cmd.exe, as Codex hands
        # it the line, would not (docs/install.md)
        quoted = [a for a, w in zip(argv, words) if w.startswith('"') and not is_launcher(a)]
        if not quoted:
            return " ".join(words), None
        return " ".join(words), (
            f"{' and '.join(quoted)} needs double quotes in commandWindows: it holds a space or a "
            "quote and has no short (8.3) name. PowerShell, Codex's usual Windows shell, runs that "
            "line; cmd.exe (Codex's fallback, %COMSPEC% /C) would not, as Codex hands the quotes on "
            "to it as \\\" and Python then gets a broken path. If Codex runs its hooks with cmd.exe "
            "here, give each folder on that path whose name needs the quotes a short name (as "
            "administrator: fsutil file setshortname), then run install again")

    def _root_forms(self) -> set:
        """Every spelling of ``root`` lichhook writes: as is, with forward slashes (Windows
        POSIX lines), and in its short form."""
        forms = {self.root}
        short = self.short(self.root)
        if short:
            forms.add(short)
        if self.windows:
            forms |= {f.replace("\\", "/") for f in list(forms)}
        return forms

    def archive_of(self, word: str) -> Optional[str]:
        """The archive ``word`` names, in whichever form lichhook wrote it (long or short,
        either slash), or None when it names none of lichhook's archives."""
        paths = self._paths
        name = paths.basename(word)
        if name not in (stable.ARCHIVE_NAME, stable.HOOKS_NAME):
            return None
        folder = paths.dirname(word)
        version = paths.basename(folder)
        roots = self._root_forms()
        if stable.is_version_folder(version) and paths.dirname(folder) in roots:
            return paths.join(self.root, version, name)
        if folder in roots and name == stable.ARCHIVE_NAME:
            return paths.join(self.root, name)
        return None

    def copy_of(self, word: str) -> Optional[str]:
        """The complete archive of the copy ``word`` names (the one beside a hooks
        archive), or None."""
        archive = self.archive_of(word)
        return None if archive is None else stable.complete_of(archive, self._paths)

    def server(self) -> Target:
        """The target of long-running commands (the MCP server): the complete archive of
        this copy, which holds every module, not its hooks archive."""
        complete = stable.complete_of(self.archive, self._paths)
        return self if complete == self.archive else Target(self.python, complete, self.windows, self.short_path)

    def owns(self, text: str) -> bool:
        """Whether ``text`` (command strings joined by newlines, as an entry holds them)
        runs one of lichhook's archive copies."""
        for line in text.split("\n"):
            words = quoting.split_words(line) or []
            if any(self.archive_of(w) for w in [line, *words]):
                return True
        return False


def current_python() -> str:
    """The absolute path of the Python running this install. Symlinks are kept, not
    resolved: a virtual environment's python is a symlink, and resolving it would drop
    the environment's entry-point plugins."""
    return os.path.abspath(sys.executable)
