"""Waits a session has to keep: kept under a caller's name (who@node), bound to a session.

The command line is ``cli``, the Python entry point ``api.run_op``. The store of record is
``store``; the mirrored files the hooks read are written by ``mirror``.
"""
