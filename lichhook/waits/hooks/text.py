"""What the hooks print: the outcome (a JSON object and notices), what the model is told
of the waits in either voice (``instructions``), and the ``wait`` command lines in it for
the model to run as they stand.

They are written for Bash, which is what Claude Code's Bash tool runs (Git Bash on
Windows). On Windows without Git Bash the model has PowerShell instead, so there each
path is spelled, wherever it can be, so that PowerShell reads it the same once the line
starts with ``&``; ``powershell_note`` tells the model that, and how to write a path
that no common spelling exists for. The interpreter is the absolute path of the Python
running this hook: it has just run this archive, whereas a bare ``python`` is missing on
stock macOS and Debian and may be the Microsoft Store stub on Windows.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional


class Outcome:
    """What a hook prints: an optional JSON object for stdout and notices for the operator."""

    def __init__(self, notice: "str | None" = None) -> None:
        self.out: "dict | None" = None
        self.notices: list = [notice] if notice else []

    def notice(self, text: str) -> None:
        self.notices.append(text)


class Folder:
    """The waits folder and how it was chosen.

    ``explicit`` is true when the operator named it (argument or LICHHOOK_WAITS_DIR): then
    the commands the hooks print must name it too, and its absence is worth a notice. The
    default folder, by contrast, simply does not exist until the first wait is recorded.
    """

    def __init__(self, path: str, explicit: bool) -> None:
        self.path = path
        self.explicit = explicit


class Voice:
    """How the model records a wait: by running the ``wait`` command (``commands``: Claude
    Code, whose Stop hook then holds the turn for it) or by calling the MCP tool (Codex,
    whose sandbox keeps shell commands from writing the waits folder). ``by`` is how the
    name's argument is spelt, ``ops`` each op with the arguments it takes."""

    def __init__(self, harness: str, by: str, ops: str, commands: bool) -> None:
        self.harness = harness
        self.by = by
        self.ops = ops
        self.commands = commands


CLI = Voice("Claude Code", "--by", "add --what TEXT [--family F], list, watched --id W [--note TEXT], "
            "said --id W [--note TEXT], done --id W, or adopt", True)
TOOL = Voice("Codex", "by", "add with what (and family if you like), list, watched or said with id (and note "
             "if you like), done with id, or adopt to take your name and its waits over in a new session", False)
TOOL_NAME = "claude_code_wait"  # the MCP tool (lichhook.mcp.tool), named here for the hooks


def instructions(session: str, name: "Optional[str]", voice: "Voice", usage: str) -> "List[str]":
    """The opening lines of what a SessionStart hook tells the model: its session id, how to
    record a wait (``usage``: the wait command, in the command voice) and under which
    name; pure."""
    lines = [f"[lichhook waits] Your {voice.harness} session id is {session}. No tool tells you this id; "
             "keep it from here."]
    record = "To record something you are waiting for (a reply, a CI run, a review), "
    if voice.commands:
        lines.append(f"{record}run `{usage}` with op {voice.ops}. With the {TOOL_NAME} tool, if you have it, "
                     f"put {session} in its session field and the name in its by field.")
    else:
        lines.append(f"{record}call the {TOOL_NAME} tool of the lichhook MCP server with session {session} "
                     f"and by your name, and op {voice.ops}.")
    if name:
        lines.append(f"Your waits are kept under the name {name}; keep using {voice.by} {name}.")
    else:
        lines.append(f"For {voice.by} choose a short name of your own that no other session here uses "
                     "(such as your task: fix-login); the first call binds it to this session, "
                     "and the node is added for you.")
    if voice.commands:
        lines.append("While one of your waits is open and neither watched nor said, the Stop hook "
                     "will not let your turn end.")
    return lines


def let_through(hook: str) -> str:
    """The opening words of a notice that the hook did not do its job, and what it did instead."""
    if hook == "stop":
        return "lichhook Stop hook let this stop through"
    return "lichhook SessionStart hook told the model nothing about its waits"


# PowerShell ends a '...' string at any of these; Bash only at the first.
_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
# Inside "..." PowerShell expands $ and the backtick escape, and ends the string at any of
# the double quotes; Bash expands $ and the backtick too, but escapes them with \.
_POWERSHELL_DOUBLE_SPECIAL = '$`"\u201c\u201d\u201e'


def quote(arg: str, windows: "Optional[bool]" = None) -> str:
    """``arg`` as one Bash word that stays literal: spaces, ``$`` and backquotes included.

    In POSIX double quotes, with ``\\``, ``"``, ``$`` and the backquote escaped. On Windows
    backslashes first become forward slashes (which Windows and Python accept), and a
    word without a single quote goes in single quotes instead, which Bash and PowerShell
    both read verbatim; a word with one keeps the double quotes, which PowerShell reads
    the same unless the word also holds ``$``, a backquote or a double quote
    (``powershell_note`` then gives its own form). ``windows`` defaults to this OS.
    """
    if windows is None:
        windows = sys.platform == "win32"
    if windows:
        arg = _forward(arg)
        if not any(c in _SINGLE_QUOTES for c in arg):
            return "'" + arg + "'"
    for ch in ("\\", '"', "$", "`"):
        arg = arg.replace(ch, "\\" + ch)
    return '"' + arg + '"'


def _forward(path: str) -> str:
    return path.replace("\\", "/")


def same_in_powershell(arg: str) -> bool:
    """Whether PowerShell reads ``quote(arg, windows=True)`` as Bash does."""
    word = _forward(arg)
    return (not any(c in _SINGLE_QUOTES for c in word)
            or not any(c in _POWERSHELL_DOUBLE_SPECIAL for c in word))


def powershell_advice(paths: "List[str]", where: str) -> str:
    """The sentence for PowerShell users of the commands ``where`` (``here``, ``below``):
    put ``&`` first, and for each of ``paths`` PowerShell would misread, its own form."""
    from lichhook.install.quoting import ps_quote

    text = f"The commands {where} are for Bash; in PowerShell put & and a space before them"
    misread = [p for p in paths if not same_in_powershell(p)]
    if not misread:
        return text + "."
    forms = "; ".join(f"{quote(p, True)} as {ps_quote(_forward(p))}" for p in misread)
    return f"{text}, and write {forms} (PowerShell expands $ and ` inside double quotes)."


def powershell_note(folder: object, where: str) -> "Optional[str]":
    """On Windows, ``powershell_advice`` for the paths the printed commands hold; None
    elsewhere, where the model's shell is a POSIX one."""
    if sys.platform != "win32":
        return None
    from lichhook.selfcmd import running_archive

    paths = [p for p in (sys.executable, running_archive()) if p]
    if getattr(folder, "explicit", False):
        paths.append(folder.path)  # type: ignore[attr-defined]
    return powershell_advice(paths, where)


def program() -> str:
    """How to run this lichhook again: interpreter and archive, both quoted."""
    from lichhook.selfcmd import running_archive

    python = quote(sys.executable) if sys.executable else "python"
    archive = running_archive()
    if archive:
        return f"{python} {quote(archive)}"
    return f"{python} -m lichhook"


def wait_command(prefix: str, op: str, by: str, session: str, folder: object,
                 tail: str = "") -> str:
    """``<prefix> wait <op> --by <by> --session <session> [tail] [--waits-dir DIR]``.

    ``by`` and ``session`` must have passed the waits module's checks (letters, digits,
    ``_ - . @``), so they need no quoting. ``folder`` is a Folder; a folder
    the operator chose is named, since the model's shell may not share this environment.
    """
    words = [prefix, "wait", op, "--by", by, "--session", session]
    if tail:
        words.append(tail)
    if getattr(folder, "explicit", False):
        words += ["--waits-dir", quote(folder.path)]  # type: ignore[attr-defined]
    return " ".join(words)


# The characters lichhook.ids.is_control calls control characters (C0, DEL, C1).
_CONTROLS_TO_SPACES = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0)], " ")


def clean(text: str, limit: int) -> str:
    """``text`` on one line, control characters made spaces, at most ``limit`` characters."""
    # Text that is all printable has no control character, which str.isprintable tells
    # in C; testing each character in Python cost a hook that prints 15 waits 0.08 ms.
    if not text.isprintable():
        text = text.translate(_CONTROLS_TO_SPACES)
    one = " ".join(text.split())
    if len(one) > limit:
        one = one[: limit - 3].rstrip() + "..."
    return one
