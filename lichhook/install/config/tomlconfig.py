"""Codex's ``config.toml``: lichhook's MCP server, owned by its key ``mcp_servers.lichhook``.

Codex keeps its own state in this file and rewrites it (``codex mcp add`` reformats the
``mcp_servers`` tables; trusting a hook appends ``[hooks.state."..."]``). So lichhook
owns no block of lines, only its table, found by key wherever it stands and in whatever
shape Codex left it (with ``[mcp_servers.lichhook.env]`` split out, say). The file is
edited with tomlkit, a TOML library that keeps comments, order and formatting (vendored
into the archive, pinned by hash, imported only by install, uninstall and doctor); its
plain values, which every edit compares, are read by ``tomllib`` (``tomli`` before
Python 3.11, vendored beside tomlkit), some fifteen times faster. The edits:

- **add**: the table, rendered by tomlkit, is appended after one blank line, in the
  file's line endings (and without a final newline when the file has none);
- **update**: only ``command`` and the ``args`` items up to ``mcp`` (the interpreter's
  options and the archive) are set, through tomlkit, so comments, other keys (``env``)
  and arguments after ours stay;
- **remove**: tomlkit gives the text of the table and of its sub-tables; exactly those
  lines go, except comment and blank lines at their end, which belong to what follows,
  and the blank line lichhook added before the table. Codex's trust records of the hooks
  uninstall takes out (``[hooks.state."<key>"]``, keys from ``codextrust``) go the same way.

Every result is parsed again and must hold exactly the tables and values expected,
or nothing is written. A byte order mark is kept. The comment markers an earlier release
put around its block are dropped (they are lichhook's), whatever Codex put between them.
"""

from __future__ import annotations

import re
from typing import Any, Callable, List, Optional, Sequence, Tuple

from lichhook.install.config.entries import archive_index, command_strings
from lichhook.install.config.textblock import appended, decode, newline_of
from lichhook.install.errors import ConfigError
from lichhook.install.copies.target import Target

try:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    from tomlkit.items import Table
except ImportError:  # a source tree run without its packages: install stops before any TOML, naming the fix
    tomlkit = TOMLKitError = Table = None  # type: ignore[assignment,misc]

# The fast reader of plain values: the standard library's tomllib from Python 3.11 on, and
# tomli, the package tomllib grew from, before it (a dependency for those Pythons only;
# the release archive carries it for all). With neither (an archive assembled from a
# newer Python's packages, run by 3.9 or 3.10), tomlkit reads alone: right, but slow.
try:
    import tomllib  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
    except ImportError:
        tomllib = None

KEY = ("mcp_servers", "lichhook")
LEGACY_BEGIN = "# >>> lichhook: MCP server (added by 'lichhook install codex'; 'lichhook uninstall codex' removes it) >>>"
LEGACY_END = "# <<< lichhook <<<"


def parse(text: str, path: str) -> Any:
    """The tomlkit document of ``text``; refuses invalid TOML naming the file."""
    try:
        return tomlkit.parse(text)
    except (TOMLKitError, ValueError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it, then run again. It was left untouched.")
    except RecursionError:
        raise ConfigError(f"{path} nests values too deeply for lichhook's TOML reader; flatten them, then run again. "
                     "It was left untouched.")


def _value(text: str) -> Optional[dict]:
    """The plain value of ``text`` (fit to compare, ``plain``), or None when it is not
    valid TOML. Read by ``tomllib`` (or ``tomli`` before Python 3.11): about fifteen times
    faster than tomlkit, whose reading of a config with thousands of tables takes seconds,
    and every edit compares values a few times. What that reader refuses is asked of
    tomlkit, so no file reads as invalid for the switch."""
    if tomllib is not None:
        try:
            return _comparable(tomllib.loads(text))
        except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError
            pass

    try:
        return plain(tomlkit.parse(text))
    except (TOMLKitError, ValueError, RecursionError):
        return None


def read_value(text: str, path: str) -> Any:
    """The plain value of ``text``, fit to compare; refuses invalid TOML naming the file
    (tomlkit's reading says where)."""
    found = _value(text)
    if found is None:
        parse(text, path)  # raises, with tomlkit's account of the place
        raise ConfigError(f"{path} is not valid TOML; fix it, then run again. It was left untouched.")
    return found


class _NaN:
    """Stands for a TOML ``nan`` in a value lichhook compares: ``nan != nan`` would make
    every file holding one look changed by any edit."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NaN)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "nan"


def _comparable(value: Any) -> Any:
    """``value`` (a plain TOML value) with every float NaN as a ``_NaN``."""
    if isinstance(value, float) and value != value:
        return _NaN()
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def plain(doc: Any) -> Any:
    """The plain value of a tomlkit document, fit to compare (``_comparable``)."""
    return _comparable(doc.unwrap())


def _at(value: Any, key: Tuple[str, ...]) -> Any:
    """What a plain value holds at the key path ``key`` (None where a step is missing or
    not a table)."""
    for name in key:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _deleted(value: dict, key: Tuple[str, ...]) -> dict:
    """A copy of the plain ``value`` without the key path ``key``, which it holds."""
    if len(key) == 1:
        return {k: v for k, v in value.items() if k != key[0]}
    return dict(value, **{key[0]: _deleted(value[key[0]], key[1:])})


def _pruned(value: Optional[dict], tables: Tuple[str, ...]) -> Optional[dict]:
    """``value`` without the table ``tables`` when it is empty, nor the tables above it
    that this leaves empty: whether such a table's header stands or not, Codex reads
    both alike."""
    for depth in range(len(tables), 0, -1):
        if value is None or _at(value, tables[:depth]) != {}:
            break
        value = _deleted(value, tables[:depth])
    return value


def _wanted(target: Target) -> dict:
    python, *args = target.server().argv("mcp")
    return {"command": python, "args": args}


def is_ours(entry: Any, target: Target) -> bool:
    return isinstance(entry, dict) and target.owns(command_strings(entry))


# -- markers of an earlier release -----------------------------------------------------------


def drop_legacy_markers(text: str) -> str:
    """``text`` without the comment lines an earlier release put around its block, when
    removing them changes no value (a marker inside a multi-line string stays)."""
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if line.rstrip("\r\n").rstrip() not in (LEGACY_BEGIN, LEGACY_END)]
    if len(kept) == len(lines):
        return text
    candidate = "".join(kept)
    before = _value(text)
    return candidate if before is not None and _value(candidate) == before else text


# -- where the table stands ------------------------------------------------------------------


def _header_tables(container: Any, path: tuple = ()) -> list:
    """(key path, table) of every table in the document, in order, sub-tables included."""
    out = []
    for key, item in container.body:
        if key is None or not isinstance(item, Table):
            continue
        here = (*path, key.key)
        out.append((here, item))
        out.extend(_header_tables(item.value, here))
    return out


def _table_text(table: Any) -> Optional[str]:
    """The text of a ``[header]`` table as it stands in the file: its header line, its
    keys and values, and the sub-tables that follow it."""
    if table.display_name is None:
        return None  # defined by dotted keys or as a super table: no header line of its own
    trivia = table.trivia
    return f"{trivia.indent}[{table.display_name}]{trivia.comment_ws}{trivia.comment}{trivia.trail}" + table.as_string()


def spans(doc: Any, text: str, key: Tuple[str, ...] = KEY) -> Optional[List[Tuple[int, int]]]:
    """Where the lines of the table ``key`` (``[mcp_servers.lichhook]``) and its
    sub-tables stand in ``text``, or None when the table is not written with headers
    (dotted keys, an inline table) or cannot be placed for certain."""
    found = []
    for path, table in _header_tables(doc):
        if path[:len(key)] != key:
            continue
        piece = _table_text(table)
        if piece is None:
            if path == key:
                return None
            continue
        if text.count(piece) != 1:
            return None
        start = text.index(piece)
        found.append((start, start + len(piece)))
    found.sort()
    merged: list = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged or None


def _cut(text: str, found: List[Tuple[int, int]]) -> str:
    """``text`` without the table lines in each [start, end) of ``found``: comment and
    blank lines at the end stay (they lead into what follows), and so does the file's last
    newline convention; one blank line goes where two would meet."""
    newline = newline_of(text)
    for start, end in reversed(found):
        lines = text[start:end].splitlines(keepends=True)
        while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
            lines.pop()
        removed = "".join(lines)
        before, after = text[:start], text[start + len(removed):]
        if before.endswith(newline * 2) and (after.startswith(newline) or not after):
            before = before[:-len(newline)]
        if not after and not removed.endswith("\n") and before.endswith(newline):
            before = before[:-len(newline)]
        text = before + after
    return text


# -- the three operations ----------------------------------------------------------------------


def render(target: Target, newline: str) -> str:
    """lichhook's table as tomlkit writes it, in the file's line endings."""
    text = tomlkit.dumps({KEY[0]: {KEY[1]: _wanted(target)}})
    return text.replace("\n", newline)


def _encoded(text: str, path: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"cannot write into {path}: a path to register is not valid text (it holds an undecodable "
                     "byte). It was left untouched.")


def add(raw: Optional[bytes], path: str, target: Target, notes: List[str]) -> Optional[bytes]:
    """The config with lichhook's server added or brought up to date."""
    target = target.server()  # a long-running server runs the complete archive
    bom, original = decode(raw, path) if raw is not None else (b"", "")
    text = drop_legacy_markers(original)
    value = read_value(text, path)
    servers, entry = value.get(KEY[0]), _at(value, KEY)
    wanted = _wanted(target)
    new: Optional[str] = None
    if servers is not None and not isinstance(servers, dict):
        notes.append(f"{path} defines mcp_servers as something other than a table; add [mcp_servers.lichhook] "
                     "by hand (see docs/install.md)")
    elif entry is None:
        new = _appended(text, target, value, wanted)
        if new is None:
            notes.append(f"{path} defines mcp_servers in a way lichhook cannot add to safely; add "
                         "[mcp_servers.lichhook] by hand (see docs/install.md)")
    elif not is_ours(entry, target):
        notes.append(f"{path} already has an MCP server named lichhook that does not run {target.archive}; left "
                     "it as it is. Remove or rename it, then install again, to register lichhook's.")
    else:
        new = _updated(text, path, target, entry, notes)
    result = new if new is not None else text
    if result == original:
        return raw
    return bom + _encoded(result, path)


def _appended(text: str, target: Target, value: dict, wanted: dict) -> Optional[str]:
    candidate = appended(text, render(target, newline_of(text)))
    expected = dict(value)
    expected[KEY[0]] = dict(value.get(KEY[0]) or {}, **{KEY[1]: wanted})
    # A header cannot extend mcp_servers written as an inline table (tomlkit would also
    # respace that line), so then the user is asked to add the server by hand.
    return candidate if _value(candidate) == expected else None


def _updated(text: str, path: str, target: Target, entry: dict, notes: List[str]) -> Optional[str]:
    """Set lichhook's own words (command, and args up to ``mcp``); keep everything else."""
    args = entry.get("args")
    i = archive_index(args, target)
    if not (isinstance(entry.get("command"), str) and isinstance(args, list) and i is not None
            and args[i + 1:i + 2] == ["mcp"]):
        notes.append(f"left your changed [mcp_servers.lichhook] in {path} as it is: lichhook cannot tell its own "
                     "words in it. To update it, remove that table and install again.")
        return None
    wanted = _wanted(target)
    prefix = wanted["args"][:-1]  # the options and the archive
    if entry["command"] == wanted["command"] and args[:i + 1] == prefix:
        return None
    doc = parse(text, path)
    table = doc[KEY[0]][KEY[1]]
    if entry["command"] != wanted["command"]:
        table["command"] = wanted["command"]
    if args[:i + 1] != prefix:
        table["args"] = _with_prefix(table["args"], i, prefix)
    candidate = doc.as_string()
    expected_value = read_value(text, path)  # the reader _value uses: the two must agree
    expected_value[KEY[0]][KEY[1]]["command"] = wanted["command"]
    expected_value[KEY[0]][KEY[1]]["args"] = prefix + args[i + 1:]
    # Nothing outside the table may move: compare the two texts with the table cut out.
    if _value(candidate) != expected_value or _without(candidate, path) != _without(text, path):
        notes.append(f"could not update [mcp_servers.lichhook] in {path} without changing text around it; "
                     "update its command and the arguments before mcp by hand")
        return None
    return candidate


def _with_prefix(array: Any, end: int, prefix: List[str]) -> Any:
    """The tomlkit ``array`` with its items before ``end`` and the one at it (the options
    and the archive) replaced by ``prefix``, the items after it kept as written."""
    text = array.as_string()
    if "\n" not in text and "#" not in text:
        # One line: written again whole, in tomlkit's spelling of lichhook's words and
        # the user's items exactly as they stand.
        ours = tomlkit.dumps({"a": prefix}).strip()[len("a = ["):-1]
        theirs = [item.as_string() for item in list.__iter__(array)][end + 1:]
        return tomlkit.parse("a = [" + ", ".join([ours, *theirs]) + "]\n")["a"]
    # Several lines, perhaps with comments: item by item, the archive's item (and the
    # comment after it) kept in place, the options before it replaced.
    array[end] = prefix[-1]
    for _ in range(end):
        del array[0]
    for value in reversed(prefix[:-1]):
        array.insert(0, value)
    return array


def _key_word(name: str) -> str:
    """``name`` as a header spells it: bare when it can be, else a basic string."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _header_spans(text: str, key: Tuple[str, ...]) -> Optional[List[Tuple[int, int]]]:
    """Where the table ``key`` and its sub-tables stand, found by their header lines as
    Codex and lichhook write them (``[mcp_servers.lichhook]``, ``[hooks.state."..."]``),
    without reading the document; None when there is no such header. A guess: the caller
    takes it only when the values agree (a header inside a multi-line string would not)."""
    header = "[" + ".".join(_key_word(k) for k in key)
    found: List[Tuple[int, int]] = []
    at, start = 0, -1
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            ours = stripped.endswith("]") and not stripped.startswith("[[") and (
                stripped == header + "]" or stripped.startswith(header + "."))
            if start >= 0 and not ours:
                found.append((start, at))
                start = -1
            if ours and start < 0:
                start = at
        at += len(line)
    if start >= 0:
        found.append((start, at))
    return found or None


def _without(text: str, path: str, key: Tuple[str, ...] = KEY,
             accept: Optional[Callable[[str], bool]] = None) -> Optional[str]:
    """``text`` without the lines of the table ``key`` (and its sub-tables), or None when
    they cannot be placed. With ``accept``, the header lines are tried first, and that cut
    is taken when ``accept`` finds its value right: no reading of the whole document by
    tomlkit, which takes seconds for thousands of tables."""
    if accept is not None:
        quick = _header_spans(text, key)
        cut = _cut(text, quick) if quick is not None else None
        if cut is not None and accept(cut):
            return cut
    found = spans(parse(text, path), text, key)
    return _cut(text, found) if found is not None else None


def _taken_out(text: str, path: str, key: Tuple[str, ...], refusal: str) -> str:
    """``text`` without the table ``key``: exactly its lines when they can be placed, else
    (not written with headers: dotted keys, an inline table) through tomlkit, which keeps
    every other line as it stands. The result must read as the value without ``key``, or
    ConfigError says ``refusal``."""
    tables = key[:-1]
    value = _value(text)
    assert value is not None  # the callers read it
    expected = _pruned(_deleted(value, key), tables)

    def right(candidate: str) -> bool:
        return _pruned(_value(candidate), tables) == expected

    cut = _without(text, path, key, accept=right)
    if cut is None or not right(cut):
        doc = parse(text, path)
        table = doc
        for name in tables:
            table = table[name]
        del table[key[-1]]
        cut = doc.as_string()
        if not right(cut):
            raise ConfigError(refusal)
    return cut


def remove_records(text: str, path: str, keys: Sequence[str]) -> str:
    """``text`` without Codex's trust records (``[hooks.state."<key>"]``) of ``keys``:
    exactly their lines, as for the server's table; every other line stays."""
    present = _at(_value(text), ("hooks", "state")) if keys else None
    for name in keys:
        if isinstance(present, dict) and name in present:
            text = _taken_out(text, path, ("hooks", "state", name),
                              f"could not take Codex's trust record {name!r} out of {path} safely; remove its "
                              "[hooks.state] table by hand.")
    return text


def remove(raw: Optional[bytes], path: str, target: Target, created_by_lichhook: bool,
           records: Sequence[str] = ()) -> Optional[bytes]:
    """The config without lichhook's server (and without an earlier release's markers),
    and without Codex's trust records of ``records``, the keys of the hooks uninstall
    takes out. A file lichhook created and that is left blank is deleted (None)."""
    if raw is None:
        return None
    bom, original = decode(raw, path)
    text = drop_legacy_markers(original)
    value = read_value(text, path)
    if is_ours(_at(value, KEY), target):
        text = _taken_out(text, path, KEY, f"could not take [mcp_servers.lichhook] out of {path} safely; remove it "
                                           "by hand.")
    text = remove_records(text, path, records)
    if text == original:
        return raw
    if not text.strip() and created_by_lichhook:
        return None
    return bom + _encoded(text, path)


def registration(raw: bytes, path: str, target: Target) -> Optional[tuple]:
    """(command text, python, archive, ours, additions) of ``mcp_servers.lichhook``, or
    None when absent. Raises ConfigError when the file cannot be read as TOML."""
    target = target.server()
    bom, text = decode(raw, path)
    entry = _at(read_value(text, path), KEY)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        return f"{entry!r}", None, None, False, []
    command, args = entry.get("command"), entry.get("args")
    args = args if isinstance(args, list) else []
    python = command if isinstance(command, str) else None
    i = archive_index(args, target)
    if i is None:  # another lichhook archive: its first word that is not an option
        i = next((k for k, a in enumerate(args) if not (isinstance(a, str) and a.startswith("-"))), len(args))
    archive = args[i] if i < len(args) and isinstance(args[i], str) else None
    ours = is_ours(entry, target)
    additions = []
    if ours:
        if args[i + 2:]:
            additions.append("arguments after lichhook's: " + " ".join(str(a) for a in args[i + 2:]))
        additions.extend(f"{key!r} added" for key in entry if key not in ("command", "args"))
    text_of = " ".join(str(p) for p in [command, *args])
    return text_of, python, archive, ours, additions
