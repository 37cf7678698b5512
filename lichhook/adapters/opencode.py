"""opencode: a JS plugin module hands each event it forwards to ``lichhook opencode --serve``.

The module (installed by ``lichhook install opencode``) writes one JSON object per event:
for a bus event, the event as opencode gives it, ``{"type", "properties"}``; for the
``tool.execute.before`` and ``tool.execute.after`` hooks, ``{"type", "input", "output"}``
with the hook's two arguments (``input.tool``, ``input.sessionID``, ``output.args``);
each with the plugin's ``directory`` added (docs/harness-events.md has every shape).
A sub-session (a task's child, ``info.parentID`` set) belongs to its parent's card: its
creation and title are never reported, and the module forwards none of its events.

The title is ``session.updated``'s ``info.title``. opencode creates a session with a
placeholder title (``New session - <time>``): it is remembered as the card's title, not
sent, so only a real one goes out. The bare ``lichhook opencode`` (earlier modules ran
it on ``session.created``) reports the session start alone, as it always did.
"""

from lichhook.adapter import Report
from ._fields import BuiltinAdapter, busy_with, detail, mapping_at, reason, string_at, titled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from lichhook.adapter import Event

SID = "ses_011856954ffe5NEMhsYeTuWykR"


class Opencode(BuiltinAdapter):
    provider = "opencode"
    sample = {
        "type": "session.created",
        "properties": {
            "sessionID": SID,
            "info": {
                "id": SID,
                "projectID": "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750",
                "directory": "/home/u/proj",
                "title": "New session",
                "version": "1.3.2",
                "time": {"created": 1767000000000, "updated": 1767000000000},
            },
        },
    }

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        # The bare command: a top-level session's creation, nothing else.
        if payload.get("type") != "session.created" or string_at(payload, "properties", "info", "parentID"):
            return None
        return session_of(payload)

    def reports(self, event: "Event") -> "List[Report]":
        p, name = event.payload, event.name
        sid = session_of(p)
        if name in ("session.created", "session.updated"):
            if string_at(p, "properties", "info", "parentID"):
                return []
            title = string_at(p, "properties", "info", "title")
            if name == "session.updated":
                return titled(title, sid)
            return [Report.start(sid)] + ([Report.title(title, sid, placeholder=True)] if title else [])
        if name == "session.status":
            status = string_at(p, "properties", "status", "type")
            if status in ("busy", "retry"):
                return [Report.state("busy", provider_session_id=sid)]
            if status == "idle":  # the turn ended
                return [Report.state("done", provider_session_id=sid)]
            return []
        if name == "tool.execute.before":
            tool = string_at(p, "input", "tool")
            return busy_with(tool, mapping_at(p, "output", "args"), string_at(p, "directory"), sid)
        if name == "tool.execute.after":
            return [Report.state("busy", provider_session_id=sid)]
        if name.endswith(".asked"):
            return [Report.state("waiting", reason=asked(p), provider_session_id=sid)]
        if name == "file.edited":
            return [Report.touched(sid)]
        return []

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        info = {"id": SID, "slug": "calm-river", "directory": folder, "title": "New session - 2026-11-30T23:22:52.479Z",
                "time": {"created": 1796080972479, "updated": 1796080972479}}
        created = {"sessionID": SID, "info": info}
        renamed = {"sessionID": SID, "info": dict(info, title="Write hi into f.txt")}
        bash = {"tool": "bash", "sessionID": SID, "callID": "call_1"}
        target = folder.rstrip("/\\") + "/g.txt"

        def event(kind: str, **fields: object) -> "Tuple[str, Dict[str, Any]]":
            return kind, dict(fields, type=kind, directory=folder)

        return [
            event("session.created", properties=created),
            event("session.status", properties={"sessionID": SID, "status": {"type": "busy"}}),
            event("session.updated", properties=created),
            event("session.updated", properties=renamed),
            event("tool.execute.before", input=bash, output={"args": {"command": "echo hi > f.txt"}}),
            event("permission.asked", properties={"id": "per_1", "sessionID": SID, "permission": "bash",
                                                  "patterns": ["echo hi > f.txt"],
                                                  "metadata": {"command": "echo hi > f.txt"}}),
            event("tool.execute.after", input=bash),
            event("tool.execute.before", input=dict(bash, tool="write", callID="call_2"),
                  output={"args": {"filePath": target, "content": "hello\n"}}),
            event("file.edited", properties={"file": target}),
            event("tool.execute.after", input=dict(bash, tool="write", callID="call_2")),
            event("session.status", properties={"sessionID": SID, "status": {"type": "idle"}}),
        ]


def session_of(payload: "Mapping[str, Any]") -> "Optional[str]":
    """The opencode session an event belongs to."""
    return (string_at(payload, "properties", "info", "id") or string_at(payload, "properties", "sessionID")
            or string_at(payload, "input", "sessionID"))


def asked(payload: "Mapping[str, Any]") -> str:
    """What a ``*.asked`` prompt blocks on: the permission (with what it would act on), an
    action, or a question's header or text."""
    props = mapping_at(payload, "properties") or {}
    permission = props.get("permission")
    if isinstance(permission, str) and permission.strip():
        what = detail(props.get("metadata"), string_at(payload, "directory"))
        patterns = props.get("patterns")
        if not what and isinstance(patterns, list) and patterns and isinstance(patterns[0], str):
            what = patterns[0]
        return reason(None, permission, what)
    questions = props.get("questions")
    first = questions[0] if isinstance(questions, list) and questions and isinstance(questions[0], dict) else {}
    for value in (props.get("action"), first.get("header"), first.get("question")):
        if isinstance(value, str) and value.strip():
            return value
    return ""


ADAPTER = Opencode()
