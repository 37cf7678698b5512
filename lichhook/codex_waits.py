"""``lichhook codex-waits session-start [WAITS_DIR]``: tell a Codex session its own id.

Codex gives a SessionStart hook's ``additionalContext`` to the model as developer
context, and that is the only place a Codex session can learn its id: hooks get it on
stdin, but neither the model nor lichhook's MCP server is told it (shell commands the
model runs see ``CODEX_THREAD_ID``, yet the sandbox keeps them from writing the waits
folder). Without the id the ``claude_code_wait`` tool, which binds waits to a session,
cannot be used. This hook prints the id, how to call the tool, and the waits already
kept for this session (after a resume, say).

Like the Claude Code hooks it reads only the waits mirror (``sessions/<id>.json``),
always exits 0 and prints one JSON object: a hook must never fail or hold a turn.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional

USAGE = """\
usage: python3 lichhook.pyz codex-waits session-start [WAITS_DIR]   (Codex SessionStart hook)

Reads Codex's hook payload on stdin and the waits folder (WAITS_DIR, else
LICHHOOK_WAITS_DIR, else the per-user state folder), prints one JSON object whose
additionalContext tells the model its session id and how to record waits, and always
exits 0.
"""

MAX_WAITS_SHOWN = 15
WAITS_BUDGET = 3000
FAILED = "lichhook SessionStart hook told the model nothing about its waits"


def main(argv: "List[str]") -> int:
    from lichhook.claude_code import Outcome, finish

    args = list(argv)
    if args and args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if not args or args[0] != "session-start":
        said = repr(args[0])[:60] if args else "nothing"
        sys.stderr.write(f"lichhook codex-waits: expected session-start, got {said}\n{USAGE}")
        return 1
    try:
        outcome = run(args[1:], os.environ)
    except Exception as exc:  # fail open: a bug here must never break a session's start
        outcome = Outcome()
        outcome.notice(f"{FAILED}: unexpected {type(exc).__name__}: {str(exc)[:300]}")
        from lichhook.failures import record

        record(os.environ, "codex-waits", "session-start", exc)
    finish(outcome)
    return 0


def run(extra: "List[str]", environ: "Mapping[str, str]"):
    from lichhook.claude_code import Outcome, choose_folder
    from lichhook.claude_code.session_start import read_records
    from lichhook.ids import BadId, wait_session_id
    from lichhook.payload import PayloadError, parse_payload, read_stdin

    outcome = Outcome()
    if len(extra) > 1:
        outcome.notice(f"{FAILED}: it takes at most one argument, the waits folder, but got {len(extra)}; "
                       "quote a folder name that has spaces")
        return outcome
    folder = choose_folder(extra[0] if extra else None, environ)
    try:
        payload = parse_payload(read_stdin())
        if "session_id" not in payload:
            raise BadId("the hook payload on stdin has no session_id")
        session = wait_session_id(payload["session_id"])
    except (PayloadError, BadId) as exc:
        outcome.notice(f"{FAILED}: {exc}")
        return outcome
    own, _, problems = read_records(folder, session, outcome, with_index=False)
    name, waits = (own.name, own.waits) if own else (None, [])
    outcome.out = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": context(session, name, waits, problems)}}
    return outcome


def context(session: str, name: "Optional[str]", waits: list, problems: "List[str]") -> str:
    """The text the model is given; pure."""
    from lichhook.claude_code.commands import clean

    lines = [
        f"[lichhook waits] Your Codex session id is {session}. No tool tells you this id; keep it from here.",
        "To record something you are waiting for (a reply, a CI run, a review), call the claude_code_wait "
        f"tool of the lichhook MCP server with session {session} and by your name, and op add with what "
        "(and family if you like), list, watched or said with id (and note if you like), done with id, or "
        "adopt to take your name and its waits over in a new session.",
    ]
    if name:
        lines.append(f"Your waits are kept under the name {name}; keep using by {name}.")
    else:
        lines.append("For by choose a short name of your own that no other session here uses (such as your "
                     "task: fix-login); the first call binds it to this session.")
    if problems:
        lines.append("(Trouble with the waits records: " + clean("; ".join(problems), 400) + ")")
    if waits:
        lines.append("")
        lines.append(f"Your open waits ({len(waits)}):")
        shown = 0
        for wait in waits[:MAX_WAITS_SHOWN]:
            line = describe(wait)
            if shown and sum(len(x) + 1 for x in lines[-shown:]) + len(line) > WAITS_BUDGET:
                break
            lines.append(line)
            shown += 1
        if len(waits) > shown:
            lines.append(f"... and {len(waits) - shown} more; op list shows them all.")
    return "\n".join(lines)


def describe(wait) -> str:
    from lichhook.claude_code.commands import clean

    family = f" [family {clean(wait.family, 80)}]" if wait.family else ""
    marks = [m for m, on in (("watched", wait.watched), ("said", wait.said)) if on]
    since = f" since {clean(wait.created, 40)}" if wait.created else ""
    return f"- {wait.id}: {clean(wait.what, 160)}{family} (open{since}{', ' + ', '.join(marks) if marks else ''})"
