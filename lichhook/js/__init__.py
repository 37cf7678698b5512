"""The JavaScript that runs inside harnesses (docs/architecture.md), read as data: a package so that
``pkgutil.get_data("lichhook.js", ...)`` reads the complete archive when a command starts in the hooks one."""
