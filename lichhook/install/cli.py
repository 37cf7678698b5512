"""``install`` and ``uninstall``: register lichhook in harnesses, or take it out again.

Every file is planned before any is written. A harness with a config that cannot be
read, parsed or written safely is skipped whole (none of its files change) and named
with the reason; the others are done, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import zipfile
from typing import Dict, List, Optional

from lichhook.install import harnesses
from lichhook.install.plugin import claim, lichplugin, replace, route
from lichhook.install.copies import assemble, madefolders, stable
from lichhook.install.disk import files, ownership
from lichhook.install.copies.assemble import oldest_python
from lichhook.install.face import (FromHome, Problem, Progress, closing_line, done_lines, fail, plan_lines,
                                   problem_lines, refuse, say)
from lichhook.install.harness import Env
from lichhook.install.errors import AssembleError, ConfigError
from lichhook.install.disk.ownership import Owners, become_home_owner, run_problem
from lichhook.archive import Bytecode, interpreter_bytecode, running_bytecode
from lichhook.install.copies.target import Target, current_python
from lichhook.textout import tolerant_stdio

HARNESS_LIST = ", ".join(harnesses.NAMES)


def _parser(command: str):
    what = {"install": "register lichhook in", "uninstall": "remove lichhook's registrations from"}[command]
    parser = argparse.ArgumentParser(
        prog=f"python3 lichhook.pyz {command}",
        description=f"{what.capitalize()} coding-agent harnesses. Harnesses: {HARNESS_LIST}.",
    )
    parser.add_argument("harness", nargs="*", metavar="HARNESS", help=f"one of: {HARNESS_LIST}")
    all_help = ("every harness detected on this machine (its config folder exists or its program is on PATH)"
                if command == "install" else "every harness")
    parser.add_argument("--all", action="store_true", help=all_help)
    parser.add_argument("--dry-run", action="store_true", help="print what would change, per file, and change nothing")
    if command == "install":
        parser.add_argument("--replace", action="store_true",
                            help="where lich-plugin is installed, remove it first (through the harness's own CLI, or "
                                 "by setting its files aside) and print how to put it back")
        parser.add_argument("--lich-version", metavar="VERSION",
                            help="the lich to name a lich-plugin release for (as `lich version` prints it), "
                                 "instead of asking the lich found (docs/version.md)")
    return parser


def _choose(parser, args, env: Env, detected_only: bool) -> list:
    unknown = [n for n in args.harness if n not in harnesses.NAMES]
    if unknown:
        parser.error(f"unknown harness {', '.join(unknown)}; choose from {HARNESS_LIST}, or --all")
    if not args.harness and not args.all:
        parser.error(f"name the harnesses ({HARNESS_LIST}), or pass --all")
    names = list(dict.fromkeys(args.harness))
    chosen = [harnesses.make(n, env) for n in names]
    if args.all:
        for h in harnesses.make_all(env):
            if h.name not in names and (not detected_only or h.detected()):
                chosen.append(h)
    return chosen


def _plan(chosen: list, target: Target, action: str) -> tuple:
    """([(harness, [Planned])], [(harness, [error sentences])]): each harness is planned
    on its own, and one whose files cannot all be handled is skipped whole, so a bad
    file stops only its own harness."""
    plans, skipped = [], []
    for h in chosen:
        planned, errors = [], []
        try:
            for edit in getattr(h, action)(target):
                try:
                    planned.append(edit.plan())
                except ConfigError as exc:
                    errors.append(str(exc))
        except ConfigError as exc:
            errors.append(str(exc))
        if errors:
            skipped.append((h, errors))
        else:
            plans.append((h, planned))
    return plans, skipped


def _apply(plans: list, owners: Owners, command: str) -> tuple:
    """Write each harness's planned files: ([(harness, [Planned])], [(harness, [errors])])."""
    done, failed = [], []
    for h, planned in plans:
        applied = []
        try:
            for p in planned:
                applied.append(files.apply(p.edit, owners, seen=p.before))
        except ConfigError as exc:
            changed = [p.path for p in applied if p.changed]
            extra = f" (already changed: {', '.join(changed)}; run {command} {h.name} again)" if changed else ""
            failed.append((h, [f"{exc}{extra}"]))
        done.append((h, applied))
    return done, failed


def install_main(argv: List[str]) -> int:
    return _guarded("install", _install, argv)


def uninstall_main(argv: List[str]) -> int:
    return _guarded("uninstall", _uninstall, argv)


def _guarded(command: str, run, argv: List[str]) -> int:
    tolerant_stdio()
    try:
        return run(argv)
    except ConfigError as exc:
        fail(command, str(exc))
        return 1


def _install(argv: List[str]) -> int:
    parser = _parser("install")
    args = parser.parse_args(argv)
    env = Env()
    if args.lich_version:
        env.environ[claim.OVERRIDE] = args.lich_version
    become_home_owner(env.home_or_none(), env.environ, "install")
    chosen = _choose(parser, args, env, detected_only=True)
    if not chosen:
        say(sys.stdout, f"No harness detected on this machine (looked for {HARNESS_LIST}); name one to install anyway.")
        return 0
    source = stable.running_archive_or_none()
    if source is not None:
        return _install_archive(args, env, chosen, source, source)
    # Installed with pip or pipx (or run from a clone): the hooks still run an archive,
    # assembled from this installed lichhook (lichhook.install.copies.assemble).

    try:
        data = assemble.assembled()
    except AssembleError as exc:
        fail("install", f"cannot assemble the archive the hooks run: {exc}.\n"
             "Install lichhook into this Python with its dependencies (pip install or pipx install, from a clone, "
             "a wheel or an sdist), or run install from the archive: python3 build_zipapp.py && "
             "python3 dist/lichhook.pyz install ...")
        return 1
    with tempfile.TemporaryDirectory(prefix="lichhook-") as tmp:
        path = os.path.join(tmp, stable.ARCHIVE_NAME)
        with open(path, "wb") as f:
            f.write(data)
        code = _install_archive(args, env, chosen, path, f"the lichhook installed in {assemble.where_installed()}")
    if code == 0 and sys.prefix != sys.base_prefix:
        say(sys.stdout, f"note: the hooks run {current_python()}, the Python of the virtual environment lichhook is "
            f"installed in ({sys.prefix}); run lichhook uninstall --all before you remove that environment "
            "(pipx uninstall lichhook), or the hooks stop running.")
    return code


def _install_archive(args, env: Env, chosen: list, source: str, shown: str) -> int:
    """Install with the complete archive at ``source`` (``shown`` names it to the user)."""
    bytecode = running_bytecode()
    dest = stable.archive_for(bytecode)
    target = Target(current_python(), stable.hooks_for(bytecode))
    unsafe = stable.folder_problem(dest)
    if unsafe:
        fail("install", f"the hooks would run {target.archive}, which another user could change: {unsafe}; "
             "then run install again. Nothing was changed.")
        return 1
    chosen, blocked, replacing = _lich_plugin(chosen, args.replace)
    plans, skipped = _plan(chosen, target, "install")
    skipped = blocked + skipped
    out = sys.stdout
    copy = bool(plans) and not stable.up_to_date(dest, source, bytecode.magic)
    compiled = f"with bytecode for Python {bytecode.version}, and its hooks archive {target.archive}"
    if args.dry_run:
        if plans:
            say(out, f"archive: would copy {shown} to {dest}, {compiled}" if copy else f"archive: {dest} is up to date")
        say(out, *(f"{h.title} ({h.name}): would remove {seen.describe()} first"
                   for h, _ in plans for seen in replacing.get(h.name, ())))
        say(out, *plan_lines(plans), *(line for h, _ in plans for line in route.dry_run(h)),
            "Dry run: nothing was changed.")
        refuse("install", [], skipped, False)
        return 1 if skipped else 0
    if plans:
        plans, unreplaced = _replace(plans, replacing, out)
        skipped += unreplaced
    if not plans:
        refuse("install", [], skipped, False)
        return 1
    owners = Owners(env.home_or_none(), env.environ)
    try:
        if copy:
            stable.copy_archive(stable.prepared(source), dest, owners)
    except ConfigError as exc:
        fail("install", str(exc) + ("" if getattr(exc, "partly_done", False) else "\nNothing was changed."))
        return 1
    out = FromHome(sys.stdout, env.home_or_none(), env.windows)
    runs = f"the hooks run {target.python} {target.archive}"
    say(out, f"archive: copied {shown} to {dest}, compiled for Python {bytecode.version}; {runs}" if copy
        else f"archive: {dest} (up to date); {runs}")
    done, failed = _apply(plans, owners, "install")
    _claim(done, target, env, owners, out)
    notes: list = []
    _after(done, failed, lambda h: h.after_install(target, owners), "install", notes)
    todo = []
    for h, applied in done:
        if any(p.changed for p in applied):
            notes += [(h.name, h.title, note) for note in h.notes(target)]
        todo += [Problem(h.name, problem, fix, *cause) for _, problem, fix, *cause in _checks(h, target) if problem]
    say(out, *done_lines(done, notes), *problem_lines(todo, "note: "))
    refuse("install", failed, skipped, True)
    say(out, *_tend_copies(env, target, source=source, owners=owners))
    _remember_folders(target, owners)
    say(out, closing_line("install", done, failed, bool(todo)))
    return 1 if skipped or failed else 0


def _claim(done: list, target: Target, env: Env, owners: Owners, out) -> None:
    """Write the release each installed harness now claims where its hooks read it, and say
    which lich it was chosen for."""
    if not done:
        return
    lich = claim.lich_of(env.environ, env.windows)
    path = claim.claims_path(target.archive)
    claims = claim.read_claims(path)
    claims.update({h.name: claim.harness_claim(h) for h, _ in done})
    if lich.version:
        claims[claim.LICH] = lich.version
    data = claim.claims_bytes(claims)
    if files.read(path) != data:  # a second install changes nothing
        files.write_whole(path, data, 0o644, owners)
    measured = f"lich {lich.version}" if lich.version else "an unknown lich"
    say(out, f"lich-plugin release named for {measured} ({lich.how}): "
        + ", ".join(f"{h.name} {claims[h.name]}" for h, _ in done))


def _remember_folders(target: Target, owners: Optional[Owners]) -> None:
    try:
        madefolders.remember(target.root, list(ownership.MADE), owners)
    except (ConfigError, OSError) as exc:
        fail("install", f"could not record the folders it made ({exc}); uninstall will leave them.")


def _lich_plugin(chosen: list, replace: bool) -> tuple:
    """(harnesses to plan, [(harness, [why skipped])], {name: [lich-plugin installs to
    remove first]}): a harness where lich-plugin is installed is skipped, naming the
    command that removes it, unless ``replace``; one whose record cannot be read too."""
    keep, blocked, replacing = [], [], {}
    for h in chosen:
        h.replacing = replace
        try:
            seen = lichplugin.foreign(h) or route.beside_config(h)
        except ConfigError as exc:
            blocked.append((h, [str(exc)]))
            continue
        if seen and not replace:
            blocked.append((h, [
                f"{s.describe()} is installed in {h.title}; with lichhook beside it every report would be sent "
                f"twice. Remove it ({s.remove}) and run install {h.name} again, or run install {h.name} --replace, "
                "which removes it and prints how to put it back" for s in seen]))
            continue
        if seen:
            replacing[h.name] = seen
        keep.append(h)
    return keep, blocked, replacing


def _replace(plans: list, replacing: dict, out) -> tuple:
    """Remove lich-plugin where asked, before lichhook's files are written: the plans of
    the harnesses where that worked, and the others as skipped."""
    kept, failed = [], []
    for h, planned in plans:
        try:
            for seen in replacing.get(h.name, ()):
                back = replace.remove(h, seen)
                say(out, f"{h.title} ({h.name}): removed {seen.describe()}"
                    + (f"; to put it back: {back}" if back else ""))
        except ConfigError as exc:
            failed.append((h, [str(exc)]))
            continue
        kept.append((h, planned))
    return kept, failed


def _after(done: list, failed: list, step, command: str, notes: list) -> None:
    """A harness CLI's part of install or uninstall, once the harness's files are written
    (not for a harness whose files failed); what it says goes to ``notes``."""
    broken = {h.name for h, _ in failed}
    progress = Progress(sys.stderr)
    for h, _ in done:
        if h.name in broken:
            continue
        progress.say(f"{command}: {h.title}'s part")
        try:
            notes += [(h.name, h.title, line) for line in step(h)]
        except ConfigError as exc:
            failed.append((h, [f"{exc}; run {command} {h.name} again"]))
    progress.done()


def _checks(h, target: Target) -> list:
    """The harness's own view of what install wrote (nothing when it cannot be read)."""
    try:
        return h.checks(target)
    except ConfigError:
        return []


def _uninstall(argv: List[str]) -> int:
    parser = _parser("uninstall")
    args = parser.parse_args(argv)
    env = Env()
    become_home_owner(env.home_or_none(), env.environ, "uninstall")
    chosen = _choose(parser, args, env, detected_only=False)
    target = Target(current_python(), stable.hooks_for(running_bytecode()))
    plans, skipped = _plan(chosen, target, "uninstall")
    if args.dry_run:
        say(sys.stdout, *plan_lines(plans), "Dry run: nothing was changed.")
        refuse("uninstall", [], skipped, False)
        return 1 if skipped else 0
    out = FromHome(sys.stdout, env.home_or_none(), env.windows)
    owners = Owners(env.home_or_none(), env.environ)
    done, failed = _apply(plans, owners, "uninstall")
    notes: list = []
    _after(done, failed, lambda h: h.after_uninstall(target), "uninstall", notes)
    say(out, *done_lines(done, notes))
    refuse("uninstall", failed, skipped, bool(plans))
    say(out, *_tend_copies(env, target))
    say(out, *madefolders.prune(target.root, owners))
    say(out, closing_line("uninstall", done, failed, False))
    return 1 if skipped or failed else 0


def copy_users(env: Env, target: Target) -> tuple:
    """({archive copy: [(harness name, Registered)]}, [why it cannot be told]) over every
    harness's configs: which copies a registration runs, and with which Python."""
    users: Dict[str, list] = {}
    unknown = []
    for h in harnesses.make_all(env):
        try:
            found = [f for f in h.registrations(target) if f.ours]
        except ConfigError as exc:
            unknown.append(f"lichhook cannot tell whether {h.name} still runs it, as {exc}")
            continue
        for f in found:
            copy = target.copy_of(f.archive) if f.archive else None
            if copy:
                users.setdefault(copy, []).append((h.name, f))
    return users, unknown


def _tend_copies(env: Env, target: Target, source: Optional[str] = None,
                 owners: Optional[Owners] = None) -> List[str]:
    """After install or uninstall, every archive copy but the one just installed: a copy
    no registration runs is removed (only once every config was read: one that cannot be
    read may still run it); after an install, a copy that one does run is brought to the
    same lichhook, compiled for the Python that runs it. What was done, a line per copy."""
    mine = target.copy_of(target.archive)
    copies = [c for c in stable.copies(target.root) if source is None or c != mine]
    if not copies:
        return []
    users, unknown = copy_users(env, target)
    said = []
    for copy in copies:
        runs = users.get(copy, [])
        if runs and source is not None:
            said.append(_refresh(copy, runs, source, owners))
        elif runs:
            name, found = runs[0]
            said.append(f"archive: kept {copy}: {name} still runs it ({found.path})")
        elif unknown:
            said.append(f"archive: kept {copy}: {'; '.join(unknown)}")
        else:
            problem = stable.remove_copy(copy)
            said.append(f"archive: removed {copy} (no harness runs it any more)" if problem is None else
                        f"archive: could not remove {copy} ({problem}); delete it by hand.")
    return [line for line in said if line]


def _too_old(python: str, bytecode: Optional[Bytecode], source: str) -> Optional[str]:
    """Why ``python`` cannot run the archive ``source`` (a distribution in it needs a newer
    Python: an archive assembled from a newer Python's installed packages), or None."""
    version = bytecode.version if bytecode else None
    try:
        with open(source, "rb") as f:
            needs = oldest_python(f.read())
    except (OSError, ValueError, zipfile.BadZipFile):
        return None  # prepared_for names the problem with the archive
    if not version or needs is None:
        return None
    (major, minor), who = needs
    if tuple(int(part) for part in version.split(".")) >= (major, minor):
        return None
    return f"{who.replace('-', ' ', 1)} in this lichhook needs Python {major}.{minor} or newer, not {version}"


def _refresh(copy: str, runs: list, source: str, owners: Optional[Owners]) -> Optional[str]:
    """Bring ``copy``, which other registrations run, to the lichhook just installed,
    compiled by the Python they run it with; what was done (None: it was up to date)."""
    names = ", ".join(dict.fromkeys(name for name, _ in runs))
    pythons = [f.python for _, f in runs if f.python and os.path.isabs(f.python) and os.path.isfile(f.python)]
    if not pythons:
        return (f"archive: left {copy} as it is: the Python {names} runs it with is missing; "
                f"run install {names.split(', ')[0]} again with a working Python")
    python = pythons[0]

    refused = run_problem(python)
    if refused:
        return (f"archive: left {copy} as it is: {names} runs it with {python}, which root does not run "
                f"({refused}); run install {names.split(', ')[0]} again with a Python only root can change")
    bytecode = interpreter_bytecode(python)
    if bytecode is not None and stable.up_to_date(copy, source, bytecode.magic):
        return None
    too_old = _too_old(python, bytecode, source)
    if too_old:
        return (f"archive: left {copy} as it is: {too_old}, and {names} run it with {python}; run install "
                f"{names.split(', ')[0]} with that Python from the release archive (lichhook.pyz), or "
                "with a newer Python")
    try:
        stable.copy_archive(stable.prepared_for(python, source), copy, owners)
    except ConfigError as exc:
        return f"archive: left {copy} as it is ({exc}); {names} still run the lichhook there"
    verb = "runs" if len(dict.fromkeys(name for name, _ in runs)) == 1 else "run"
    return f"archive: updated {copy}, which {names} {verb} with {python}, compiled by it"
