"""What the built-in adapters share: their base class, small readers of a payload's
fields, the words a card shows for a tool call (its detail) and for a wait (its reason),
and the command-hook adapter Claude Code and Codex are, told apart by their data."""

from lichhook.adapter import Adapter, Report
from lichhook.adapters import BY_PROVIDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Container, Dict, List, Mapping, Optional, Sequence

    from lichhook.adapter import Event
    from lichhook.adapters import Descriptor

# Where each harness puts what a tool call acts on, in the order a card prefers them: a
# command (Claude Code and Codex `command`, Antigravity `CommandLine`); a file (Claude
# Code `file_path` and `notebook_path`, opencode `filePath`, Antigravity PascalCase); a
# search or an address; a folder (`path` is a folder for search tools); the model's own
# description of the call (Claude Code's Agent tool) or its message (Codex's spawn_agent).
COMMAND_KEYS = ("command", "CommandLine", "cmd")
FILE_KEYS = ("file_path", "filePath", "notebook_path", "TargetFile", "FilePath", "AbsolutePath", "NotebookPath")
TEXT_KEYS = ("pattern", "query", "Query", "url", "Url")
FOLDER_KEYS = ("path", "DirectoryPath", "SearchPath", "SearchDirectory")
PATCH_START = "*** Begin Patch"
PATCH_FILES = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")



class BuiltinAdapter(Adapter):
    """A built-in adapter: its verdicts, events and file-changing tools come from its
    harness's descriptor (``lichhook.adapters.BY_PROVIDER``), never from the adapter itself."""

    @property
    def descriptor(self) -> "Descriptor":
        return BY_PROVIDER[self.provider]

    @property
    def verdict(self) -> str:  # type: ignore[override]
        return self.descriptor.verdict()

    @property
    def verdicts(self) -> "Mapping[str, str]":  # type: ignore[override]
        return self.descriptor.verdicts

    @property
    def events(self) -> "Container[str]":  # type: ignore[override]
        return self.descriptor  # a Container of the event words it takes

    def writes_files(self, tool: "Optional[str]") -> bool:
        return tool in self.descriptor.writers


def string_at(payload: "Mapping[str, Any]", *path: str) -> "Optional[str]":
    """Return the string at ``payload[path[0]][path[1]]...``, or None if any step is missing
    or the value is not a non-empty string."""
    node: "Any" = payload
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, str) and node else None


def mapping_at(payload: "Mapping[str, Any]", *path: str) -> "Optional[Dict[str, Any]]":
    """The object at ``path`` in ``payload``, or None."""
    node: "Any" = payload
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def first_string(args: "Mapping[str, Any]", keys: "Sequence[str]") -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def detail(args: object, cwd: "Optional[str]") -> str:
    """What a tool call acts on, in the harness's own words: the command (for a patch, the
    files it names), else the file made relative to ``cwd``, else the search or address,
    else the folder, else the call's description; "" when it says none."""
    if not isinstance(args, dict):
        return ""
    command = first_string(args, COMMAND_KEYS)
    if command:
        if command.lstrip().startswith(PATCH_START):
            return ", ".join(relative(path, cwd) for path in patch_files(command))
        return command
    path = first_string(args, FILE_KEYS)
    if path:
        return relative(path, cwd)
    text = first_string(args, TEXT_KEYS)
    if text:
        return text
    path = first_string(args, FOLDER_KEYS)
    if path:
        return relative(path, cwd)
    return first_string(args, ("description", "message"))


def patch_files(patch: str) -> "List[str]":
    """The files an apply_patch names (added, updated, deleted), each once, in order."""
    # A dict, not a list: a patch may name tens of thousands of files, and a list's `in`
    # compares each name with every earlier one (half a minute for a 1 MiB patch).
    found: "Dict[str, None]" = {}
    for line in patch.splitlines():
        for prefix in PATCH_FILES:
            if line.startswith(prefix):
                name = line[len(prefix):].strip()
                if name:
                    found.setdefault(name)
    return list(found)


def relative(path: str, cwd: "Optional[str]") -> str:
    """``path`` relative to ``cwd`` when inside it; an absolute path outside it is cut to
    its file name (a card is narrow, and the folder is the part every card shares)."""
    unified = path.replace("\\", "/")
    base = (cwd or "").replace("\\", "/").rstrip("/")
    if base:
        if unified == base:
            return "."
        if unified.startswith(base + "/"):
            return path[len(base) + 1:]
    if unified.startswith("/") or (len(unified) > 2 and unified[1] == ":" and unified[2] == "/"):
        return unified.rstrip("/").rsplit("/", 1)[-1] or path
    return path


def busy_with(tool: "Optional[str]", args: object, cwd: "Optional[str]", sid: "Optional[str]") -> "List[Report]":
    """``busy`` with ``tool`` about to run, and what its ``args`` act on (``detail``):
    every harness's report of a tool call."""
    return [Report.state("busy", tool=tool, detail=detail(args, cwd), provider_session_id=sid)]


def reason(message: object, tool: "Optional[str]", what: str) -> str:
    """Why a session waits: the harness's own sentence when it has one, else the tool it
    asks about and what that tool would act on."""
    if isinstance(message, str) and message.strip():
        return message
    if tool and what:
        return f"{tool}: {what}"
    return tool or ""


class CommandHook(BuiltinAdapter):
    """A harness whose command hooks send Claude Code's envelope (``session_id``, ``cwd``,
    ``tool_name``, ``tool_input``) for the events Claude Code and Codex send alike: the
    session start, busy on a prompt, busy with the tool about to run, busy after it
    (touched after a tool that writes, and the title until one is known), done with the
    title, idle, and compaction. What sets one harness apart is data: the events on which
    it waits for the user, the events that end a turn that failed, and its own title."""

    # The events on which the session waits for the user, each with the payload key of
    # the harness's own sentence saying why ("" when it sends none).
    waiting: "Mapping[str, str]" = {}
    # The events that end a turn which failed: the card reads done, as after Stop.
    failed: "Container[str]" = ()

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        return string_at(payload, "session_id")

    def title(self, payload: "Mapping[str, Any]") -> "Optional[str]":
        """The harness's own title for the session of ``payload``, or None."""
        raise NotImplementedError

    def reports(self, event: "Event") -> "List[Report]":
        p, name = event.payload, event.name
        sid = self.session_id(p, event.environ)
        if name == "SessionStart":
            return [Report.start(sid)]
        if name == "UserPromptSubmit":
            return [Report.state("busy", provider_session_id=sid)]
        if name == "PreToolUse":
            return busy_with(string_at(p, "tool_name"), mapping_at(p, "tool_input"), string_at(p, "cwd"), sid)
        if name == "PostToolUse":
            out = [Report.state("busy", provider_session_id=sid)]
            if self.writes_files(string_at(p, "tool_name")):
                out.append(Report.touched(sid))
            if event.last_title is None:  # until one is known; Stop carries a later one
                out += titled(self.title(p), sid)
            return out
        if name == "Stop":
            return [Report.state("done", provider_session_id=sid)] + titled(self.title(p), sid)
        if name == "SessionEnd":
            return [Report.state("idle", provider_session_id=sid)]
        if name in ("PreCompact", "PostCompact"):
            return compaction(p, name == "PreCompact", sid)
        if name in self.waiting:
            message = p.get(self.waiting[name]) if self.waiting[name] else None
            what = detail(mapping_at(p, "tool_input"), string_at(p, "cwd"))
            return [Report.state("waiting", reason=reason(message, string_at(p, "tool_name"), what),
                                 provider_session_id=sid)]
        if name in self.failed:
            return [Report.state("done", provider_session_id=sid)]
        return []


def compaction(p: "Mapping[str, Any]", before: bool, sid: "Optional[str]") -> "List[Report]":
    """``compacting`` before a compaction, then the state it leaves: ``done`` after a
    ``/compact`` typed between turns, ``busy`` after one the harness made inside a turn,
    which goes on. A sub-agent's own compaction (``agent_id``) is not the card's. A
    compaction that fails fires no PostCompact: the card reads ``compacting`` until the
    session's next report (a prompt, a tool, Claude Code's idle notice, the end)."""
    if string_at(p, "agent_id"):
        return []
    if before:
        return [Report.state("compacting", provider_session_id=sid)]
    return [Report.state("done" if p.get("trigger") == "manual" else "busy", provider_session_id=sid)]


def titled(text: "Optional[str]", sid: "Optional[str]") -> "List[Report]":
    return [Report.title(text, sid)] if text else []
