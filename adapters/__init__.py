"""The built-in harnesses: one descriptor each, and one adapter module each.

In the repository this folder is ``adapters/``; installed, and inside the archive, it is
the package ``lichhook.adapters``. Each descriptor below is the one place that names a
harness's provider id, its adapter module (which defines ``ADAPTER``), the events it
sends with what each reports and prints, the names of its tools that change files, its
registrations and its installer (``lichhook.descriptor``). Everything else asks here.

A command hook is registered as the bare ``<provider>`` (the session-start report, as
every earlier lichhook registered it) when its event reports nothing else, so a user's
existing entry stays as it is (Codex keys its trust on the entry's text); otherwise it
names the event: ``<provider> <event>``. The JS modules of opencode and omp name the
event they forward every time.

The report path imports this module on every hook: data only, nothing heavy.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.descriptor import Descriptor, EventSpec, Registration, by_provider

_CLAUDE_START = "startup|resume|clear|compact|fork"  # every source can bring a new id
_AGY_WRITERS = ("propose_code", "file_change", "edit_notebook", "write_blob", "delete_directory", "run_command")
_OPENCODE_EVENTS = ("session.created", "session.status", "tool.execute.before", "tool.execute.after",
                    "permission.asked", "question.asked", "session.updated", "file.edited")
_OMP_EVENTS = ("session_start", "session_switch", "input", "turn_start", "tool_call", "tool_result",
               "session_stop")

DESCRIPTORS = (
    Descriptor(
        provider="claude",
        title="Claude Code",
        module="claude",
        installer="claude:Claude",
        start_event="SessionStart",
        events={
            "SessionStart": EventSpec(("start",)),
            "UserPromptSubmit": EventSpec(("busy",)),
            "PreToolUse": EventSpec(("tool",)),
            "PostToolUse": EventSpec(("busy", "title", "touched")),
            "Notification": EventSpec(("waiting",)),
            "Stop": EventSpec(("done", "title")),
            "StopFailure": EventSpec(("done",)),
            "SessionEnd": EventSpec(("idle",)),
        },
        writers=("Edit", "Write", "NotebookEdit", "Bash"),
        registrations=(
            Registration("SessionStart", ("claude",), _CLAUDE_START, 10),
            Registration("SessionStart", ("claude-code", "session-start"), _CLAUDE_START, 10),
            Registration("UserPromptSubmit", ("claude", "UserPromptSubmit"), None, 10),
            Registration("PreToolUse", ("claude", "PreToolUse"), None, 10),
            Registration("PostToolUse", ("claude", "PostToolUse"), None, 10),
            Registration("Notification", ("claude", "Notification"), None, 10),
            Registration("Stop", ("claude", "Stop"), None, 10),
            Registration("Stop", ("claude-code", "stop"), None, 10),
            Registration("StopFailure", ("claude", "StopFailure"), None, 10),
            Registration("SessionEnd", ("claude", "SessionEnd"), None, 10),
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
            "SessionStart": EventSpec(("start",)),
            "UserPromptSubmit": EventSpec(("busy",)),
            "PreToolUse": EventSpec(("tool",)),
            "PermissionRequest": EventSpec(("waiting",)),
            "PostToolUse": EventSpec(("busy", "title", "touched")),
            "Stop": EventSpec(("done", "title")),
            "SessionEnd": EventSpec(("idle",)),
        },
        writers=("apply_patch", "Edit", "Write", "Bash"),
        registrations=(
            Registration("SessionStart", ("codex",), None, 5),
            Registration("UserPromptSubmit", ("codex", "UserPromptSubmit"), None, 5),
            Registration("PreToolUse", ("codex", "PreToolUse"), None, 5),
            Registration("PermissionRequest", ("codex", "PermissionRequest"), None, 5),
            Registration("PostToolUse", ("codex", "PostToolUse"), None, 5),
            Registration("Stop", ("codex", "Stop"), None, 5),
            Registration("SessionEnd", ("codex", "SessionEnd"), None, 3),  # Codex clamps it to 3 s
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
            "PreInvocation": EventSpec(("start", "busy", "title"), "{}"),
            "PreToolUse": EventSpec(("tool",), '{"decision":"allow"}'),
            "PostToolUse": EventSpec(("touched",), "{}"),
            "Stop": EventSpec(("done", "title"), '{"decision":""}'),
        },
        writers=_AGY_WRITERS,
        registrations=(
            Registration("PreInvocation", ("antigravity", "PreInvocation"), None, 5),
            Registration("PreToolUse", ("antigravity", "PreToolUse"), "", 5),
            Registration("PostToolUse", ("antigravity", "PostToolUse"), "|".join(_AGY_WRITERS), 5),
            Registration("Stop", ("antigravity", "Stop"), None, 5),
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
            "PreToolUse": EventSpec(("start", "touched")),
        },
        writers=("edit", "write", "multiedit", "bash"),  # fires before the write
        registrations=(Registration("PreToolUse", ("crush", "PreToolUse"), None, 5),),
        usage="a hook in Crush's global crush.json or crushrc",
    ),
    Descriptor(
        provider="opencode",
        title="opencode",
        module="opencode",
        installer="jsmodules:Opencode",
        start_event="session.created",
        events={
            "session.created": EventSpec(("start",)),
            "session.status": EventSpec(("busy", "done")),
            "tool.execute.before": EventSpec(("tool",)),
            "tool.execute.after": EventSpec(("busy",)),
            "*.asked": EventSpec(("waiting",)),  # permission.asked, question.asked, any other
            "session.updated": EventSpec(("title",)),
            "file.edited": EventSpec(("touched",)),
        },
        writers=(),  # file.edited says it
        registrations=tuple(Registration(e, ("opencode", e)) for e in _OPENCODE_EVENTS),
        usage="a plugin module, ~/.config/opencode/plugins/lichhook.js, runs it per event",
    ),
    Descriptor(
        provider="omp",
        title="omp",
        module="omp",
        installer="jsmodules:Omp",
        start_event="session_start",
        events={
            "session_start": EventSpec(("start",)),
            "session_switch": EventSpec(("start",)),  # /new and /resume
            "input": EventSpec(("busy",)),
            "turn_start": EventSpec(("busy", "title")),
            "tool_call": EventSpec(("tool",)),
            "tool_result": EventSpec(("touched",)),
            "session_stop": EventSpec(("done", "title")),
        },
        writers=("write", "edit", "bash", "notebook"),
        registrations=tuple(Registration(e, ("omp", e)) for e in _OMP_EVENTS),
        usage="an extension module, ~/.omp/agent/extensions/lichhook.js, runs it per event",
    ),
)

BY_PROVIDER = by_provider(DESCRIPTORS)

# provider id -> adapter module name, in the order `adapters`, `demo` and `install` list them.
BUILTIN = {d.provider: d.module for d in DESCRIPTORS}

# provider id -> what its bare command prints, where not empty: a hook run outside lich
# prints only this, without loading the adapter's module.
VERDICTS = {d.provider: d.verdict() for d in DESCRIPTORS if d.verdict()}
