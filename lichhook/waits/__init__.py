"""Waits a session has to keep: kept under a caller's name (who@node), bound to a session.

The command line is ``cli``, the Python entry point ``api.run_op``. ``rules`` holds the
ops as pure changes to the state; ``folder`` owns everything on disk: the layout, how each
file is opened, read and written, the checks, the lock and the transaction every op runs
in. ``view`` is its side the hooks import alone: the checks and the reading. ``hooks``
holds the hooks over the waits (Claude Code's SessionStart and Stop, Codex's SessionStart).
"""
