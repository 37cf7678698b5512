"""Pure checks for the ids the waits module stores and turns into file names, on every
OS: ``wait_session_id``, ``wait_who``, ``wait_node``, ``wait_id_problem``. Nothing here
touches the disk.

(The harness session ids lichhook sends lich are checked by the contracts:
``lichhook.contracts.provider_session_id_problem``.)
"""

_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_WAIT_ID_CHARS = _ASCII_LETTERS | _DIGITS | frozenset("_-.")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz") | _DIGITS | frozenset("-")

# Windows opens a device, not a file, for these names, with or without an extension.
WINDOWS_DEVICE_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{i}" for i in range(1, 10)]
    + [f"LPT{i}" for i in range(1, 10)]
    + ["COM\u00b9", "COM\u00b2", "COM\u00b3", "LPT\u00b9", "LPT\u00b2", "LPT\u00b3"]
)


def is_control(ch: str) -> bool:
    """C0 and C1 control characters and DEL."""
    o = ord(ch)
    return o < 0x20 or 0x7F <= o < 0xA0


class BadId(ValueError):
    """An id or name that the waits module refuses; the message says what and why."""


def _file_safe_problem(value: object, what: str, max_len: int) -> "str | None":
    if not isinstance(value, str):
        return f"{what} must be a string"
    if not value.strip():
        return f"{what} is blank"
    if len(value) > max_len:
        return f"{what} is {len(value)} characters long; at most {max_len} are allowed"
    if not _WAIT_ID_CHARS.issuperset(value):  # one C call; the set below only to word the refusal
        bad = sorted({c for c in value if c not in _WAIT_ID_CHARS})
        shown = " ".join(repr(c) for c in bad[:5])
        return f"{what} {value[:40]!r} contains {shown}; only letters, digits, '_', '-' and '.' are allowed"
    if value[0] == ".":
        return f"{what} {value!r} starts with '.'"
    if ".." in value:
        return f"{what} {value!r} contains '..'"
    if value.split(".", 1)[0].upper() in WINDOWS_DEVICE_NAMES:
        return f"{what} {value!r} is a Windows device name"
    return None


def wait_session_id(value: object) -> str:
    """The session id ``value`` stands for, in lower case, if it is safe to use as a file
    name on every OS.

    1-128 ASCII letters, digits, ``_``, ``-`` and ``.``; not starting with ``.``; no
    ``..``; not a Windows device name such as ``CON`` or ``nul.json``. Raises BadId.

    Case is folded, not kept: Windows (NTFS) and macOS (APFS) by default see
    ``sessions/ABC.json`` and ``sessions/abc.json`` as one file, so two ids differing only
    in case cannot be kept apart there, and the store must behave the same on every OS.
    Folding, rather than refusing capitals, fits the ids that arrive: harnesses use UUIDs,
    which are case-insensitive by their standard (RFC 9562), so ``ABC...`` and ``abc...``
    are one session however a tool spelled it.
    """
    problem = _file_safe_problem(value, "session id", 128)
    if problem:
        raise BadId(problem + "; pass the session id your SessionStart hook gave you")
    assert isinstance(value, str)  # _file_safe_problem refuses anything else
    return value.lower()


def wait_who(value: object) -> str:
    """Return ``value`` if it is a valid caller name (the ``who`` of ``who@node``)."""
    problem = _file_safe_problem(value, "name", 64)
    if problem:
        raise BadId(problem + "; use a short name such as 'reviewer' or 'reviewer@myhost'")
    return value  # type: ignore[return-value]


def wait_node(value: object) -> str:
    """Return ``value`` lower-cased if it is a valid host name (the ``node`` of ``who@node``)."""
    if not isinstance(value, str) or not value.strip():
        raise BadId("node is blank; use a host name such as 'myhost' or set LICHHOOK_NODE")
    node = value.lower()
    if len(node) > 253:
        raise BadId(f"node is {len(node)} characters long; a host name has at most 253")
    for label in node.split("."):
        if (not 1 <= len(label) <= 63 or label[0] == "-" or label[-1] == "-"
                or any(c not in _HOST_CHARS for c in label)):
            raise BadId(f"node {value[:64]!r} is not a host name (labels of 1-63 letters, digits, '-')")
    if node.split(".", 1)[0].upper() in WINDOWS_DEVICE_NAMES:
        raise BadId(f"node {value!r} is a Windows device name")
    return node


def wait_id_problem(value: object) -> "str | None":
    """Why ``value`` is not a wait id (``w`` and a number from 1, such as ``w3``), or None."""
    if not isinstance(value, str):
        return f"id of type {type(value).__name__} is not a wait id"
    if (len(value) < 2 or len(value) > 20 or value[0] != "w" or value[1] == "0"
            or any(c not in _DIGITS for c in value[1:])):
        return f"id {value[:40]!r} is not a wait id"
    return None
