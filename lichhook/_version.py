"""The one place lichhook's own version number lives.

(The lich-plugin release it names to lich is chosen at install: ``lichhook.contracts.release``
and docs/version.md.)
"""

__version__ = "0.1.0"

# The Pythons this release is tested on: CI runs the default suite, the demo and a real
# install, doctor and uninstall on each (docs/testing.md). doctor names them in its fixes.
TESTED_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
