"""``lichhook claude-code session-start|stop [WAITS_DIR]``: Claude Code hooks over the waits mirror.

Both hooks read only the mirrored files of the waits folder (``sessions/<id>.json`` and
``index.json``), never the store itself, so they answer even when the store is busy or
broken; ``lichhook.waits.view`` checks the folder and reads them. Whatever happens they exit 0 and print one JSON object or nothing: a hook must
never fail or wedge the operator's turn. Everything they let through for a reason is said
twice, on stderr and as ``systemMessage``, because Claude Code shows the operator only the
latter when a hook exits 0.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import sys

from lichhook.claude_code.commands import Folder, Outcome, let_through

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

HOOKS = ("session-start", "stop")

USAGE = """\
usage: python3 lichhook.pyz claude-code session-start [WAITS_DIR]   (Claude Code SessionStart hook)
       python3 lichhook.pyz claude-code stop [WAITS_DIR]            (Claude Code Stop hook)

Both read Claude Code's hook payload on stdin and the waits folder (WAITS_DIR, else
LICHHOOK_WAITS_DIR, else the per-user state folder), print one JSON object or nothing,
and always exit 0.
"""


def choose_folder(arg: "str | None", environ: "Mapping[str, str]") -> "Folder":
    from lichhook.paths import waits_dir

    explicit = bool(arg) or bool(environ.get("LICHHOOK_WAITS_DIR", "").strip())
    # Absolute, so that the commands printed for the model work from any working folder.
    return Folder(os.path.abspath(waits_dir(environ, arg or None)), explicit)


def main(argv: list) -> int:
    args = list(argv)
    if args and args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if not args or args[0] not in HOOKS:
        # Not a hook run: exit 1, which Claude Code reports as a hook error without
        # blocking anything (2 would hold a Stop open).
        said = repr(args[0])[:60] if args else "nothing"
        _stderr(f"lichhook claude-code: expected session-start or stop, got {said}\n{USAGE}")
        return 1
    hook = args[0]
    outcome = Outcome()
    try:
        outcome = run_hook(hook, args[1:], os.environ)
    except Exception as exc:  # fail open: a bug here must never hold or break a turn
        outcome = Outcome()
        outcome.notice(f"{let_through(hook)}: unexpected {type(exc).__name__}: {str(exc)[:300]}")
        from lichhook.failures import record

        record(os.environ, "claude-code", hook, exc)
    finish(outcome)
    return 0


def run_hook(hook: str, extra: list, environ: "Mapping[str, str]") -> "Outcome":
    from lichhook.ids import BadId, wait_session_id
    from lichhook.payload import PayloadError, parse_payload, read_stdin

    if len(extra) > 1:
        outcome = Outcome()
        outcome.notice(f"{let_through(hook)}: it takes at most one argument, the waits folder, "
                       f"but got {len(extra)}; quote a folder name that has spaces")
        return outcome
    folder = choose_folder(extra[0] if extra else None, environ)
    try:
        payload = parse_payload(read_stdin())
        session = wait_session_id(_session_field(payload))
    except (PayloadError, BadId) as exc:
        outcome = Outcome()
        outcome.notice(f"{let_through(hook)}: {exc}")
        return outcome
    if hook == "stop":
        from lichhook.claude_code.stop import stop

        return stop(session, folder)
    from lichhook.claude_code.session_start import session_start

    return session_start(session, payload, folder)


def _session_field(payload: dict) -> object:
    from lichhook.ids import BadId

    if "session_id" not in payload:
        raise BadId("the hook payload on stdin has no session_id")
    return payload["session_id"]


def finish(outcome: "Outcome") -> None:
    """Print the notices on stderr and the JSON object (with the notices as systemMessage)."""
    out = outcome.out
    if outcome.notices:
        text = "\n".join(outcome.notices)
        _stderr(text + "\n")
        out = dict(out or {})
        out["systemMessage"] = text
    if not out:
        return
    from lichhook.coldstart import quickjson as json  # json's results without its import (see there)

    # ASCII only: a Windows console code page cannot garble or refuse it.
    line = json.dumps(out, ensure_ascii=True) + "\n"
    try:
        sys.stdout.write(line)
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: started without stdout (None)
        pass


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: started without stderr (None)
        pass
