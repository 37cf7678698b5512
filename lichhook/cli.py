"""The command line: ``lichhook <provider> [<event>]`` reports; a few words name subcommands.

Subcommand modules are imported only when named, so the report path pays for none.
"""

import os
import sys
import time

# word -> (module, function, what the help says of it: "" where another word's line does);
# each function takes the remaining argv and returns an exit code.
COMMANDS = {
    "adapters": ("lichhook.listing", "main", "list every provider and where its adapter comes from"),
    "listen": ("lichhook.standin", "main", "run a stand-in for lich that checks and prints reports"),
    "demo": ("lichhook.demo", "main", "run each harness's session, start to end, through the real report path"),
    "wait": ("lichhook.waits.cli", "main", "record what a session waits for (add, list, watched, said, done, adopt)"),
    "claude-code": ("lichhook.waits.hooks", "claude_main", "Claude Code hooks over the waits: session-start, stop"),
    "codex-waits": ("lichhook.waits.hooks", "codex_main", "Codex hook over the waits: session-start"),
    "install": ("lichhook.install.cli", "install_main", "register lichhook in your harnesses (uninstall, doctor)"),
    "uninstall": ("lichhook.install.cli", "uninstall_main", ""),
    "doctor": ("lichhook.install.doctor", "main", ""),
    "mcp": ("lichhook.mcp.server", "main", "serve the claude_code_wait tool over MCP stdio"),
    "theme": ("lichhook.theme", "main", "check a lich colour theme as lich imports it (check, where)"),
}

# `<provider> --serve`: one lichhook for a harness process, each event a line on stdin
# (lichhook.serve; the JS modules of opencode and omp run it).
SERVE = "--serve"

# Every word the command line takes for itself, so a provider can never be one.
WORDS = frozenset(COMMANDS) | {"help", "version"}

USAGE = """\
usage: {python} lichhook.pyz <provider>          report this harness session to lich (a hook)
       {python} lichhook.pyz <provider> <event>  report what this harness event means to lich
       {python} lichhook.pyz <provider> --serve  report each event written on stdin, a line each
       {python} lichhook.pyz <command> ...

providers (built in), how each runs lichhook, and the events it takes:
{providers}
  With no argument the provider is claude. A hook always exits 0 and prints only what
  its harness needs for that event; set LICHHOOK_DEBUG=1 to see its decisions on stderr.

commands:
{commands}
  --version     print the version
"""


def usage(python: str) -> str:
    """The help text; its provider lines come from the harness descriptors, its command
    lines from COMMANDS."""
    from lichhook.adapters import DESCRIPTORS

    import textwrap

    lines = []
    for d in DESCRIPTORS:
        lines.append(f"  {d.provider:<13} {d.title}: {d.usage}")
        lines += textwrap.wrap("events: " + ", ".join(d.events), width=88, initial_indent=" " * 16,
                               subsequent_indent=" " * 24)
    commands = [f"  {word:<13} {said}" for word, (_module, _function, said) in COMMANDS.items() if said]
    return USAGE.format(python=python, providers="\n".join(lines), commands="\n".join(commands))


def main(argv: "list[str] | None" = None, started: "float | None" = None) -> int:
    """Run one command; ``started`` is when the process began (time.monotonic), from
    which a hook's deadline counts."""
    args = sys.argv[1:] if argv is None else list(argv)
    word = args[0] if args else "claude"  # how lich reads reports from old clients
    if word in ("-h", "--help", "help"):
        from lichhook.selfcmd import python_word

        sys.stdout.write(usage(python_word()))
        return 0
    if word in ("-V", "--version", "version"):
        from lichhook._version import __version__
        from lichhook.contracts import RELEASE

        print(f"lichhook {__version__} (names the lich-plugin release your lich accepts; {RELEASE} for any lich)")
        return 0
    if word in COMMANDS:
        from importlib import import_module

        module, function, _said = COMMANDS[word]
        code: int = getattr(import_module(module), function)(args[1:])
        return code

    if len(args) > 1 and args[1] == SERVE:
        from lichhook.serve import serve

        return serve(word, reserved=WORDS)

    from lichhook.report import run

    # `<provider> <event>`: the event the hook was registered on. The bare `<provider>`
    # keeps the meaning every earlier registration gave it: the session-start report.
    event = args[1] if len(args) > 1 and args[1] else None
    return run(word, started=started, event=event, reserved=WORDS)


# The hooks a harness runs, as opposed to the wait ops a model runs: whatever happens,
# these exit 0, printing at most their harness's verdict.
HOOK_COMMANDS = frozenset({"claude-code", "codex-waits"})
# Commands that run as hooks or wait ops: processes that live a few milliseconds and
# start hundreds of times a day. A provider word (the report path) is one too.
SHORT_LIVED = HOOK_COMMANDS | {"wait"}


def short_lived(args: "list[str]") -> bool:
    word = args[0] if args else "claude"
    if word in SHORT_LIVED:
        return True
    return word not in WORDS and not word.startswith("-")


# The oldest Python lichhook runs on (requires-python in pyproject.toml). An older one
# fails at some import deep inside (pluggy's annotations on 3.8, ``from __future__
# import annotations`` on 3.6), so it stops at the entry point with the reason instead.
OLDEST_PYTHON = (3, 9)


def too_old(args: "list[str]") -> int:
    """The exit status on a Python older than OLDEST_PYTHON: a command says why and exits
    1; a hook exits 0 as every hook does, saying why only under LICHHOOK_DEBUG=1."""
    version = ".".join(str(part) for part in sys.version_info[:3])
    why = (f"lichhook needs Python {OLDEST_PYTHON[0]}.{OLDEST_PYTHON[1]} or newer, and {sys.executable} is "
           f"Python {version}. Run it with a newer Python (python3.9 to python3.13: your system's packages, "
           "pyenv or python.org have them)")
    if not short_lived(args):
        sys.stderr.write(f"{why}.\n")
        return 1
    if os.environ.get("LICHHOOK_DEBUG", "").strip() == "1":
        sys.stderr.write(f"lichhook: this hook does nothing: {why}, and register it with that one (install).\n")
    return 0


def entry() -> None:
    """Console and archive entry point: run, then exit with main's code (see
    lichhook.coldstart for how a short-lived command ends)."""
    started = time.monotonic()
    if sys.version_info < OLDEST_PYTHON:
        sys.exit(too_old(sys.argv[1:]))
    from lichhook import coldstart

    fast = short_lived(sys.argv[1:])
    coldstart.begin(fast)
    try:
        code = main(started=started)
    except Exception as exc:
        if not fast:
            raise  # a command the user typed: the traceback says what went wrong
        code = failed(sys.argv[1:], exc)
    coldstart.finish(code, fast)


def failed(args: "list[str]", exc: Exception) -> int:
    """The end of a short-lived command that raised ``exc`` where nothing caught it (a
    module missing from a damaged archive, a bug): no traceback. A hook gives its harness
    the verdict it needs, leaves a failure record for doctor and exits 0; a wait op says
    what failed on stderr and exits 1. Each step is itself guarded: the modules it reads
    may be the broken ones."""
    word = args[0] if args else "claude"
    event = args[1] if len(args) > 1 and args[1] else None
    why = f"{type(exc).__name__}: {exc}"
    if word == "wait":
        try:
            sys.stderr.write(f"lichhook wait: failed ({why}); run it again, or see `lichhook doctor`.\n")
        except (AttributeError, OSError, ValueError):
            pass
        return 1
    try:
        from lichhook.hook import Hook

        hook = Hook(word, event, os.environ, 0.0)
    except Exception:  # noqa: BLE001 - the module that says it is the broken one
        return 0
    if word not in HOOK_COMMANDS:  # a provider word: the report path
        try:
            hook.answer()
        except Exception:  # noqa: BLE001 - not even the descriptors could be read
            pass
    hook.failed(exc, f"failed ({why}); nothing more done")
    hook.close()
    return 0
