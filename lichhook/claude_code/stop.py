"""The Stop hook: a session may not quietly end its turn while a wait holds it.

A wait holds the turn when it is open and neither watched nor said. The hook refuses such
a stop at most three times in a row per session (counted in ``stops/<session id>.count``);
the fourth is let through, so no wait can keep a turn going forever. Claude Code's own
``stop_hook_active`` flag is not consulted: it is also true after another hook's block,
and the counter already bounds the loop.
"""

from __future__ import annotations

import os

from lichhook.claude_code import Folder, Outcome, let_through
from lichhook.claude_code.commands import clean, powershell_note, program, wait_command
from lichhook.claude_code.mirror import MirrorError, SessionWaits, load_session, store_problem
from lichhook.diskio import read_regular

MAX_STRIKES = 3
MAX_WAITS_SHOWN = 10
MAX_WHAT = 200


def counter_file(folder: str, session: str) -> str:
    """``session`` must have passed ``wait_session_id``."""
    return os.path.join(folder, "stops", session + ".count")


def stop(session: str, folder: Folder) -> Outcome:
    outcome = Outcome()
    if not os.path.isdir(folder.path):
        if folder.explicit:
            outcome.notice(f"{let_through('stop')}: the waits folder {folder.path} does not exist")
        # The default folder appears with the first wait ever recorded: nothing holds yet.
        return outcome
    try:
        own = load_session(folder.path, session)
    except MirrorError as exc:
        outcome.notice(f"{let_through('stop')}: {exc}")
        return outcome
    holding = [w for w in own.waits if w.holds_turn] if own else []
    counter = counter_file(folder.path, session)
    if own is None or not holding:
        reset_counter(counter)
        return outcome
    broken = store_problem(folder.path)
    if broken:
        # Every command the advice would give is refused until the store is mended: say
        # so to the operator, who can mend it, rather than hold the turn over it.
        reset_counter(counter)
        outcome.notice(f"{let_through('stop')}, although {len(holding)} wait(s) hold it, because "
                       f"the wait commands cannot mark or close them: {clean(broken, 600)}")
        return outcome
    strikes = read_counter(counter)
    if strikes >= MAX_STRIKES:
        words = (f"{let_through('stop')} after {strikes} refusals in a row, although "
                 f"{len(holding)} wait(s) still hold it: "
                 + ", ".join(w.id for w in holding[:MAX_WAITS_SHOWN]))
        trouble = reset_counter(counter)
        if trouble:
            words += f" (and could not reset {counter}: {trouble})"
        outcome.notice(words)
        return outcome
    trouble = write_counter(counter, strikes + 1)
    if trouble:
        outcome.notice(f"{let_through('stop')}: cannot count refusals in {counter} ({trouble}), "
                       "and without that count a wait could hold the turn forever")
        return outcome
    outcome.out = {"decision": "block", "reason": advice(own, holding, session, folder, program())}
    return outcome


def advice(own: SessionWaits, holding: list, session: str, folder: Folder, prefix: str) -> str:
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


def read_counter(path: str) -> int:
    """Refusals in a row so far; anything unreadable counts as none (the write will tell)."""
    try:
        value = int((read_regular(path, 32) or b"0").strip() or b"0")
    except (OSError, ValueError):
        return 0
    return max(0, value)


def write_counter(path: str, value: int) -> str | None:
    """Write ``value`` atomically; return why it failed, or None."""
    from lichhook.diskio import write_atomic

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomic(path, b"%d\n" % value)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None


def reset_counter(path: str) -> str | None:
    """Forget the refusals; return why that failed, or None."""
    try:
        os.remove(path)
        return None
    except FileNotFoundError:
        return None
    except OSError as exc:
        first = f"{type(exc).__name__}: {exc.strerror or exc}"
    if os.path.isfile(path) and write_counter(path, 0) is None:
        return None
    return first
