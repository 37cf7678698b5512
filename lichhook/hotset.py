"""The hot set: every lichhook module a hook or a wait op may import, named once.

A hook is a new process on every harness event, so the modules it imports are under a
start-up budget (docs/performance.md); everything else (install, doctor, the MCP server,
the demo) runs rarely and is not. This list is the one place that says which is which:

- install's hooks archive (``lichhook.archive.hooks_archive``) holds exactly these
  modules, and reaches every other one in the complete archive beside it;
- ``tests/test_coldstart.py`` fails when a hot command imports a lichhook module that
  is not here, and when a module that is not here uses the cold-start style: imports
  inside functions, ``TYPE_CHECKING`` guards, annotations spelt as strings. Every
  other module is ordinary Python, imports at the top.

The hot style, stated here once for every hot module: a module on a hook's import path
(each hot command's allow-list in ``tests/test_coldstart.py``, and every built-in adapter
and contract module) imports neither ``__future__`` nor ``typing`` at run time. So it has
no ``from __future__ import annotations`` (that line imports ``__future__`` on every
hook: docs/performance.md has the cost), spells annotations that name typing-only types
as strings behind ``TYPE_CHECKING = False``, and imports what a command may not need
inside the functions that need it. ``tests/test_coldstart.py`` names the module that
breaks this. The hot modules a hook imports only off its usual path (on a failure, on
Windows, or for the stand-in: that test's ``OFF_THE_USUAL_PATH``) may be ordinary Python.

Hooks never import this module (install and the tests do), so it is ordinary Python.
"""

from lichhook.archive import archive_bytes, members, stamp

# lichhook's top-level modules that are hot.
HOT_MODULES = (
    "lichhook",
    "lichhook.__main__",  # every archive's entry point, as __main__.py
    "lichhook._version",
    "lichhook.adapter",
    "lichhook.cli",
    "lichhook.client",
    "lichhook.diskio",
    "lichhook.failures",
    "lichhook.hook",
    "lichhook.ids",
    "lichhook.jsonint",
    "lichhook.lichenv",
    "lichhook.paths",
    "lichhook.payload",
    "lichhook.report",
    "lichhook.selfcmd",
    "lichhook.serve",
    "lichhook.titles",
    "lichhook.transcripts",
    "lichhook.trust",
    "lichhook.winacl",
)
# Packages that are hot as a whole: a hooks run finds a package's modules in the hooks
# archive alone, so a package is in or out as one.
HOT_PACKAGES = (
    "lichhook.adapters",
    "lichhook.coldstart",
    "lichhook.contracts",
    "lichhook.waits",
)
# The archive's own entry point, outside the lichhook package.
ARCHIVE_MAIN = "__main__"


def is_hot(module: str) -> bool:
    """Whether the module named ``module`` (``lichhook.waits.api``) is in the hot set."""
    return module in HOT_MODULES or any(module == p or module.startswith(p + ".") for p in HOT_PACKAGES)


def module_of(member: str) -> str:
    """The module an archive member's path stands for: ``lichhook/waits/__init__.pyc`` ->
    ``lichhook.waits``; a file that is not Python gives its folder's package."""
    if member.endswith((".py", ".pyc")):
        parts = member[:member.rindex(".")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
    else:
        parts = member.split("/")[:-1]
    return ".".join(parts)


def is_hot_member(member: str) -> bool:
    """Whether the hooks archive holds the archive member ``member`` (a module's source,
    its bytecode, or a file inside a hot package)."""
    module = module_of(member)
    return module == ARCHIVE_MAIN or (module.startswith("lichhook") and is_hot(module))


def hooks_archive(complete: bytes) -> bytes:
    """The hooks archive of the archive whose bytes are ``complete``: the same format,
    shebang and member times, holding only the hot set's members, sources and bytecode
    as they are there. Its bytes follow from ``complete``'s alone."""
    shebang, files = members(complete)
    return archive_bytes({name: data for name, data in files.items() if is_hot_member(name)}, shebang,
                         stamp(complete))
