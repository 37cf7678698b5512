"""The tricks that buy start-up time, kept in one place.

A hook is a new process hundreds of times a day, and nearly all it costs is the
interpreter starting and importing modules. Each module here does what a plain line of
Python would do, for less at start-up, and ``tests/test_coldstart.py`` holds each one
equal to that plain way:

- ``fastjson``: ``json.loads`` and ``json.dumps`` over ``_json``, without importing ``json``.
- ``dirs``: platformdirs' user config and state folders on Linux and macOS, without
  importing platformdirs.
- ``resolve``: a built-in adapter without pluggy when no plugin can replace it, and its
  verdict outside lich without loading its module.
- ``process``: how a short-lived command starts and ends: no cyclic garbage collection,
  a stdout whose reader went away is not an error, no interpreter teardown when only
  lichhook's own code ran.
- ``zipload``: lichhook's modules read from its archive once each, where zipimport
  reads them twice.

One more trick lives in the modules the hot commands import rather than here: they do
not write ``from __future__ import annotations`` (it imports ``__future__`` at run time)
and spell annotations that name ``typing`` types as strings, behind
``TYPE_CHECKING = False``. The import allow-list tests in ``tests/test_coldstart.py`` name
those modules; everything else is plain modern Python.
"""
