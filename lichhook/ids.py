"""Pure checks for every id that reaches a path, a URL or lich.

Nothing here touches the disk. Two families:
- ``provider_session_id_problem``: lich's own rule for the id in a session-start report
  (``lich_id_problem``), no control character, and valid Unicode;
- ``wait_session_id`` (and ``wait_who``, ``wait_node``): the stricter rule for ids the
  waits module turns into file names, on every OS.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

# lich's opaqueID refuses these, and ".." anywhere (lich internal/terminal/transport.go).
_LICH_FORBIDDEN = frozenset("/\\*?[]")

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


def lich_id_problem(value: object) -> "str | None":
    """Why lich itself would refuse ``value`` as a ``provider_session_id``, or None.

    lich's ``opaqueID``: no ``/ \\ * ? [ ]`` and no ``..``. It takes control characters,
    spaces and anything else (lichhook does not send those: provider_session_id_problem).
    """
    if not isinstance(value, str):
        return f"id is {type(value).__name__}, not a string"
    if not value:
        return "id is empty"
    if ".." in value:
        return "id contains '..'"
    for ch in value:
        if ch in _LICH_FORBIDDEN:
            return f"id contains {ch!r}"
    return None


def provider_session_id_problem(value: object) -> "str | None":
    """Why lichhook does not send ``value`` as a ``provider_session_id``, or None.

    lich's own rule, and two of lichhook's: no control character (an id that a
    terminal, a log line or a file glob would show differently from the harness), and
    valid Unicode: JSON can escape a lone surrogate (``"\\ud800"``), which lich's decoder
    turns into U+FFFD, so lich would hold an id the harness does not have.
    """
    problem = lich_id_problem(value)
    if problem is not None or not isinstance(value, str):
        return problem
    for ch in value:
        if is_control(ch):
            return f"id contains control character U+{ord(ch):04X}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # only a surrogate cannot be encoded
        return f"id is not valid Unicode (lone surrogate U+{ord(value[exc.start]):04X})"
    return None


class BadId(ValueError):
    """An id or name that the waits module refuses; the message says what and why."""


def _file_safe_problem(value: object, what: str, max_len: int) -> "str | None":
    if not isinstance(value, str):
        return f"{what} must be a string"
    if not value.strip():
        return f"{what} is blank"
    if len(value) > max_len:
        return f"{what} is {len(value)} characters long; at most {max_len} are allowed"
    bad = sorted({c for c in value if c not in _WAIT_ID_CHARS})
    if bad:
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
    """Return ``value`` if it is a session id safe to use as a file name on every OS.

    1-128 ASCII letters, digits, ``_``, ``-`` and ``.``; not starting with ``.``; no
    ``..``; not a Windows device name such as ``CON`` or ``nul.json``. Raises BadId.
    """
    problem = _file_safe_problem(value, "session id", 128)
    if problem:
        raise BadId(problem + "; pass the session id your SessionStart hook gave you")
    return value  # type: ignore[return-value]


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
        if not 1 <= len(label) <= 63 or label[0] == "-" or label[-1] == "-":
            raise BadId(f"node {value[:64]!r} is not a host name (labels of 1-63 letters, digits, '-')")
        if any(c not in _HOST_CHARS for c in label):
            raise BadId(f"node {value[:64]!r} is not a host name (labels of 1-63 letters, digits, '-')")
    if node.split(".", 1)[0].upper() in WINDOWS_DEVICE_NAMES:
        raise BadId(f"node {value!r} is a Windows device name")
    return node
