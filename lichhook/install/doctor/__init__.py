"""``doctor``: what is registered where, whether it can run, and how to fix what cannot.

Exit 0 when no problem was found, 1 otherwise. Never prints LICH_TOKEN.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lichhook._version import __version__
from lichhook.archive import Bytecode, bytecode_mismatch, interpreter_bytecode, running_bytecode
from lichhook.failures import NAME, describe, folder, recent
from lichhook.install import harnesses
from lichhook.install.plugin import claim, lichplugin, route
from lichhook.install.copies import stable
from lichhook.install.face import (Problem, Progress, Style, checked_line, command_line, doctor_json, doctor_summary,
                                   fail, registration_lines, say, verdict_lines)
from lichhook.install.harness import Env
from lichhook.install.errors import ConfigError
from lichhook.install.doctor.live import LiveCheck
from lichhook.install.disk.ownership import become_home_owner, run_problem
from lichhook.install.copies.target import Target, current_python
from lichhook.lichenv import lich_target
from lichhook.paths import waits_dir
from lichhook.textout import tolerant_stdio


def _exists(path: str | None) -> str:
    if not path:
        return "unreadable"
    if os.path.isfile(path):
        return "exists"
    if not os.path.isabs(path):
        found = shutil.which(path)
        return f"found on PATH at {found}" if found else "NOT FOUND on PATH"
    return "MISSING"


def _install_hint(name: str, python: Optional[str] = None) -> str:
    """The install command that fixes ``name``: with ``python`` when it is the registered
    interpreter that must run it (install compiles the archive for the Python it runs with)."""
    return command_line(["install", name], python)


class Magics:
    """Each interpreter's version and bytecode magic number, asked once per doctor run
    (each answer starts that interpreter); ``run=False`` (``--no-run``) asks none but
    this one."""

    def __init__(self, run: bool = True) -> None:
        self.known: Dict[str, Optional[Bytecode]] = {}
        self.run = run

    def of(self, python: str) -> Optional[Bytecode]:
        if python not in self.known:
            if python == current_python():
                self.known[python] = running_bytecode()
            elif not self.run:
                self.known[python] = None
            else:  # as root, never a Python another user could change (it is not run)
                self.known[python] = None if run_problem(python) else interpreter_bytecode(python)
        return self.known[python]


FLAGS = ("--no-run", "--verbose", "--json")


def main(argv: List[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        say(sys.stdout, "usage: python3 lichhook.pyz doctor [--no-run] [--verbose | --json]\n\nShows, per harness, "
            "whether lichhook is registered and runs: each registered command is run as its harness runs it, "
            "with a sample payload, against a stand-in lich doctor starts on 127.0.0.1 (--no-run: only read the "
            "configs). One line per harness, then its problems, one line per cause; --verbose: every "
            "registration, run and recent hook failure; --json: the findings for scripts (docs/schemas/doctor.json). "
            "Exits 1 when it finds a problem.")
        return 0
    wrong = [a for a in argv if a not in FLAGS]
    if wrong or ("--verbose" in argv and "--json" in argv):
        say(sys.stderr, f"doctor takes --no-run and one of --verbose, --json (got {' '.join(argv)}); "
            "run: python3 lichhook.pyz doctor")
        return 2

    tolerant_stdio()
    verbose = "--verbose" in argv
    out = sys.stdout if verbose else io.StringIO()
    try:
        env = Env()
        become_home_owner(env.home_or_none(), env.environ, "doctor")
        if "--no-run" in argv:
            report, problems = _doctor(env, out)
        else:
            with LiveCheck(env.environ) as check:
                report, problems = _doctor(env, out, check)
    except ConfigError as exc:
        fail("doctor", str(exc))
        return 1
    if "--json" in argv:
        say(sys.stdout, json.dumps(doctor_json(report, problems), indent=2))
    elif verbose:
        say(out, "", *verdict_lines(problems))
    else:
        verbose_line = command_line(["doctor", "--verbose"])
        say(sys.stdout, *doctor_summary(doctor_json(report, problems), Style(sys.stdout, env.environ), verbose_line))
    return 1 if problems else 0


def _doctor(env: Env, out, live: Optional[LiveCheck] = None) -> Tuple[dict, list]:
    """(what doctor found, per harness, as doctor --json shows it; the problems), the
    detail written to ``out`` as it is found."""
    archive = stable.archive_for(running_bytecode())
    target = Target(current_python(), stable.hooks_for(running_bytecode()))
    problems: list = []
    magics = Magics(run=live is not None)
    report: dict = {"lichhook": __version__, "python": target.python, "archive": archive,
                    "hooks_archive": target.archive, "live_runs": live is not None, "harnesses": []}

    say(out, "lichhook doctor")
    say(out, f"  python (this run):  {target.python}")
    say(out, f"  its archive copy:   {archive} ({_exists(archive)})")
    say(out, f"  its hooks archive:  {target.archive} ({_exists(target.archive)})")
    for other in stable.copies(target.root):
        if other != archive:
            say(out, f"  other copy:         {other}")
        mismatch = stable.pair_mismatch(other)
        if mismatch:
            problems.append(("lichhook", mismatch, _install_hint("--all")))
    for copy in dict.fromkeys([archive, *stable.copies(target.root)]):
        hooks = stable.hooks_beside(copy)
        if hooks and os.path.isfile(hooks) and not os.path.isfile(copy):
            # the hooks run from hooks.pyz, which reaches every other module in the
            # complete archive beside it: plugins, the MCP server, wait ops, install
            problems.append(("archive", f"the complete archive {copy} is missing, which the hooks archive "
                             f"{hooks} beside it needs for plugins and every command but the hooks",
                             f"run install again for each harness: {_install_hint('<harness>')}"))
        unsafe = stable.copy_problem(copy)
        if unsafe:
            say(out, f"  UNSAFE:             {unsafe}")
            problems.append(("archive", f"another user could change what the hooks run: {unsafe}",
                             "then run install again for each harness (it writes a new copy of your own)"))

    waits = waits_dir(env.environ)
    say(out, f"  waits folder:       {waits} ({'exists' if os.path.isdir(waits) else 'not created yet'})")

    where = lich_target(env.environ)
    report["inside_lich"] = not isinstance(where, str)
    if isinstance(where, str):
        say(out, f"  inside lich:        no ({where})")
    else:
        say(out, f"  inside lich:        yes (LICH_PORT={where.port}, LICH_SESSION_ID={where.session_id}, LICH_TOKEN set)")

    if live is not None:
        say(out, "  live runs:          each registered command, with a sample payload, against a stand-in lich "
            "on 127.0.0.1")
    # the live runs take seconds: a line of progress, unless the detail is streaming to the terminal
    progress = Progress(sys.stderr if live is not None and out is not sys.stdout else None)
    for h in harnesses.make_all(env):
        progress.say(f"doctor: checking {h.title}")
        report["harnesses"].append(_check(h, target, env, out, problems, magics, live, progress))
    progress.done()
    report["failures"] = _failures(env, out)
    return report, problems


def _check(h, target: Target, env: Env, out, problems: list, magics: Optional[Magics] = None,
           live: Optional[LiveCheck] = None, progress: Optional[Progress] = None) -> dict:
    """Check harness ``h``: the detail to ``out``, its problems to ``problems``; what was
    seen, as doctor --json shows it."""
    magics = magics or Magics()
    say(out, "", f"{h.title} ({h.name})")
    reason = h.detected()
    say(out, f"  detected:   {'yes, ' + reason if reason else 'no'}")
    seen: dict = {"name": h.name, "title": h.title, "detected": reason, "registered": "unknown",
                  "lich_reads": [], "registrations": []}
    try:
        found = h.registrations(target)
    except ConfigError as exc:
        say(out, "  registered: cannot tell (a config cannot be read)")
        problems.append(_unreadable(h, exc))
        return seen
    ours = [f for f in found if f.ours]

    release = route.release_root(h)
    seen["registered"] = "yes" if ours else "release plugin" if release else "no"
    say(out, f"  registered: {'yes' if ours else 'yes, as the release plugin' if release else 'no'}")
    seen["lich_shows"] = []
    beside = _lich_plugin(h, out, problems, bool(ours), seen["lich_reads"], seen["lich_shows"])
    doubled = route.twice(h, found)
    if doubled:
        problems.append((h.name, *doubled))
    missing = h.missing(target, found) if ours else []
    expected = sum(len(w) for w in h.wanted(target).values())
    if ours and expected:
        say(out, f"  hooks:      {expected - len(missing)} of {expected} registered as this release writes them"
            + (f"; missing or out of date: {', '.join(missing)}" if missing else ""))
    for f in found:
        seen["registrations"].append({"label": f.label, "path": f.path, "command": f.text, "python": f.python,
                                      "archive": f.archive, "ours": f.ours,
                                      "run": _registration(h, f, target, out, problems, magics, live, progress)})
    if ours:
        try:
            checks = h.checks(target)
        except ConfigError as exc:
            checks = []
            problems.append(_unreadable(h, exc))
        mods = h.mods()
        if mods is not None:
            seen["mods"] = mods[0]
        for line, problem, fix, *cause in checks + (mods[1] if mods else []):
            say(out, f"  {line}")
            if problem:
                problems.append(Problem(h.name, problem, fix, *cause))
    if release:
        # the user installed the build's release as the harness's plugin: it runs its own
        # archive with `python3`; install would want lichhook's own marketplace instead
        say(out, f"  note: lichhook runs here as the release plugin in {release} (python3 and the archive in "
            f"it); to move to lichhook's own marketplace: {_install_hint(h.name)} --replace")
        return seen
    # Would an install change anything? Then the registration is incomplete or stale. An
    # install changes only lichhook's own words in an entry and keeps what the user added,
    # so a customised entry is not stale, and the fix below never discards additions.
    # Asked with each Python the entries name (one registration may name the same Python
    # in its long and its short form) and this run's, it is stale only if it is for all.
    pythons = [f.python for f in ours if f.python and os.path.isfile(f.python)] + [target.python]
    try:
        for python in dict.fromkeys(pythons):
            # each Python's registration runs the copy for its version
            magic = magics.of(python)
            if magic is not None:
                check = Target(python, stable.hooks_for(magic, target.root), target.windows, target.short_path)
            elif python == target.python:
                check = target
            elif not magics.run:  # --no-run: the copy its entries name tells its version
                named = [target.archive_of(f.archive) for f in ours if f.python == python and f.archive]
                hooks = next((a for a in named if a and os.path.basename(a) == stable.HOOKS_NAME), None)
                if hooks is None:
                    continue
                check = Target(python, hooks, target.windows, target.short_path)
            else:
                continue  # cannot be run: named as a problem above
            planned = [e.plan() for e in h.install(check)]
            pending = [p for p in planned if p.changed]
            if not pending:
                break
    except ConfigError as exc:
        if not beside:  # else it is lich-plugin's file, named above with its fix
            problems.append(_unreadable(h, exc))
        return seen
    for note in dict.fromkeys(n for p in planned for n in p.notes):
        say(out, f"  note: {note}")
    if ours and pending and not beside:  # with lich-plugin beside, install refuses: its fix is named
        files_ = ", ".join(p.path for p in pending)
        kept = " (it keeps what you added to lichhook's entries)" if any(f.additions for f in ours) else ""
        lacking = f"; no hook as this release writes it for {', '.join(missing)}" if missing else ""
        problems.append((h.name, f"the registration is incomplete or out of date ({files_}){lacking}",
                         _install_hint(h.name) + kept))
    elif reason and not ours and not beside:
        problems.append((h.name, "detected but lichhook is not registered", _install_hint(h.name)))
    return seen


def _registration(h, f, target: Target, out, problems: list, magics: Magics, live: Optional[LiveCheck],
                  progress: Optional[Progress]) -> Optional[dict]:
    """Check registration ``f`` of harness ``h``: the detail to ``out``, its problems to
    ``problems``; its live run, as doctor --json shows it (None: it was not run)."""
    say(out, *registration_lines(f, _exists(f.python), _exists(f.archive)))
    if f.foreign:
        # Python runs such an option (code after -c) instead of lichhook's hook: not run
        # by the live check, named here
        problems.append(Problem(h.name, f"{f.label} in {f.path} passes Python options lichhook does not "
                                f"write, before its archive: {'; '.join(f.foreign)}", f"remove them from that "
                                f"entry, or remove the entry and run {_install_hint(h.name)}",
                                "commands pass Python options lichhook does not write", broken=True))
        return None
    if f.python is None or f.archive is None:
        problems.append(Problem(h.name, f"{f.label} in {f.path} holds a command lichhook cannot read back",
                                f"run {_install_hint(h.name)} to write it again, or remove that entry from "
                                f"{f.path}", "commands lichhook cannot read back", broken=True))
        return None
    if _exists(f.python) in ("MISSING", "NOT FOUND on PATH"):
        problems.append(Problem(h.name, f"{f.label} in {f.path} runs a Python that is missing ({f.python})",
                                f"run install {h.name} again with a working Python: {_install_hint(h.name)}"
                                if f.ours else f"remove that entry from {f.path}, or point it at a working "
                                "Python", f"commands run a Python that is missing ({f.python})", broken=True))
    if _exists(f.archive) in ("MISSING", "NOT FOUND on PATH"):
        problems.append(Problem(h.name, f"{f.label} in {f.path} runs an archive that is missing ({f.archive})",
                                _install_hint(h.name) if f.ours else f"remove that entry from {f.path}",
                                f"commands run an archive that is missing ({f.archive})", broken=True))
        return None
    if not f.ours or _exists(f.python) != "exists":
        return None
    if f.python != current_python() and run_problem(f.python):
        problems.append((h.name, f"{f.label} in {f.path} runs {f.python}, which root does not run to check it: "
                         f"{run_problem(f.python)}",
                         f"point it at a Python only root can change: {_install_hint(h.name)}"))
        return None
    if f.python != current_python() and live is None:
        say(out, checked_line("bytecode", "not checked (--no-run starts no interpreter)"))
        return None
    mismatch = bytecode_mismatch(Path(f.archive), f.python, magics.of(f.python))
    if mismatch:
        problems.append(Problem(h.name, f"{f.label} in {f.path}: {mismatch}", _install_hint(h.name, f.python),
                                f"commands run {f.python} with an archive compiled for another Python", broken=True))
        return None
    if live is None:
        return None
    if progress is not None:
        progress.say(f"doctor: running {h.name}'s {f.label}")
    outcome = live.check(f, target.windows)
    say(out, checked_line("run", outcome.said))
    if outcome.problem:
        fix = f"run {_install_hint(h.name)} {outcome.fix}" if outcome.reinstall else outcome.fix
        problems.append(Problem(h.name, outcome.problem, fix or "", "commands fail their live run "
                                "(doctor --verbose says how)", broken=True))
    return {"ok": not outcome.problem and not outcome.said.startswith("not run"), "said": outcome.said}


def _unreadable(h, exc: ConfigError) -> Problem:
    """The problem of a config of ``h`` that cannot be read, whichever check met it."""
    return Problem(h.name, str(exc), "fix that file by hand, then run doctor again", broken=True)


def _lich_plugin(h, out, problems: list, registered: bool, reads: list, shows: list) -> bool:
    """Print where lich would read its companion plugin as installed in ``h`` (and add it
    to ``reads``, what lich shows of it to ``shows``); lich-plugin beside lichhook is a
    problem (both send every report). Whether a plugin lich reads is there."""
    try:
        seen = lichplugin.find(h)
    except ConfigError as exc:
        say(out, "  lich-plugin: cannot tell")
        problems.append(_unreadable(h, exc))
        return False
    for s in seen:
        say(out, f"  lich reads: {s.describe()}")
        reads.append(s.describe())
        if s.ours:
            lines, mismatch = claim.shown(h.name, h.title, s.version, h.env.environ, h.env.windows)
            say(out, *(f"  {line}" for line in lines))
            shows += [line.split(": ", 1)[1] for line in lines]
            if mismatch:
                problems.append(Problem(h.name, mismatch[0], mismatch[1], "lich reads a release this lichhook would not name"))

    foreign = [s for s in seen if not s.ours]  # lichhook's own beside its entries: route.twice
    if seen and not foreign and not registered:
        return True  # lichhook's release, installed as the plugin: registered that way
    module = getattr(h, "module_path", None)
    for s in foreign:
        if registered and module is not None and s.path == module():
            # lich's own install or update rewrote lichhook's module whole: lich-plugin runs, once
            problems.append((h.name, f"lich replaced lichhook's module with lich-plugin {s.version} ({s.where}), "
                                     "as lich's own install or update of its plugin does: lich-plugin reports here, "
                                     "lichhook no longer does", f"keep lich-plugin: uninstall {h.name}; or have "
                                     f"lichhook back: {_install_hint(h.name)} --replace"))
        elif registered:
            problems.append((h.name, f"lich-plugin {s.version} is installed beside lichhook ({s.where}): every "
                                     "report is sent twice", f"remove it: {s.remove}; or run "
                                     f"{_install_hint(h.name)} --replace, which removes it and prints how to put "
                                     "it back"))
        else:
            say(out, f"  note: lich-plugin reports for this harness; to move to lichhook: "
                f"{_install_hint(h.name)} --replace")
    return bool(foreign)


def _failures(env: Env, out) -> List[str]:
    """The hooks' recent failures, as they recorded them in the state folder, oldest first."""
    found = recent(env.environ, 10)
    where = os.path.join(folder(env.environ), NAME)
    said = [describe(entry) for entry in found]
    say(out, "", f"Recent hook failures ({where})", *(f"  {line}" for line in said or ["none recorded"]))
    return said
