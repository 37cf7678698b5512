"""The SessionStart hook: tell the model its session id, its waits and the names it may adopt.

No tool ever tells a session its own id; this hook's payload is the only place it appears.
After Claude Code's ``/clear`` the id is new and nothing links it to the old one, so the
context given in the command voice also lists every other name on the node with open
waits, each with the exact adopt call that moves that name (and its waits) to this session.
"""

from lichhook.waits.hooks.text import Folder, Outcome, Voice, clean, instructions, powershell_note, program, wait_command
from lichhook.waits.view import FolderRefused, MirrorError, SessionWaits, Wait, for_hooks

# Claude Code cuts hook output at 10,000 characters; stay well inside it, whatever the
# number of waits and names and however long the paths in the commands are.
MAX_WAITS_SHOWN = 15
MAX_NAMES_SHOWN = 12
WAITS_BUDGET = 3000
NAMES_BUDGET = 3500
MAX_WHAT = 160
MAX_CONTEXT = 9000


def session_start(session: str, payload: dict, folder: "Folder", voice: "Voice") -> "Outcome":
    outcome = Outcome()
    own, names, problems = read_records(folder, session, outcome, with_index=voice.commands)
    prefix = program() if voice.commands else ""
    text = context(session, payload.get("source"), own, names, folder, prefix, problems, voice)
    outcome.out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return outcome


def read_records(folder: "Folder", session: str, outcome: "Outcome", with_index: bool = True) -> tuple:
    """(the session's own waits or None, the index's names, the problems met), read from
    the mirrors only; each problem is also noticed on ``outcome`` for the operator."""
    own = None
    names: list = []
    problems: list = []
    broken = None
    try:
        waits = for_hooks(folder.path, folder.explicit)
    except (FolderRefused, OSError) as exc:
        waits = None
        problems.append(str(exc))
    if waits is not None:
        with waits:
            try:
                own = waits.session_waits(session)
            except (MirrorError, FolderRefused) as exc:
                problems.append(str(exc))
            try:
                names, skipped = waits.index_names() if with_index else ([], 0)
                if skipped:
                    problems.append(f"{waits.index_path()} has {skipped} "
                                    + ("entry" if skipped == 1 else "entries")
                                    + " with a bad name, session or count, left out")
            except (MirrorError, FolderRefused) as exc:
                problems.append(str(exc))
            broken = waits.store_refusal()
    for problem in problems:
        outcome.notice(f"lichhook SessionStart hook could not read all the waits records: {problem}")
    if broken:
        broken = "the wait commands are refused until the waits store is mended: " + broken
        outcome.notice(f"lichhook SessionStart hook: {broken}")
        problems.append(broken)
    return own, names, problems


def context(session: str, source: object, own: "SessionWaits | None", names: list, folder: "Folder",
            prefix: str, problems: list, voice: "Voice") -> str:
    """The additionalContext text; pure, so its size bounds are easy to hold."""
    name = own.name if own else None
    waits = own.waits if own else []
    by = name or "WHO"
    lines = instructions(session, name, voice, wait_command(prefix, "<op>", by, session, folder))
    windows_note = powershell_note(folder, "here") if voice.commands else None
    if windows_note:
        lines.append(windows_note)
    if problems:
        lines.append("(Trouble with the waits records: "
                     + clean("; ".join(problems), 400) + ")")
    if waits:
        lines.append("")
        lines.append(f"Your open waits ({len(waits)}):")
        shown = fit([describe_wait(w, voice) for w in waits[:MAX_WAITS_SHOWN]], WAITS_BUDGET)
        lines += shown
        if len(waits) > len(shown):
            every = wait_command(prefix, "list", by, session, folder) if voice.commands else "op list"
            lines.append(f"... and {len(waits) - len(shown)} more; {every} shows them all.")
    others = [n for n in names if n.session != session and n.name != name]
    if others:
        others.sort(key=lambda n: n.name)
        lines.append("")
        intro = "Other names on this node with open waits."
        if source == "clear":
            intro = ("This session began with /clear, so its id is new and its earlier waits "
                     "stayed under the name it used before. Names on this node with open waits.")
        elif source == "fork":
            intro = ("This session is a fork, with an id of its own; the waits it started with "
                     "stay with the session it was forked from, which may still be running: adopt "
                     "its name only if it is not. Names on this node with open waits.")
        lines.append(intro + " If one is yours, run its adopt call as printed to take it and its "
                     "waits over:")
        shown = fit([f"- {n.name}: {n.open} open, held by session {n.session}: "
                     + wait_command(prefix, "adopt", n.name, session, folder)
                     for n in others[:MAX_NAMES_SHOWN]], NAMES_BUDGET)
        lines += shown
        if len(others) > len(shown):
            lines.append(f"... and {len(others) - len(shown)} more names.")
    text = "\n".join(lines)
    if len(text) > MAX_CONTEXT:
        text = text[: MAX_CONTEXT - 40].rsplit("\n", 1)[0] + "\n... (cut to stay short)"
    return text


def fit(lines: list, budget: int) -> list:
    """The leading ``lines`` whose total length stays within ``budget`` (at least one)."""
    kept: list = []
    used = 0
    for line in lines:
        used += len(line) + 1
        if kept and used > budget:
            break
        kept.append(line)
    return kept


def describe_wait(w: "Wait", voice: "Voice") -> str:
    family = f" [family {clean(w.family, 80)}]" if w.family else ""
    if w.watched and w.said:
        state = "watched, said"
    elif w.watched:
        state = "watched"
    elif w.said:
        state = "said"
    elif voice.commands:
        state = "holds your turn: neither watched nor said"
    else:
        state = "open: neither watched nor said"
    since = f", since {clean(w.created, 40)}" if w.created else ""
    return f"- {w.id}: {clean(w.what, MAX_WHAT)}{family} ({state}{since})"
