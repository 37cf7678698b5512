"""omp (oh-my-pi): an extension module hands each event it forwards to ``lichhook omp --serve``.

omp's events carry no session id, so the module (installed by ``lichhook install omp``)
writes ``{"type": <event>, "session_id": <ctx.sessionManager.getSessionId()>}`` per event,
with ``session_file`` (``getSessionFile()``) and ``parent_session`` (the session header's
``parentSession``), ``session_name`` (``getSessionName()``, the title, once omp has one)
and ``cwd`` (``ctx.cwd``), and for ``tool_call`` and ``tool_result`` the event's
``toolName`` and ``input`` (docs/harness-events.md has every shape). A session starts on
``session_start``, ``session_switch`` (``/new``, ``/resume``, ``/fork``) and
``session_branch`` (``/branch``, which continues in a new session file with an id of its
own). omp writes titles asynchronously, so the title is read at ``turn_start`` and
``session_stop``; files change after a ``tool_result`` of ``write``, ``edit``, ``bash`` or
``notebook`` (``python`` is left out: it rarely writes). An event whose ``ctx`` knows no
session id still reports (busy, a tool, touched, a title, done) with none alongside; only
a session start needs one.

omp's ``task`` sub-agents run the parent's extensions and start sessions of their own,
which belong to the parent's card: none of their events is reported. omp writes a
sub-agent's session to ``<parent file without .jsonl>/<agent>.jsonl`` and puts the
parent's file path in its header's ``parentSession`` (omp 18.2.3, ``task/executor.ts``).
Every other session is reported: a fork's ``parentSession`` is the parent's id, and a
``/branch`` names the parent's file but sits beside it, not inside its folder.
"""

import os

from lichhook.adapter import Report
from ._fields import BuiltinAdapter, busy_with, mapping_at, string_at, titled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from lichhook.adapter import Event

EVENTS = ("session_start", "session_switch", "session_branch")  # what the bare command reports
SID = "019ffb38-ceab-7000-afae-20b8eae145d8"


def is_sub_agent(session_file: object, parent_session: object) -> bool:
    """Whether a session file sits in the artifacts folder of the session its header
    names as parent, as omp places a task sub-agent's session."""
    if not (isinstance(session_file, str) and isinstance(parent_session, str) and session_file and parent_session):
        return False
    folder = os.path.dirname(os.path.normpath(session_file))
    return os.path.normcase(folder + ".jsonl") == os.path.normcase(os.path.normpath(parent_session))


def sub_agent(payload: "Mapping[str, Any]") -> bool:
    """Whether ``payload`` comes from a task sub-agent's session (see is_sub_agent)."""
    return is_sub_agent(payload.get("session_file"), payload.get("parent_session"))


class Omp(BuiltinAdapter):
    provider = "omp"
    sample = {
        "type": "session_start",
        "session_id": SID,
        "session_file": f"/home/u/.omp/agent/sessions/--home-u-proj--/2026-11-30T09-00-00-000Z_{SID}.jsonl",
        "parent_session": None,
    }

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        if payload.get("type") not in EVENTS or sub_agent(payload):
            return None
        return string_at(payload, "session_id")

    def reports(self, event: "Event") -> "List[Report]":
        p, name = event.payload, event.name
        if sub_agent(p):
            return []
        sid = string_at(p, "session_id")
        title = string_at(p, "session_name")
        if name in EVENTS:  # a session start names its session, or says nothing
            return [Report.start(sid)] if sid else []
        if name == "input":
            return [Report.state("busy", provider_session_id=sid)]
        if name == "turn_start":
            return [Report.state("busy", provider_session_id=sid)] + titled(title, sid)
        if name == "tool_call":
            tool = string_at(p, "toolName")
            if not tool:  # a malformed call: nothing for the card to show
                return []
            return busy_with(tool, mapping_at(p, "input"), string_at(p, "cwd"), sid)
        if name == "tool_result":
            return [Report.touched(sid)] if self.writes_files(string_at(p, "toolName")) else []
        if name == "session_stop":
            return [Report.state("done", provider_session_id=sid)] + titled(title, sid)
        return []

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        base = {"session_id": SID, "cwd": folder}
        write = {"toolName": "write", "input": {"path": folder.rstrip("/\\") + "/g.txt", "content": "hello\n"}}
        return [
            ("session_start", dict(base, type="session_start")),
            ("input", dict(base, type="input")),
            ("turn_start", dict(base, type="turn_start")),
            ("tool_call", dict(base, type="tool_call", session_name="Write hi into f.txt", **write)),
            ("tool_result", dict(base, type="tool_result", session_name="Write hi into f.txt", isError=False, **write)),
            ("turn_start", dict(base, type="turn_start", session_name="Write hi into f.txt")),
            ("session_stop", dict(base, type="session_stop", session_name="Write hi into f.txt")),
        ]


ADAPTER = Omp()
