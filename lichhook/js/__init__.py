"""The JavaScript that runs inside harnesses, read as data: a package so that the complete archive reads it (docs/architecture.md)."""
