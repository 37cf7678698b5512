"""The built-in harnesses: one descriptor each, and one adapter module each.

Each descriptor below is the one place that names a
harness's provider id, its adapter module (which defines ``ADAPTER``), the events it
sends with what each reports and prints, the names of its tools that change files, its
registrations and its installer. Everything else asks here (``lichhook.descriptor``
reads them for the installers, the docs and the tests).

A command hook is registered as the bare ``<provider>`` (the session-start report, as
every earlier lichhook registered it) when its event reports nothing else, so a user's
existing entry stays as it is (Codex keys its trust on the entry's text); otherwise it
names the event: ``<provider> <event>``. The JS modules of opencode and omp name the
event they forward every time.

The report path imports this module on every hook: data only, nothing heavy.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterator, Optional, Sequence, Tuple

    RegistrationRow = Tuple[str, Tuple[str, ...], Optional[str], Optional[int]]


class Descriptor:
    """Everything lichhook knows about one harness, in one place.

    ``events`` maps each event word the harness sends to the reports it can give (the
    words of ``lichhook.descriptor.REPORT_KINDS``); a ``*suffix`` key stands for every
    event ending so (opencode's ``*.asked``). ``verdicts`` holds the exact stdout of each
    event that needs one (none: nothing is printed). ``writers`` are the harness's own
    names of the tools that change files. ``registrations`` are the hook entries its
    installer writes, ``(event, command words, matcher, timeout)``
    (``lichhook.descriptor.registrations`` reads them as objects). Plain data: the report
    path reads a descriptor on every hook.
    """

    __slots__ = ("provider", "title", "module", "installer", "start_event", "events", "verdicts",
                 "writers", "registration_rows", "usage")

    def __init__(self, provider: str, title: str, module: str, installer: str, start_event: str,
                 events: "Dict[str, Tuple[str, ...]]", verdicts: "Dict[str, str]", writers: "Sequence[str]",
                 registrations: "Sequence[RegistrationRow]", usage: str) -> None:
        self.provider = provider
        self.title = title
        self.module = module  # lichhook.adapters.<module> holds ADAPTER
        self.installer = installer  # "module:Class" under lichhook.install
        self.start_event = start_event  # the event a bare `<provider>` is registered on
        self.events = events
        self.verdicts = verdicts
        self.writers = tuple(writers)
        self.registration_rows = tuple(registrations)
        self.usage = usage  # one line for the help text: how the harness runs lichhook

    def spec(self, event: "Optional[str]") -> "Optional[Tuple[str, ...]]":
        """The reports ``event`` can give (None: the bare command's start event), or None
        for an event the harness does not send."""
        if event is None:
            event = self.start_event
        found = self.events.get(event)
        if found is not None:
            return found
        for key, reports in self.events.items():
            if key[:1] == "*" and len(event) >= len(key) and event.endswith(key[1:]):
                return reports
        return None

    def name_of(self, event: str) -> "Optional[str]":
        """The key ``event`` falls under: itself, a ``*suffix`` key, or None."""
        if event in self.events:
            return event
        for key in self.events:
            if key[:1] == "*" and len(event) >= len(key) and event.endswith(key[1:]):
                return key
        return None

    def verdict(self, event: "Optional[str]" = None) -> str:
        """What the hook prints for ``event`` (None: the bare command)."""
        name = self.name_of(self.start_event if event is None else event)
        return self.verdicts.get(name, "") if name else ""

    def __contains__(self, event: object) -> bool:  # the events it takes, for `in`
        return isinstance(event, str) and self.name_of(event) is not None

    def __iter__(self) -> "Iterator[str]":
        return iter(self.events)

    def __repr__(self) -> str:
        return f"<Descriptor {self.provider}>"


_CLAUDE_START = "startup|resume|clear|compact|fork"  # every source can bring a new id
_AGY_WRITERS = ("propose_code", "file_change", "edit_notebook", "write_blob", "delete_directory", "run_command")
_OPENCODE_EVENTS = ("session.created", "session.status", "tool.execute.before", "tool.execute.after",
                    "*.asked", "session.updated", "file.edited")
_OMP_EVENTS = ("session_start", "session_switch", "session_branch", "input", "turn_start", "tool_call",
               "tool_result", "session_stop")

DESCRIPTORS = (
    Descriptor(
        provider="claude",
        title="Claude Code",
        module="claude",
        installer="claude:Claude",
        start_event="SessionStart",
        events={
            "SessionStart": ("start",),
            "UserPromptSubmit": ("busy",),
            "PreToolUse": ("tool",),
            "PostToolUse": ("busy", "title", "touched"),
            "Notification": ("waiting",),
            "Stop": ("done", "title"),
            "StopFailure": ("done",),
            "PreCompact": ("compacting",),
            "PostCompact": ("busy", "done"),
            "SessionEnd": ("idle",),
        },
        verdicts={},
        writers=("Edit", "Write", "NotebookEdit", "Bash"),
        registrations=(
            ("SessionStart", ("claude",), _CLAUDE_START, 10),
            ("SessionStart", ("claude-code", "session-start"), _CLAUDE_START, 10),
            ("UserPromptSubmit", ("claude", "UserPromptSubmit"), None, 10),
            ("PreToolUse", ("claude", "PreToolUse"), None, 10),
            ("PostToolUse", ("claude", "PostToolUse"), None, 10),
            ("Notification", ("claude", "Notification"), None, 10),
            ("Stop", ("claude", "Stop"), None, 10),
            ("Stop", ("claude-code", "stop"), None, 10),
            ("StopFailure", ("claude", "StopFailure"), None, 10),
            ("PreCompact", ("claude", "PreCompact"), None, 10),
            ("PostCompact", ("claude", "PostCompact"), None, 10),
            ("SessionEnd", ("claude", "SessionEnd"), None, 10),
        ),
        usage="command hooks in ~/.claude/settings.json",
    ),
    Descriptor(
        provider="codex",
        title="Codex CLI",
        module="codex",
        installer="codex:Codex",
        start_event="SessionStart",
        events={
            "SessionStart": ("start",),
            "UserPromptSubmit": ("busy",),
            "PreToolUse": ("tool",),
            "PermissionRequest": ("waiting",),
            "PostToolUse": ("busy", "title", "touched"),
            "Stop": ("done", "title"),
            "PreCompact": ("compacting",),
            "PostCompact": ("busy", "done"),
            "SessionEnd": ("idle",),
        },
        verdicts={},
        writers=("apply_patch", "Edit", "Write", "Bash"),
        registrations=(
            ("SessionStart", ("codex",), None, 5),
            ("SessionStart", ("codex-waits", "session-start"), None, 5),
            ("UserPromptSubmit", ("codex", "UserPromptSubmit"), None, 5),
            ("PreToolUse", ("codex", "PreToolUse"), None, 5),
            ("PermissionRequest", ("codex", "PermissionRequest"), None, 5),
            ("PostToolUse", ("codex", "PostToolUse"), None, 5),
            ("Stop", ("codex", "Stop"), None, 5),
            ("PreCompact", ("codex", "PreCompact"), None, 5),
            ("PostCompact", ("codex", "PostCompact"), None, 5),
            ("SessionEnd", ("codex", "SessionEnd"), None, 3),  # Codex clamps it to 3 s
        ),
        usage="command hooks in ~/.codex/hooks.json",
    ),
    Descriptor(
        provider="antigravity",
        title="Antigravity",
        module="antigravity",
        installer="antigravity:Antigravity",
        start_event="PreInvocation",
        events={
            # Antigravity reads stdout as a decision on every event; on PreToolUse `{}`
            # denies the tool call, so the one reply that raises no objection is "allow".
            "PreInvocation": ("start", "busy", "title"),
            "PreToolUse": ("tool",),
            "PostToolUse": ("touched",),
            "Stop": ("done", "title"),
        },
        verdicts={"PreInvocation": "{}", "PreToolUse": '{"decision":"allow"}', "PostToolUse": "{}",
                  "Stop": '{"decision":""}'},
        writers=_AGY_WRITERS,
        registrations=(
            ("PreInvocation", ("antigravity", "PreInvocation"), None, 5),
            ("PreToolUse", ("antigravity", "PreToolUse"), "", 5),
            ("PostToolUse", ("antigravity", "PostToolUse"), "|".join(_AGY_WRITERS), 5),
            ("Stop", ("antigravity", "Stop"), None, 5),
        ),
        usage="a plugin folder, ~/.gemini/config/plugins/lichhook/",
    ),
    Descriptor(
        provider="crush",
        title="Crush",
        module="crush",
        installer="crush:Crush",
        start_event="PreToolUse",
        events={
            # Crush's only event. It reports no state: nothing could end a `busy`.
            "PreToolUse": ("start", "touched"),
        },
        verdicts={},
        writers=("edit", "write", "multiedit", "bash"),  # fires before the write
        registrations=(("PreToolUse", ("crush", "PreToolUse"), None, 5),),
        usage="a hook in Crush's global crush.json or crushrc",
    ),
    Descriptor(
        provider="opencode",
        title="opencode",
        module="opencode",
        installer="jsmodules:Opencode",
        start_event="session.created",
        events={
            "session.created": ("start",),
            "session.status": ("busy", "done"),
            "tool.execute.before": ("tool",),
            "tool.execute.after": ("busy",),
            "*.asked": ("waiting",),  # permission.asked, question.asked, any other
            "session.updated": ("title",),
            "file.edited": ("touched",),
        },
        verdicts={},
        writers=(),  # file.edited says it
        registrations=tuple((e, ("opencode", e), None, None) for e in _OPENCODE_EVENTS),
        usage="a plugin module, ~/.config/opencode/plugin/lich.js, runs one `opencode --serve`",
    ),
    Descriptor(
        provider="omp",
        title="omp",
        module="omp",
        installer="jsmodules:Omp",
        start_event="session_start",
        events={
            "session_start": ("start",),
            "session_switch": ("start",),  # /new, /resume, /fork
            "session_branch": ("start",),  # /branch: a new session file, an id of its own
            "input": ("busy",),
            "turn_start": ("busy", "title"),
            "tool_call": ("tool",),
            "tool_result": ("touched",),
            "session_stop": ("done", "title"),
        },
        verdicts={},
        writers=("write", "edit", "bash", "notebook"),
        registrations=tuple((e, ("omp", e), None, None) for e in _OMP_EVENTS),
        usage="an extension module, ~/.omp/agent/extensions/lich.js, runs one `omp --serve`",
    ),
)

# provider id -> its descriptor, in the order `adapters`, `demo` and `install` list them.
BY_PROVIDER = {d.provider: d for d in DESCRIPTORS}


def load(provider: str) -> object:
    """The built-in adapter for ``provider`` (a key of BY_PROVIDER): the ``ADAPTER`` of its
    module, imported now. The one loader of a built-in, for the report path and the host."""
    from importlib import import_module

    return import_module("lichhook.adapters." + BY_PROVIDER[provider].module).ADAPTER
