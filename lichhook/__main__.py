"""lichhook's entry point: ``python -m lichhook``, and every archive's ``__main__.py``.

Run from an archive, two things happen before any lichhook module is imported, because
after that it is too late:

- A hooks archive is held. Python reads an archive's table of contents when it starts,
  and every later import opens the archive again by name and reads at the offsets it
  read then. An install that replaces the archive while a hook runs (an upgrade) would
  hand those imports another file's bytes ("bad local file header") and the hook's
  report would be lost. So a hooks run opens its archive and the complete one beside it
  and imports read the files it opened: on Linux through /proc/self/fd, which reaches
  the very file opened whatever has its name now; on Windows, where a file that is open
  cannot be replaced, install waits until the hook has ended. Elsewhere nothing is held.
  Should the first imports fail all the same (an upgrade landing before the hold, where
  Python cannot read the table of contents again), the hook runs again from the start.
- A user's PYTHONPATH comes after the standard library: run by hand in a project with
  ``PYTHONPATH=.``, the project's ``json.py`` or ``struct.py`` must not stand in for
  Python's. Its folders stay on the path, after the rest, so plugins found there load.

In an archive this file is the first member, stored as is, and its bytes stay the same
from release to release: a hook started just before an upgrade may read it from the new
archive at the old one's offset (tests/test_upgrade_faults.py).
"""

import os
import sys

# The two archives of an installed copy (lichhook.install.copies.stable puts them side by side):
# the registered hooks run the hooks archive, which holds only the hot set
# (lichhook.hotset), and reach every other module in the complete archive beside it.
HOOKS_ARCHIVE = "hooks.pyz"
COMPLETE_ARCHIVE = "lichhook.pyz"

# The archive this process runs from, when a path other than its own reads it
# (lichhook.selfcmd.running_archive).
LICHHOOK_ARCHIVE = None


def held(archive):
    """A path that reads the file ``archive`` names now, for as long as the process
    lives, or ``archive`` itself where no such path exists."""
    try:
        fd = os.open(archive, os.O_RDONLY)
    except OSError:
        return archive  # missing: the imports that need it fail as they always did
    if sys.platform == "win32":
        # Held open, it cannot be replaced; the table of contents Python read at start
        # may be an older file's, so it is read again from the one held (3.10 and newer).
        refresh = getattr(sys.path_importer_cache.get(archive), "invalidate_caches", None)
        if refresh is not None:
            refresh()
        return archive
    path = "/proc/self/fd/%d" % fd
    try:
        if os.path.samestat(os.stat(path), os.fstat(fd)):
            return path
    except OSError:
        pass
    os.close(fd)
    return archive


def standard_library_first(path, environ, flags):
    """Move the folders PYTHONPATH put on ``path`` (sys.path) after every other entry
    but the first (the archive)."""
    if flags.ignore_environment:
        return
    named = [entry for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if not named:
        return
    theirs = {os.path.normcase(os.path.abspath(entry)) for entry in named}

    def is_theirs(entry):
        return os.path.normcase(os.path.abspath(entry)) in theirs

    path[1:] = [e for e in path[1:] if not is_theirs(e)] + [e for e in path[1:] if is_theirs(e)]


# Set in the environment of a hooks run started again (run_again), which never starts
# another.
RUN_AGAIN = "LICHHOOK_RUN_AGAIN"


def run():
    global LICHHOOK_ARCHIVE
    archive = sys.path[0] if sys.path else ""
    try:
        if os.path.isfile(archive):
            standard_library_first(sys.path, os.environ, sys.flags)
            if os.path.basename(archive) == HOOKS_ARCHIVE:
                LICHHOOK_ARCHIVE = os.path.abspath(archive)
                sys.path[0] = held(archive)
                complete = held(os.path.join(os.path.dirname(archive), COMPLETE_ARCHIVE))
                sys.path.append(complete)
                import lichhook

                lichhook.__path__.append(os.path.join(complete, "lichhook"))
        from lichhook.cli import entry
    except Exception:
        if LICHHOOK_ARCHIVE is None or os.environ.get(RUN_AGAIN):
            raise
        sys.exit(run_again(LICHHOOK_ARCHIVE))
    entry()


def run_again(archive):
    """Run this hook again in a new process, from the archive there now, and give its exit
    status.

    Where the table of contents Python read at start cannot be read again from the file
    held (no /proc; Windows' Python 3.9), an upgrade landing between the two leaves the
    first imports reading another file's bytes. Nothing has read stdin or sent anything
    yet, so the hook can still run whole, as the new release. One that cannot be started
    ends as a hook does: exit 0."""
    import subprocess

    if os.environ.get("LICHHOOK_DEBUG", "").strip() == "1":
        sys.stderr.write("lichhook: the archive changed as this hook started; running it again\n")
    flags = [flag for flag, on in (("-I", sys.flags.isolated), ("-S", sys.flags.no_site)) if on]
    env = dict(os.environ)
    env[RUN_AGAIN] = "1"
    try:
        return subprocess.call([sys.executable, *flags, archive, *sys.argv[1:]], env=env)
    except OSError:
        return 0


if __name__ == "__main__":
    run()
