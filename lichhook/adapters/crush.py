"""Crush: a command hook on PreToolUse, its only event.

The payload is ``{"event", "session_id", "cwd", "tool_name", "tool_input"}``; Crush also
exports ``CRUSH_SESSION_ID``. The session id therefore rides the first tool call, and a
tool that writes files (``edit``, ``write``, ``multiedit``, ``bash``) reports touched
before it runs, which is as close as Crush comes. Crush reports no state: no event could
ever end a ``busy``. Empty stdout is no opinion on the tool call.
"""

from lichhook.adapter import Report
from ._fields import BuiltinAdapter, string_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from lichhook.adapter import Event

SID = "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0"


class Crush(BuiltinAdapter):
    provider = "crush"
    sample = {
        "event": "PreToolUse",
        "session_id": SID,
        "cwd": "/home/u/proj",
        "tool_name": "bash",
        "tool_input": {"command": "go test ./..."},
    }

    def session_id(self, payload: "Mapping[str, Any]", environ: "Mapping[str, str]") -> "Optional[str]":
        return string_at(payload, "session_id") or environ.get("CRUSH_SESSION_ID") or None

    def reports(self, event: "Event") -> "List[Report]":
        if event.name != "PreToolUse":
            return []
        sid = self.session_id(event.payload, event.environ)
        out = [Report.start(sid)]
        if self.writes_files(string_at(event.payload, "tool_name")):
            out.append(Report.touched(sid))
        return out

    def life(self, folder: str) -> "List[Tuple[str, Dict[str, Any]]]":
        base = {"event": "PreToolUse", "session_id": SID, "cwd": folder}
        return [
            ("PreToolUse", dict(base, tool_name="view", tool_input={"file_path": "README.md"})),
            ("PreToolUse", dict(base, tool_name="edit", tool_input={"file_path": "main.go", "old_string": "a",
                                                                     "new_string": "b"})),
        ]


ADAPTER = Crush()
