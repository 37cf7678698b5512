"""Hostile input the tests feed lichhook: ids a file name or lich must never take, the
pieces generated ids are built from, and odd ids that are legal and must arrive intact."""

from __future__ import annotations

# Ids that no check guarding a file name may accept: traversal, separators, absolute
# paths, Windows device names, globs, control and shell characters, blanks, non-ASCII,
# too long. Every one is also a string a JSON payload can carry.
FILE_UNSAFE_IDS = [
    "", " ", "   ", "..", ".", ".hidden", "a..b",
    "../../x", "../../escape", "../victim/planted", "sessions/../../escape", "..\\..\\escape",
    "a/b", "a\\b", "/tmp/lichhook-abs-escape",
    "CON", "con.json", "Nul", "nul.json", "nul.txt", "com1", "COM1.txt", "lpt9",
    "*", "w?", "a?", "[x]", "[a]",
    "id\nwith-newline", "a\nb", "tab\there", "a b",
    "~", "$HOME", "`id`", "\u00e9", "\u00e9t\u00e9",
    "x" * 129,
]
# A few of them, for the tests that start a process per id.
QUICK_FILE_UNSAFE_IDS = ["../../escape", "../victim/planted", "..", "a\\b", "/tmp/lichhook-abs-escape", "CON", "",
                         "id\nwith-newline"]
# Values a JSON payload can put where an id belongs that are not strings at all.
NOT_STRINGS = [None, 7, 42, ["a"], {"a": 1}]

# Pieces an attacker (or a confused harness) would put in an id; property tests join them.
FRAGMENTS = [
    "..", ".", "/", "\\", "*", "?", "[", "]", "\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85",
    "\x9f", "\u2028", "\ufeff", "\ud800", "\udcff", "CON", "nul", "COM1", "LPT\u00b9", "~", "%2e%2e",
    "%2f", "\uff0f", "\uff0e\uff0e", "C:", "\\\\?\\", "..\\", "../", "'", '"', "\u00e9", "\U0001f600", " ", "a",
    "Z", "0", "-", "_", ":", "$", "`",
]

# Odd ids lich takes as opaque text: each must reach it exactly as the harness sent it.
ODD_LEGAL_IDS = [
    'q"uo"te', "it's", "\u00fcn\u00efc\u00f8d\u00e9-\u0438\u0434-\u8b58\u5225\u5b50",
    "emoji-\U0001f600-\U0001d54f", "spaces are fine", "<script>&amp;",
    "%2e%2e%2f", "\uff0f\uff0e\uff0e",  # encoded or full-width look-alikes are opaque text to lich
]
