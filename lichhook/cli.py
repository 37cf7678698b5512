"""The command line: ``lichhook <provider>`` reports; a few words name subcommands.

Subcommand modules are imported only when named, so the report path pays for none.
"""

# No ``from __future__ import annotations``: that line imports __future__ at run time
# (~0.1 ms) and this module runs on every hook, so annotations that name
# type-checking-only types are written as strings.

import os
import sys

# word -> (module, function); each function takes the remaining argv and returns an exit code.
COMMANDS = {
    "adapters": ("lichhook.host", "adapters_command"),
    "listen": ("lichhook.standin", "main"),
    "demo": ("lichhook.demo", "main"),
    "wait": ("lichhook.waits.cli", "main"),
    "claude-code": ("lichhook.claude_code", "main"),
    "install": ("lichhook.install.cli", "install_main"),
    "uninstall": ("lichhook.install.cli", "uninstall_main"),
    "doctor": ("lichhook.install.doctor", "main"),
    "mcp": ("lichhook.mcp", "main"),
}

USAGE = """\
usage: python lichhook.pyz <provider>      report this harness session to lich (a hook)
       python lichhook.pyz <command> ...

providers (built in): claude, codex, antigravity, crush, opencode, omp
  With no argument the provider is claude. A hook always exits 0 and prints only
  its harness's verdict; set LICHHOOK_DEBUG=1 to see its decisions on stderr.

commands:
  adapters      list every provider and where its adapter comes from
  listen        run a stand-in for lich that checks and prints reports
  demo          run every adapter's sample through the real report path
  wait          record what a session waits for (add, list, watched, said, done, adopt)
  claude-code   Claude Code hooks over the waits: session-start, stop
  install       register lichhook in your harnesses (uninstall, doctor)
  mcp           serve the claude_code_wait tool over MCP stdio
  --version     print the version
"""


def main(argv: "list | None" = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    word = args[0] if args else "claude"  # how lich reads reports from old clients
    if word in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if word in ("-V", "--version", "version"):
        from lichhook._version import CONTRACT_RELEASE, __version__

        print(f"lichhook {__version__} (lich session-start contract {CONTRACT_RELEASE})")
        return 0
    if word in COMMANDS:
        from importlib import import_module

        module, function = COMMANDS[word]
        return getattr(import_module(module), function)(args[1:])

    from lichhook.report import run

    return run(word)


# Commands that run as hooks or wait ops: processes that live a few milliseconds and
# start hundreds of times a day. A provider word (the report path) is one too.
SHORT_LIVED = frozenset({"wait", "claude-code"})


def short_lived(args: list) -> bool:
    word = args[0] if args else "claude"
    if word in SHORT_LIVED:
        return True
    return word not in COMMANDS and not word.startswith("-") and word not in ("help", "version")


def entry() -> None:
    """Console and archive entry point: exit with main's code, and never let a closed
    stdout turn a clean run into an error."""
    fast = short_lived(sys.argv[1:])
    if fast:
        import gc

        # A hook frees nearly everything by reference counting before it exits; the
        # cyclic collections its imports would trigger cost ~0.3 ms for nothing.
        gc.disable()
    code = main()
    try:
        sys.stdout.flush()
    except AttributeError:  # started with stdout closed: sys.stdout is None
        pass
    except (OSError, ValueError):
        # The reader went away; point stdout at devnull so the interpreter's own
        # flush at exit does not fail too.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    if fast and isinstance(code, int) and only_own_code_ran():
        # Everything is written and flushed, and what is left open the OS closes:
        # skip the interpreter's teardown of every module and object (~1.5 ms).
        try:
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)


def only_own_code_ran() -> bool:
    """True when no plugin was loaded (its files or exit handlers could need the
    interpreter's orderly exit) and nothing registered an exit handler."""
    if "lichhook.host" in sys.modules:
        return False
    import atexit

    count = getattr(atexit, "_ncallbacks", None)
    return count is not None and count() == 0
