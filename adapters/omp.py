"""omp (oh-my-pi): a small JS extension forwards ``session_start``, ``session_switch``
(``/new``, ``/resume``, ``/fork``) and ``session_branch`` (``/branch``, which continues in a
new session file with an id of its own).

omp's events carry no id, so the extension reads the session manager and writes
``{"type": <event>, "session_id": <id>, "session_file": <path or null>,
"parent_session": <the session header's parentSession, or null>}`` on stdin.

omp's ``task`` sub-agents run the parent's extensions and start sessions of their own,
which belong to the parent's card and are never reported. omp writes a sub-agent's
session to ``<parent file without .jsonl>/<agent>.jsonl`` and puts the parent's file
path in its header's ``parentSession`` (omp 18.2.3, ``task/executor.ts``). Every other
session is reported: a fork's ``parentSession`` is the parent's id, and a ``/branch``
names the parent's file but sits beside it, not inside its folder.
"""

# No ``from __future__ import annotations``: see lichhook/coldstart/__init__.py.

import os

from lichhook.adapter import Adapter
from lichhook.adapters._fields import string_at

EVENTS = ("session_start", "session_switch", "session_branch")


def is_sub_agent(session_file: object, parent_session: object) -> bool:
    """Whether a session file sits in the artifacts folder of the session its header
    names as parent, as omp places a task sub-agent's session."""
    if not (isinstance(session_file, str) and isinstance(parent_session, str) and session_file and parent_session):
        return False
    folder = os.path.dirname(os.path.normpath(session_file))
    return os.path.normcase(folder + ".jsonl") == os.path.normcase(os.path.normpath(parent_session))


class Omp(Adapter):
    provider = "omp"
    sample = {
        "type": "session_start",
        "session_id": "019ffb38-ceab-7000-afae-20b8eae145d8",
        "session_file": "/home/u/.omp/agent/sessions/--home-u-proj--/"
                        "2026-11-30T09-00-00-000Z_019ffb38-ceab-7000-afae-20b8eae145d8.jsonl",
        "parent_session": None,
    }

    def session_id(self, payload, environ):
        if payload.get("type") not in EVENTS:
            return None
        if is_sub_agent(payload.get("session_file"), payload.get("parent_session")):
            return None
        return string_at(payload, "session_id")


ADAPTER = Omp()
