"""One line per decision on stderr, only when LICHHOOK_DEBUG=1.

A hook's stderr can reach the operator or the model, so it stays silent by default.
Messages are built by the caller and must never contain the lich token.
"""

# No ``from __future__ import annotations``: that line imports __future__ at run time
# (~0.1 ms) and this module runs on every hook, so annotations that name
# type-checking-only types are written as strings.

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping


class Debug:
    def __init__(self, environ: "Mapping[str, str]", prefix: str = "lichhook") -> None:
        self.on = environ.get("LICHHOOK_DEBUG", "").strip() == "1"
        self.prefix = prefix

    def __call__(self, message: str) -> None:
        if not self.on:
            return
        try:
            sys.stderr.write(f"{self.prefix}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
