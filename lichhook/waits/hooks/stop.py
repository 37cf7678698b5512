"""The Stop hook: a session may not quietly end its turn while a wait holds it.

A wait holds the turn when it is open and neither watched nor said. The hook refuses such
a stop at most three times in a row per session (counted in ``stops/<session id>.count``,
which ``lichhook.waits.view`` reads and writes); the fourth is let through, so no wait
can keep a turn going forever. Claude Code's own
``stop_hook_active`` flag is not consulted: it is also true after another hook's block,
and the counter already bounds the loop.
"""

from lichhook.waits.hooks.text import Folder, Outcome, clean, let_through, powershell_note, program, wait_command
from lichhook.waits.view import FolderRefused, FolderView, MirrorError, SessionWaits, for_hooks

MAX_STRIKES = 3
MAX_WAITS_SHOWN = 10
MAX_WHAT = 200


def stop(session: str, folder: "Folder") -> "Outcome":
    try:
        waits = for_hooks(folder.path, folder.explicit)
    except (FolderRefused, OSError) as exc:
        return Outcome(f"{let_through('stop')}: {exc}")
    if waits is None:
        # The default folder appears with the first wait ever recorded: nothing holds yet.
        return Outcome()
    with waits:
        return _decide(session, folder, waits)


def _decide(session: str, folder: "Folder", waits: "FolderView") -> "Outcome":
    try:
        own = waits.session_waits(session)
    except (MirrorError, FolderRefused) as exc:
        return Outcome(f"{let_through('stop')}: {exc}")
    outcome = Outcome()
    holding = [w for w in own.waits if w.holds_turn] if own else []
    if own is None or not holding:
        waits.set_strikes(session, 0)
        return outcome
    broken = waits.store_refusal()
    if broken:
        # Every command the advice would give is refused until the store is mended: say
        # so to the operator, who can mend it, rather than hold the turn over it.
        waits.set_strikes(session, 0)
        outcome.notice(f"{let_through('stop')}, although {len(holding)} wait(s) hold it, because "
                       f"the wait commands cannot mark or close them: {clean(broken, 600)}")
        return outcome
    counter = waits.counter_path(session)
    strikes = waits.strikes(session)
    if strikes >= MAX_STRIKES:
        words = (f"{let_through('stop')} after {strikes} refusals in a row, although "
                 f"{len(holding)} wait(s) still hold it: "
                 + ", ".join(w.id for w in holding[:MAX_WAITS_SHOWN]))
        trouble = waits.set_strikes(session, 0)
        if trouble:
            words += f" (and could not reset {counter}: {trouble})"
        outcome.notice(words)
        return outcome
    trouble = waits.set_strikes(session, strikes + 1)
    if trouble:
        outcome.notice(f"{let_through('stop')}: cannot count refusals in {counter} ({trouble}), "
                       "and without that count a wait could hold the turn forever")
        return outcome
    outcome.out = {"decision": "block", "reason": advice(own, holding, session, folder, program())}
    return outcome


def advice(own: "SessionWaits", holding: list, session: str, folder: "Folder", prefix: str) -> str:
    """The block reason, which Claude reads as its next instruction; pure."""
    name = own.name or "WHO"
    lines = ["Do not end your turn yet: these waits are open, nothing watches them and you "
             "have not told the operator about them:"]
    for w in holding[:MAX_WAITS_SHOWN]:
        lines.append(f"- {w.id}: {clean(w.what, MAX_WHAT)}")
        if w.family:
            lines.append(f"  Wait for it with mesh_wait on the family {clean(w.family, 80)!r} if "
                         "this session's tool runner is granted it, otherwise start a watcher.")
        else:
            lines.append("  Start a watcher (a background process that notices when it is over).")
    if len(holding) > MAX_WAITS_SHOWN:
        lines.append(f"- ... and {len(holding) - MAX_WAITS_SHOWN} more: "
                     + wait_command(prefix, "list", name, session, folder))
    first = holding[0].id
    rest = [w.id for w in holding[1:MAX_WAITS_SHOWN]]
    also = f" (shown for {first}; for {', '.join(rest)}, use that --id)" if rest else ""
    windows_note = powershell_note(folder, "below")
    if windows_note:
        lines.append(windows_note)
    lines.append(f"Then mark each wait, or close it{also}:")
    lines.append("- a watcher now watches it: " + wait_command(
        prefix, "watched", name, session, folder, f'--id {first} --note "how it is watched"'))
    lines.append("- you told the operator about it: " + wait_command(
        prefix, "said", name, session, folder, f'--id {first} --note "what you told them"'))
    lines.append("- it is over: " + wait_command(prefix, "done", name, session, folder,
                                                  f"--id {first}"))
    return "\n".join(lines)
