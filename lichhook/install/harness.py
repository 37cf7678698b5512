"""What every harness installer shares: the environment it reads, the base class, and
helpers for the two hook-list shapes (Claude-style groups and flat handler lists)."""

from __future__ import annotations

import os
import shutil
import sys

from lichhook.install import files, jsonmerge
from lichhook.install.jsonmerge import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Mapping, Optional

    from lichhook.install.files import Edit
    from lichhook.install.target import Target


class Env:
    """The environment variables and OS an install reads (tests pass their own)."""

    def __init__(self, environ: Optional[Mapping[str, str]] = None, windows: Optional[bool] = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.windows = (sys.platform == "win32") if windows is None else windows

    def get(self, name: str) -> Optional[str]:
        """The variable's value, or None when unset or blank."""
        value = self.environ.get(name, "")
        return value if value.strip() else None

    def home(self) -> str:
        """The user's home folder. Refuses a blank or relative one: configs written
        relative to wherever install happens to run would be configs nobody reads."""
        for name in (("USERPROFILE", "HOME") if self.windows else ("HOME",)):
            value = self.get(name)
            if value:
                break
        else:
            value = os.path.expanduser("~")
        if not value or not os.path.isabs(value) or value in ("/", "\\"):
            raise ConfigError(f"cannot tell your home folder (got {value!r}); set HOME"
                              f"{' or USERPROFILE' if self.windows else ''} to it and run again.")
        return value

    def config_home(self) -> str:
        """XDG_CONFIG_HOME, else ~/.config: opencode and Crush use it on every OS. A
        relative XDG_CONFIG_HOME is ignored, as the XDG spec asks."""
        value = self.get("XDG_CONFIG_HOME")
        return value if value and os.path.isabs(value) else os.path.join(self.home(), ".config")

    def which(self, program: str) -> Optional[str]:
        return shutil.which(program, path=self.environ.get("PATH", os.defpath))


class Found:
    """One lichhook registration seen in a harness's config, for ``doctor``."""

    def __init__(self, path: str, label: str, text: str, python: Optional[str], archive: Optional[str],
                 ours: bool = True) -> None:
        self.path = path
        self.label = label
        self.text = text
        self.python = python
        self.archive = archive
        self.ours = ours


class Harness:
    name = ""
    title = ""
    programs: tuple = ()  # executables whose presence on PATH means "installed"

    def __init__(self, env: Env) -> None:
        self.env = env

    def config_dirs(self) -> List[str]:
        """Folders whose existence means the harness is set up on this machine."""
        return []

    def detected(self) -> Optional[str]:
        """Why this harness counts as present (a folder or a program), or None."""
        for folder in self.config_dirs():
            if os.path.isdir(folder):
                return f"{folder} exists"
        for program in self.programs:
            found = self.env.which(program)
            if found:
                return f"{program} on PATH ({found})"
        return None

    def install(self, target: Target) -> List[Edit]:
        raise NotImplementedError

    def uninstall(self, target: Target) -> List[Edit]:
        raise NotImplementedError

    def registrations(self, target: Target) -> List[Found]:
        return []

    def notes(self, target: Target) -> List[str]:
        """Sentences to print after an install changed something."""
        return []


# -- hook entries ----------------------------------------------------------------------


def handler_text(handler: object) -> str:
    """Every command-like string of a hook handler, joined: what marks it as ours."""
    if not isinstance(handler, dict):
        return ""
    parts = [handler.get(k) for k in ("command", "commandWindows", "command_windows")]
    args = handler.get("args")
    if isinstance(args, list):
        parts.extend(args)
    return "\n".join(p for p in parts if isinstance(p, str))


def _event_list(hooks: dict, event: str, path: str) -> list:
    value = hooks.get(event, [])
    if not isinstance(value, list):
        raise ConfigError(f"{path}: hooks.{event} is not a list; fix it, then run again. It was left untouched.")
    return value


def hooks_table(data: dict, path: str, key: str = "hooks") -> dict:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key!r} is not an object; fix it, then run again. It was left untouched.")
    return value


def _group_handlers(group: object) -> list:
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return group["hooks"]
    return []


def strip_groups(groups: list, owns: Callable[[str], bool]) -> list:
    """``groups`` without lichhook's handlers; a group left with no handler goes too."""
    kept = []
    for group in groups:
        handlers = _group_handlers(group)
        mine = [h for h in handlers if owns(handler_text(h))]
        if not mine:
            kept.append(group)
            continue
        rest = [h for h in handlers if not owns(handler_text(h))]
        if rest:
            trimmed = dict(group)
            trimmed["hooks"] = rest
            kept.append(trimmed)
    return kept


def set_groups(hooks: dict, event: str, wanted: list, owns: Callable[[str], bool], path: str) -> None:
    """Make lichhook's groups under ``event`` exactly ``wanted``, leaving every other
    group where it is; nothing moves when they already are."""
    groups = _event_list(hooks, event, path)
    mine = [g for g in groups if any(owns(handler_text(h)) for h in _group_handlers(g))]
    if mine == wanted:
        return
    hooks[event] = strip_groups(groups, owns) + wanted


def remove_groups(hooks: dict, event: str, owns: Callable[[str], bool], path: str) -> None:
    if event not in hooks:
        return
    groups = _event_list(hooks, event, path)
    kept = strip_groups(groups, owns)
    if len(kept) != len(groups) or kept != groups:
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]


def set_flat(hooks: dict, event: str, wanted: list, owns: Callable[[str], bool], path: str) -> None:
    """The flat shape (Antigravity's PreInvocation, Crush): handlers directly in the list."""
    handlers = _event_list(hooks, event, path)
    mine = [h for h in handlers if owns(handler_text(h))]
    if mine == wanted:
        return
    hooks[event] = [h for h in handlers if not owns(handler_text(h))] + wanted


def remove_flat(hooks: dict, event: str, owns: Callable[[str], bool], path: str) -> None:
    if event not in hooks:
        return
    handlers = _event_list(hooks, event, path)
    kept = [h for h in handlers if not owns(handler_text(h))]
    if len(kept) != len(handlers):
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]


def drop_if_empty(data: dict, key: str, had_content: bool) -> None:
    """Remove ``data[key]`` when lichhook's removal emptied it (an empty table the user
    wrote stays)."""
    if had_content and key in data and data[key] in ({}, []):
        del data[key]


def all_handlers(data: object) -> list:
    """(event, handler) for every handler in a hooks table of either shape."""
    out: list = []
    if not isinstance(data, dict):
        return out
    for event, entries in data.items():
        if not isinstance(entries, list):
            continue
        for entry in entries:
            handlers = _group_handlers(entry) if isinstance(entry, dict) and "hooks" in entry else [entry]
            for handler in handlers:
                if isinstance(handler, dict):
                    out.append((event, handler))
    return out


# -- uninstall, MCP servers, and what doctor finds ------------------------------------


def created_by_lichhook(path: str) -> str:
    """jsonmerge's delete request when lichhook made this file (no backup of a user's
    original exists beside it), so uninstall leaves no empty file behind."""
    return "" if os.path.exists(path + files.BACKUP_SUFFIX) else "delete-if-empty"


def removal(path: str, change: Callable[[dict], object]) -> Callable[[Optional[bytes]], Optional[bytes]]:
    """An uninstall transform for a JSON config: ``change`` takes lichhook's entries out
    of the loaded data; an absent file stays absent, and a file lichhook created goes
    once nothing is left in it."""
    def transform(raw: Optional[bytes]) -> Optional[bytes]:
        if raw is None:
            return None

        def run(data: dict) -> str:
            change(data)
            return created_by_lichhook(path)
        return jsonmerge.edit(raw, path, run)

    return transform


def put_server(data: dict, path: str, table: str, server: dict) -> None:
    """``data[table]["lichhook"] = server``, leaving the table alone when it already is."""
    servers = hooks_table(data, path, table)
    if servers.get("lichhook") != server:
        servers["lichhook"] = server


def drop_server(data: dict, table: str, owns: Callable[[str], bool]) -> None:
    servers = data.get(table)
    if isinstance(servers, dict):
        had = bool(servers)
        if owns(handler_text(servers.get("lichhook"))):
            del servers["lichhook"]
        drop_if_empty(data, table, had)


def drop_hooks(data: dict, events: tuple, owns: Callable[[str], bool], path: str, flat: bool = False) -> None:
    """Take lichhook's handlers out of ``data["hooks"]`` under each event."""
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        had = bool(hooks)
        for event in events:
            (remove_flat if flat else remove_groups)(hooks, event, owns, path)
        drop_if_empty(data, "hooks", had)


def read_json_quietly(path: str) -> object:
    """The parsed file, or None (absent or broken: doctor reports it separately)."""
    try:
        raw = files.read(path)
        return jsonmerge.parse(raw, path)[0] if raw is not None else None
    except ConfigError:
        return None


def found_entry(found: list, path: str, label: str, handler: dict, target: Target) -> None:
    """Record ``handler`` when it runs this archive, or any lichhook archive."""
    text = handler_text(handler)
    ours = target.owns(text)
    if not ours and "lichhook" not in text:
        return
    python, archive = split_command(handler, target.windows)
    found.append(Found(path, label, text.replace("\n", " "), python, archive, ours))


def found_in_json(path: str, target: Target, hooks: bool = True, servers: str = "") -> List[Found]:
    """lichhook's handlers in the file's ``hooks`` table and its server in ``servers``."""
    found: list = []
    data = read_json_quietly(path)
    if not isinstance(data, dict):
        return found
    if hooks:
        for event, handler in all_handlers(data.get("hooks")):
            found_entry(found, path, event, handler, target)
    table = data.get(servers) if servers else None
    if isinstance(table, dict) and isinstance(table.get("lichhook"), dict):
        found_entry(found, path, f"{servers}.lichhook", table["lichhook"], target)
    return found


# -- reading a registered command back ------------------------------------------------


def split_command(handler: dict, windows: bool) -> tuple:
    """(python, archive) named by a handler, or (None, None) when unreadable."""
    command = handler.get("command")
    args = handler.get("args")
    if isinstance(command, str) and isinstance(args, list) and args and isinstance(args[0], str):
        return command, args[0]
    text = handler.get("commandWindows") if windows and isinstance(handler.get("commandWindows"), str) else command
    if not isinstance(text, str):
        return None, None
    return split_line(text)


def split_line(text: str) -> tuple:
    """(python, archive) from a command line lichhook wrote in any of its forms: the
    PowerShell form (``& '...' '...'``), the PowerShell-and-cmd form (bare words and
    double quotes, Windows paths), or a POSIX line."""
    from lichhook.install import quoting

    text = text.strip()
    if text.startswith("& "):
        import re

        words = [w.replace("''", "'") for w in re.findall(r"'((?:[^']|'')*)'", text[2:])]
    elif "\\" in text and "'" not in text:
        words = quoting.split_dual(text)
    else:
        import shlex

        try:
            words = shlex.split(text)
        except ValueError:
            return None, None
    if len(words) < 2:
        return None, None
    return words[0], words[1]
