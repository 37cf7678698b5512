"""Checks for the per-op arguments of a wait: what, family, id, note. Pure.

Each check returns the value to store, or raises BadId with a sentence naming the argument
and the fix. An empty ``family`` or ``note`` counts as absent: tool callers often send ""
for an optional field.
"""

from lichhook.ids import BadId, is_control, wait_id_problem
from lichhook.waits.rules import FAMILY_MAX, NOTE_MAX, TAKES, WHAT_MAX

_FAMILY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/")


def _text(value: object, what: str, max_len: int) -> str:
    if not isinstance(value, str):
        raise BadId(f"{what} must be a string")
    if len(value) > max_len:
        raise BadId(f"{what} is {len(value)} characters long; at most {max_len} are allowed, so shorten it")
    for ch in value:
        if is_control(ch) and ch not in "\t\n":
            raise BadId(f"{what} contains control character U+{ord(ch):04X}; use plain text")
        if "\ud800" <= ch <= "\udfff":
            # A lone surrogate: a JSON escape such as \ud800, or a byte the command line
            # could not decode. No UTF-8 file can hold it.
            raise BadId(f"{what} contains U+{ord(ch):04X}, half of a character, not text; "
                        "send it as UTF-8 text")
    return value


def check_what(value: object) -> str:
    """``what`` for add: 1-WHAT_MAX characters of text, not blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise BadId(f"add needs what: 1-{WHAT_MAX} characters saying what this session waits for")
    return _text(value, "what", WHAT_MAX)


def check_note(value: object) -> "str | None":
    """An optional note for watched and said: up to NOTE_MAX characters."""
    if value is None or value == "":
        return None
    return _text(value, "note", NOTE_MAX)


def check_family(value: object) -> "str | None":
    """An optional event family such as ``ci.build``: letters, digits and ``. _ - : /``."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadId("family must be a string such as 'ci.build'")
    if len(value) > FAMILY_MAX or any(c not in _FAMILY_CHARS for c in value):
        raise BadId(
            f"family {value[:40]!r} is not an event family; use up to {FAMILY_MAX} letters, digits, "
            "'.', '_', '-', ':' or '/', such as 'ci.build', or leave it out"
        )
    return value


def check_id(value: object, op: str) -> str:
    """A wait id such as ``w3``, required by watched, said and done."""
    if value is None or value == "":
        raise BadId(f"{op} needs id: the id of one of the name's open waits, such as 'w1' (list shows them)")
    problem = wait_id_problem(value)
    if problem:
        raise BadId(f"{problem}; wait ids look like 'w1' (list shows the open waits)")
    return value  # type: ignore[return-value]


def checked(op: str, given: dict) -> dict:
    """The arguments ``op`` takes (``rules.TAKES``) from ``given``, each checked, in that
    order; the arguments it does not take are ignored."""
    checks = {"what": check_what, "family": check_family, "note": check_note,
              "id": lambda value: check_id(value, op)}
    return {argument: checks[argument](given.get(argument)) for argument in TAKES[op]}
