"""omp (oh-my-pi): an extension module runs ``lichhook omp <event>`` for each event it
forwards.

omp's events carry no session id, so the module (installed by ``lichhook install omp``)
writes ``{"type": <event>, "session_id": <ctx.sessionManager.getSessionId()>}`` on stdin,
with ``session_name`` (``getSessionName()``, the title, once omp has one) and ``cwd``
(``ctx.cwd``), and for ``tool_call`` and ``tool_result`` the event's ``toolName`` and
``input`` (docs/harness-events.md has every shape). A sub-agent's events, which the
module marks with ``parent_session`` (its session header's parent), report nothing: the
card holds the main session. omp writes titles asynchronously, so the title is read at
``turn_start`` and ``session_stop``; files change after a ``tool_result`` of ``write``,
``edit``, ``bash`` or ``notebook`` (``python`` is left out: it rarely writes).
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

from lichhook.adapter import BuiltinAdapter, Report
from lichhook.adapters._fields import detail, mapping_at, string_at, titled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

    from lichhook.adapter import Event

EVENTS = ("session_start", "session_switch")  # what the bare command reports
SID = "019ffb38-ceab-7000-afae-20b8eae145d8"


class Omp(BuiltinAdapter):
    provider = "omp"
    sample = {"type": "session_start", "session_id": SID}

    def session_id(self, payload, environ):
        if payload.get("type") not in EVENTS:
            return None
        return string_at(payload, "session_id")

    def reports(self, event: "Event") -> "List[Report]":
        p, name = event.payload, event.name
        if string_at(p, "parent_session"):
            return []
        sid = string_at(p, "session_id")
        title = string_at(p, "session_name")
        if name in EVENTS:
            return [Report.start(sid)]
        if name == "input":
            return [Report.state("busy", provider_session_id=sid)]
        if name == "turn_start":
            return [Report.state("busy", provider_session_id=sid)] + titled(title, sid)
        if name == "tool_call":
            what = detail(mapping_at(p, "input"), string_at(p, "cwd"))
            return [Report.state("busy", tool=string_at(p, "toolName"), detail=what, provider_session_id=sid)]
        if name == "tool_result":
            return [Report.touched(sid)] if self.writes_files(string_at(p, "toolName")) else []
        if name == "session_stop":
            return [Report.state("done", provider_session_id=sid)] + titled(title, sid)
        return []

    def life(self, folder):
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
