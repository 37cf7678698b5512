"""The built-in harnesses: one descriptor each, and one adapter module each.

Each descriptor below is the one place that names a
harness's provider id, its adapter module (which defines ``ADAPTER``), the events it
sends with what each reports and prints, the names of its tools that change files, its
registrations and its installer. Everything else asks here (``lichhook.descriptor``
reads them for the installers, the docs and the tests).

Each event is registered once, in the order of ``events``: a command hook as the bare
``<provider>`` (the session-start report, as every earlier lichhook registered it) when
it is the start event and reports nothing else, so a user's existing entry stays as it
is (Codex keys its trust on the entry's text); otherwise it names the event:
``<provider> <event>``. The JS modules of opencode and omp name the event they forward
every time. A descriptor lists only the exceptions: a matcher or a timeout that is not
the usual, and the lichhook commands (``extra``) registered beside an event's row.

The report path imports this module on every hook: data only, nothing heavy.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Sequence, Tuple

    RegistrationRow = Tuple[str, Tuple[str, ...], Optional[str], Optional[int]]
    Extra = Tuple[Tuple[str, Tuple[str, ...]], ...]


class Descriptor:
    """Everything lichhook knows about one harness, in one place.

    ``events`` maps each event word the harness sends to the reports it can give (the
    words of ``lichhook.descriptor.REPORT_KINDS``); a ``*suffix`` key stands for every
    event ending so (opencode's ``*.asked``). ``verdicts`` holds the exact stdout of each
    event that needs one (none: nothing is printed). ``writers`` are the harness's own
    names of the tools that change files. ``timeout`` is its hooks' timeout in seconds
    (None: a JS module, which forwards every event by name and has none), ``timeouts``
    and ``matchers`` the events' own where they differ, ``extra`` the ``(event, command
    words)`` of lichhook commands registered beside an event. Plain data: the report path
    reads a descriptor on every hook.
    """

    __slots__ = ("provider", "title", "module", "installer", "start_event", "events", "verdicts",
                 "writers", "timeout", "timeouts", "matchers", "extra", "usage")

    def __init__(self, provider: str, title: str, module: str, installer: str, start_event: str,
                 events: "Dict[str, Tuple[str, ...]]", verdicts: "Dict[str, str]", writers: "Sequence[str]",
                 timeout: "Optional[int]", usage: str, timeouts: "Optional[Dict[str, int]]" = None,
                 matchers: "Optional[Dict[str, str]]" = None, extra: "Extra" = ()) -> None:
        self.provider = provider
        self.title = title
        self.module = module  # lichhook.adapters.<module> holds ADAPTER
        self.installer = installer  # "module:Class" under lichhook.install.harnesses
        self.start_event = start_event  # the event a bare `<provider>` is registered on
        self.events = events
        self.verdicts = verdicts
        self.writers = tuple(writers)
        self.timeout = timeout
        self.timeouts = timeouts or {}
        self.matchers = matchers or {}
        self.extra = extra
        self.usage = usage  # one line for the help text: how the harness runs lichhook

    @property
    def registrations(self) -> "Tuple[RegistrationRow, ...]":
        """The hook entries its installer writes, ``(event, command words, matcher,
        timeout)`` (``lichhook.descriptor.registrations`` reads them as objects); made
        when asked, since only the installers and the tests ask."""
        rows: "List[RegistrationRow]" = []
        for event in self.events:
            bare = self.timeout is not None and event == self.start_event and self.events[event] == ("start",)
            matcher, timeout = self.matchers.get(event), self.timeouts.get(event, self.timeout)
            rows.append((event, (self.provider,) if bare else (self.provider, event), matcher, timeout))
            rows += [(event, words, matcher, timeout) for on, words in self.extra if on == event]
        return tuple(rows)

    def spec(self, event: "Optional[str]") -> "Optional[Tuple[str, ...]]":
        """The reports ``event`` can give (None: the bare command's start event), or None
        for an event the harness does not send."""
        name = self.name_of(self.start_event if event is None else event)
        return self.events[name] if name else None

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
        writers=("Edit", "Write", "NotebookEdit", "Bash", "PowerShell"),  # PowerShell: Windows without Git Bash
        timeout=10,
        matchers={"SessionStart": _CLAUDE_START},
        extra=(("SessionStart", ("claude-code", "session-start")), ("Stop", ("claude-code", "stop"))),
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
        timeout=5,
        timeouts={"SessionEnd": 3},  # Codex clamps it to 3 s
        extra=(("SessionStart", ("codex-waits", "session-start")),),
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
        timeout=5,
        matchers={"PreToolUse": "", "PostToolUse": "|".join(_AGY_WRITERS)},
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
        timeout=5,
        usage="a hook in Crush's global crush.json or crushrc",
    ),
    Descriptor(
        provider="opencode",
        title="opencode",
        module="opencode",
        installer="modules:Opencode",
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
        timeout=None,
        usage="a plugin module, ~/.config/opencode/plugin/lich.js, runs one `opencode --serve`",
    ),
    Descriptor(
        provider="omp",
        title="omp",
        module="omp",
        installer="modules:Omp",
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
        timeout=None,
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
