"""The hooks over the waits: ``lichhook claude-code session-start|stop [WAITS_DIR]`` and
``lichhook codex-waits session-start [WAITS_DIR]``.

No tool tells a session its own id; a hook's payload is the only place it appears. So a
SessionStart hook gives the model its id, how to record waits and the waits it already
keeps (``start``), in the voice of the way the model records them (``text.Voice``):
Claude Code's model runs the ``wait`` command, Codex's calls the MCP tool (its sandbox
keeps shell commands from writing the waits folder). Claude Code's Stop hook refuses to
end a turn while a wait holds it (``stop``).

The hooks read only the mirrored files of the waits folder (``sessions/<id>.json`` and
``index.json``), never the store itself, so they answer even when the store is busy or
broken; ``lichhook.waits.view`` checks the folder and reads them. Whatever happens they
exit 0 and print one JSON object or nothing: a hook must never fail or wedge the
operator's turn. Everything they let through for a reason is said twice, on stderr and
as ``systemMessage``, because Claude Code shows the operator only the latter when a hook
exits 0.
"""

import os
import sys

from lichhook.paths import waits_dir
from lichhook.waits.hooks.text import CLI, TOOL, Folder, Outcome, let_through

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

CLAUDE_USAGE = """\
usage: python3 lichhook.pyz claude-code session-start [WAITS_DIR]   (Claude Code SessionStart hook)
       python3 lichhook.pyz claude-code stop [WAITS_DIR]            (Claude Code Stop hook)

Both read Claude Code's hook payload on stdin and the waits folder (WAITS_DIR, else
LICHHOOK_WAITS_DIR, else the per-user state folder), print one JSON object or nothing,
and always exit 0.
"""

CODEX_USAGE = """\
usage: python3 lichhook.pyz codex-waits session-start [WAITS_DIR]   (Codex SessionStart hook)

Reads Codex's hook payload on stdin and the waits folder (WAITS_DIR, else
LICHHOOK_WAITS_DIR, else the per-user state folder), prints one JSON object whose
additionalContext tells the model its session id and how to record waits, and always
exits 0.
"""


def claude_main(argv: list) -> int:
    """``lichhook claude-code ...``: Claude Code's SessionStart and Stop hooks."""
    return main("claude-code", ("session-start", "stop"), CLAUDE_USAGE, argv)


def codex_main(argv: list) -> int:
    """``lichhook codex-waits ...``: Codex's SessionStart hook."""
    return main("codex-waits", ("session-start",), CODEX_USAGE, argv)


def main(word: str, hooks: tuple, usage: str, argv: list) -> int:
    args = list(argv)
    if args and args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage)
        return 0
    if not args or args[0] not in hooks:
        # Not a hook run: exit 1, which Claude Code reports as a hook error without
        # blocking anything (2 would hold a Stop open).
        said = repr(args[0])[:60] if args else "nothing"
        _write(sys.stderr, f"lichhook {word}: expected {' or '.join(hooks)}, got {said}\n{usage}")
        return 1
    hook = args[0]
    try:
        outcome = run_hook(word, hook, args[1:], os.environ)
    except Exception as exc:  # fail open: a bug here must never hold or break a turn
        outcome = Outcome(f"{let_through(hook)}: unexpected {type(exc).__name__}: {str(exc)[:300]}")
        from lichhook.failures import record

        record(os.environ, word, hook, exc)
    finish(outcome)
    return 0


def choose_folder(arg: "str | None", environ: "Mapping[str, str]") -> "Folder":
    explicit = bool(arg) or bool(environ.get("LICHHOOK_WAITS_DIR", "").strip())
    # Absolute, so that the commands printed for the model work from any working folder.
    return Folder(os.path.abspath(waits_dir(environ, arg or None)), explicit)


def run_hook(word: str, hook: str, extra: list, environ: "Mapping[str, str]") -> "Outcome":
    from lichhook.ids import BadId, wait_session_id
    from lichhook.payload import PayloadError, read_payload

    if len(extra) > 1:
        return Outcome(f"{let_through(hook)}: it takes at most one argument, the waits folder, "
                       f"but got {len(extra)}; quote a folder name that has spaces")
    folder = choose_folder(extra[0] if extra else None, environ)
    try:
        payload = read_payload()
        if "session_id" not in payload:
            raise BadId("the hook payload on stdin has no session_id")
        session = wait_session_id(payload["session_id"])
    except (PayloadError, BadId) as exc:
        return Outcome(f"{let_through(hook)}: {exc}")
    if hook == "stop":
        from lichhook.waits.hooks.stop import stop

        return stop(session, folder)
    from lichhook.waits.hooks.start import session_start

    return session_start(session, payload, folder, CLI if word == "claude-code" else TOOL)


def finish(outcome: "Outcome") -> None:
    """Print the notices on stderr and the JSON object (with the notices as systemMessage)."""
    out = outcome.out
    if outcome.notices:
        text = "\n".join(outcome.notices)
        _write(sys.stderr, text + "\n")
        out = dict(out or {})
        out["systemMessage"] = text
    if not out:
        return
    from lichhook.coldstart import quickjson as json  # json's results without its import (see there)

    # ASCII only: a Windows console code page cannot garble or refuse it.
    _write(sys.stdout, json.dumps(out, ensure_ascii=True) + "\n")


def _write(stream, text: str) -> None:  # type: ignore[no-untyped-def]
    try:
        stream.write(text)
        stream.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: started without the stream (None)
        pass
