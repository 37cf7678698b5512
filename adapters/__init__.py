"""The built-in harness adapters, one module per harness.

In the repository this folder is ``adapters/``; installed, and inside the archive, it is
the package ``lichhook.adapters``. Each module defines ``ADAPTER`` and imports nothing
heavy, so the report path can load one adapter without the plugin machinery.
"""

# provider id -> module name, in the order ``adapters`` and ``demo`` list them.
BUILTIN = {
    "claude": "claude",
    "codex": "codex",
    "antigravity": "antigravity",
    "crush": "crush",
    "opencode": "opencode",
    "omp": "omp",
}

# provider id -> its adapter's stdout verdict, where not empty. A hook run outside lich
# prints only this, so it need not load the adapter's module (a test holds this table
# equal to every built-in adapter's ``verdict``).
VERDICTS = {"antigravity": "{}"}
