"""The binding rules and the ops, as pure changes to the store's state.

The state is the plain JSON-able dict kept in ``store.json``; its shape is set out, and
checked, in ``lichhook.waits.folder``.

``apply`` either changes the state and returns the op's result, or raises ``Refused`` having
changed nothing, so a refused op never needs its state written back.
"""

OPS = ("add", "list", "watched", "said", "done", "adopt")
# The arguments each op takes besides by and session (the others take none), of which
# those in REQUIRED must be given, and the bounds of their text in characters. The
# command line's usage, the MCP tool's schema and lichhook.waits.fields take them from
# here; the hooks' instructions, which do without this module, spell them once more
# (tests/test_waits.py holds them to this table).
TAKES = {"add": ("what", "family"), "watched": ("id", "note"), "said": ("id", "note"), "done": ("id",)}
ARGUMENTS = tuple(dict.fromkeys(a for taken in TAKES.values() for a in taken))  # every argument in TAKES, in order
REQUIRED = ("what", "id")
WHAT_MAX = 500
NOTE_MAX = 500
FAMILY_MAX = 100
# How many earlier holders of a name are remembered, to tell each that it was adopted.
DISPLACED_KEPT = 20

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Tuple


class Refused(Exception):
    """An op the rules refuse: ``sentence`` says why and what to do; ``extra`` adds fields."""

    def __init__(self, sentence: str, extra: "dict | None" = None) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.extra = extra or {}


def bound_sessions(state: dict) -> dict:
    """session id -> the name it holds, for every bound name."""
    return {entry["session"]: name for name, entry in state["names"].items() if entry["session"]}


def _mismatch(name: str, entry: dict, session: str) -> "Refused":
    holder = entry["session"]
    adopted = None
    for record in entry["displaced"]:
        if record["session"] == session:
            adopted = record  # the last one wins: the latest time this session lost the name
    if adopted is not None:
        now_held = "" if adopted["by"] == holder else f" (it is now held by session {holder!r})"
        sentence = (
            f"name {name!r} was adopted by session {adopted['by']!r} at {adopted['at']}, so this "
            f"session ({session!r}) no longer holds it{now_held}; stop keeping waits under it here, "
            f"or take it back with the adopt op (by {name!r}, session {session!r}) if this session "
            "is its rightful owner"
        )
        return Refused(sentence, {"held_by": holder, "adopted_by": adopted["by"], "adopted_at": adopted["at"]})
    sentence = (
        f"name {name!r} is held by session {holder!r}, not by this session ({session!r}); if this "
        f"session is the same agent after /clear or a restart, take the name over with the adopt op "
        f"(by {name!r}, session {session!r}), otherwise use another name"
    )
    return Refused(sentence, {"held_by": holder})


def _find(entry: "dict | None", wait_id: str, name: str) -> int:
    for i, wait in enumerate(entry["waits"] if entry else ()):
        if wait["id"] == wait_id:
            return i
    raise Refused(
        f"name {name!r} has no open wait {wait_id!r} (it may be done already); "
        "the list op shows the open waits and their ids"
    )


def apply(
    state: dict,
    op: str,
    name: str,
    session: str,
    now: str,
    what: "str | None" = None,
    family: "str | None" = None,
    id: "str | None" = None,  # noqa: A002 - the argument is named as on the command line
    note: "str | None" = None,
) -> "Tuple[dict, bool]":
    """Run ``op`` for ``name`` from ``session`` at time ``now``.

    Returns ``(result, changed)``: the op's own fields (the caller adds ok, op, name and
    session) and whether the state changed. Raises Refused, with the state untouched.
    """
    names = state["names"]
    entry = names.get(name)
    previous = None
    take = False
    if entry is not None and entry["session"] == session:
        pass
    elif entry is not None and entry["session"] is not None and op != "adopt":
        raise _mismatch(name, entry, session)
    else:
        take = True
        previous = entry["session"] if entry is not None else None

    release = None
    if take:
        other = bound_sessions(state).get(session)
        if other is not None:
            open_count = len(names[other]["waits"])
            if open_count:
                raise Refused(
                    f"session {session!r} already holds name {other!r} with {open_count} open "
                    f"wait(s), and a session keeps one name; call with by {other!r}, or close "
                    "those waits with the done op before taking another name",
                    {"holds": other},
                )
            release = other

    index = None
    if op in ("watched", "said", "done"):
        index = _find(entry, id or "", name)

    # Every check passed: from here on the state changes and nothing refuses.
    changed = take
    if release is not None:
        names[release]["session"] = None
        names[release]["since"] = None
    if take:
        if entry is None:
            entry = names[name] = {"session": session, "since": now, "next": 1, "waits": [], "displaced": []}
        else:
            if previous is not None:
                kept = [r for r in entry["displaced"] if r["session"] != session]
                kept.append({"session": previous, "by": session, "at": now})
                entry["displaced"] = kept[-DISPLACED_KEPT:]
            entry["session"] = session
            entry["since"] = now

    result: dict = {}
    if op == "add":
        wait = {
            "id": f"w{entry['next']}",
            "what": what,
            "family": family,
            "created": now,
            "watched": None,
            "said": None,
        }
        entry["next"] += 1
        entry["waits"].append(wait)
        result = {"wait": wait, "open": len(entry["waits"])}
        changed = True
    elif op == "list":
        result = {"waits": entry["waits"]}
    elif op in ("watched", "said"):
        wait = entry["waits"][index]  # type: ignore[index]
        wait[op] = {"at": now, "note": note}
        result = {"wait": wait}
        changed = True
    elif op == "done":
        wait = entry["waits"].pop(index)  # type: ignore[arg-type]
        result = {"wait": wait, "open": len(entry["waits"])}
        changed = True
    elif op == "adopt":
        result = {"previous_session": previous, "waits": entry["waits"]}
    if take and op != "adopt" and previous is None:
        result["claimed"] = True
    if release is not None:
        result["released"] = release
    return result, changed
