"""``doctor``: what is registered where, whether it can run, and how to fix what cannot.

Exit 0 when no problem was found, 1 otherwise. Never prints LICH_TOKEN.
"""

from __future__ import annotations

import os
import sys

from lichhook.archive import Bytecode, running_bytecode
from lichhook.install import harnesses, stable
from lichhook.install.harness import Env
from lichhook.install.jsonmerge import ConfigError
from lichhook.install.target import Target, current_python

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, List, Optional


def _exists(path: str | None) -> str:
    if not path:
        return "unreadable"
    if os.path.isfile(path):
        return "exists"
    if not os.path.isabs(path):
        import shutil

        found = shutil.which(path)
        return f"found on PATH at {found}" if found else "NOT FOUND on PATH"
    return "MISSING"


def _install_hint(name: str, python: Optional[str] = None) -> str:
    """The install command that fixes ``name``: with ``python`` when it is the registered
    interpreter that must run it (install compiles the archive for the Python it runs with)."""
    from lichhook.install.quoting import sh_quote

    archive = stable.running_archive_or_none() or "lichhook.pyz"
    return f"{sh_quote(python) if python else 'python3'} {sh_quote(archive)} install {name}"


class Magics:
    """Each interpreter's version and bytecode magic number, asked once per doctor run
    (each answer starts that interpreter)."""

    def __init__(self) -> None:
        self.known: Dict[str, Optional[Bytecode]] = {}

    def of(self, python: str) -> Optional[Bytecode]:
        if python not in self.known:
            from lichhook.archive import interpreter_bytecode

            self.known[python] = running_bytecode() if python == current_python() else interpreter_bytecode(python)
        return self.known[python]


def main(argv: List[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print("usage: python3 lichhook.pyz doctor\n\nShows, per harness, whether lichhook is registered and can run; "
              "exits 1 when it finds a problem.")
        return 0
    if argv:
        sys.stderr.write(f"doctor takes no arguments (got {' '.join(argv)}); run: python3 lichhook.pyz doctor\n")
        return 2
    from lichhook.textout import tolerant_stdio

    tolerant_stdio()
    try:
        return _doctor(Env(), sys.stdout)
    except ConfigError as exc:
        sys.stderr.write(f"lichhook doctor: {exc}\n")
        return 1


def _doctor(env: Env, out) -> int:
    archive = stable.archive_for(running_bytecode())
    target = Target(current_python(), stable.hooks_for(running_bytecode()))
    problems: list = []
    magics = Magics()

    out.write("lichhook doctor\n")
    out.write(f"  python (this run):  {target.python}\n")
    out.write(f"  its archive copy:   {archive} ({_exists(archive)})\n")
    out.write(f"  its hooks archive:  {target.archive} ({_exists(target.archive)})\n")
    for other in stable.copies(target.root):
        if other != archive:
            out.write(f"  other copy:         {other}\n")
    from lichhook.paths import waits_dir

    waits = waits_dir(env.environ)
    out.write(f"  waits folder:       {waits} ({'exists' if os.path.isdir(waits) else 'not created yet'})\n")
    from lichhook.lichenv import lich_target

    where = lich_target(env.environ)
    if isinstance(where, str):
        out.write(f"  inside lich:        no ({where})\n")
    else:
        out.write(f"  inside lich:        yes (LICH_PORT={where.port}, LICH_SESSION_ID={where.session_id}, LICH_TOKEN set)\n")

    for h in harnesses.make_all(env):
        _check(h, target, env, out, problems, magics)

    out.write("\n")
    if not problems:
        out.write("verdict: no problem found\n")
        return 0
    for harness_name, problem, fix in problems:
        out.write(f"problem: {harness_name}: {problem}. Fix: {fix}\n")
    return 1


def _check(h, target: Target, env: Env, out, problems: list, magics: Optional[Magics] = None) -> None:
    magics = magics or Magics()
    out.write(f"\n{h.title} ({h.name})\n")
    reason = h.detected()
    out.write(f"  detected:   {'yes, ' + reason if reason else 'no'}\n")
    try:
        found = h.registrations(target)
    except ConfigError as exc:
        out.write("  registered: cannot tell (a config cannot be read)\n")
        problems.append((h.name, str(exc), "fix that file by hand, then run doctor again"))
        return
    ours = [f for f in found if f.ours]
    out.write(f"  registered: {'yes' if ours else 'no'}\n")
    missing = h.missing(target, found) if ours else []
    expected = sum(len(w) for w in h.wanted(target).values())
    if ours and expected:
        out.write(f"  hooks:      {expected - len(missing)} of {expected} registered as this release writes them"
                  + (f"; missing or out of date: {', '.join(missing)}" if missing else "") + "\n")
    for f in found:
        tag = "" if f.ours else " (another lichhook archive)"
        out.write(f"    {f.label} in {f.path}{tag}\n")
        out.write(f"      command: {f.text}\n")
        out.write(f"      python:  {f.python} ({_exists(f.python)})\n")
        out.write(f"      archive: {f.archive} ({_exists(f.archive)})\n")
        if f.additions:
            out.write(f"      customised (install keeps it): {'; '.join(f.additions)}\n")
        if f.python is None or f.archive is None:
            problems.append((h.name, f"{f.label} in {f.path} holds a command lichhook cannot read back",
                             f"run {_install_hint(h.name)} to write it again, or remove that entry from {f.path}"))
            continue
        if _exists(f.python) in ("MISSING", "NOT FOUND on PATH"):
            problems.append((h.name, f"{f.label} in {f.path} runs a Python that is missing ({f.python})",
                             f"run install {h.name} again with a working Python: {_install_hint(h.name)}"
                             if f.ours else f"remove that entry from {f.path}, or point it at a working Python"))
        if _exists(f.archive) in ("MISSING", "NOT FOUND on PATH"):
            problems.append((h.name, f"{f.label} in {f.path} runs an archive that is missing ({f.archive})",
                             _install_hint(h.name) if f.ours else f"remove that entry from {f.path}"))
        elif f.ours and _exists(f.python) == "exists":
            mismatch = _bytecode_mismatch(f.archive, f.python, magics)
            if mismatch:
                problems.append((h.name, f"{f.label} in {f.path}: {mismatch}", _install_hint(h.name, f.python)))
    if ours:
        try:
            checks = h.checks(target)
        except ConfigError as exc:
            checks = []
            problems.append((h.name, str(exc), "fix that file by hand, then run doctor again"))
        for line, problem, fix in checks:
            out.write(f"  {line}\n")
            if problem:
                problems.append((h.name, problem, fix))
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
            else:
                continue  # cannot be run: named as a problem above
            planned = [e.plan() for e in h.install(check)]
            pending = [p for p in planned if p.changed]
            if not pending:
                break
    except ConfigError as exc:
        problems.append((h.name, str(exc), "fix that file by hand, then run doctor again"))
        return
    for note in dict.fromkeys(n for p in planned for n in p.notes):
        out.write(f"  note: {note}\n")
    if ours and pending:
        files_ = ", ".join(p.path for p in pending)
        kept = " (it keeps what you added to lichhook's entries)" if any(f.additions for f in ours) else ""
        lacking = f"; no hook as this release writes it for {', '.join(missing)}" if missing else ""
        problems.append((h.name, f"the registration is incomplete or out of date ({files_}){lacking}",
                         _install_hint(h.name) + kept))
    elif reason and not ours:
        problems.append((h.name, "detected but lichhook is not registered", _install_hint(h.name)))



def _bytecode_mismatch(archive: str, python: str, magics: Magics) -> Optional[str]:
    from pathlib import Path

    from lichhook.archive import bytecode_mismatch

    return bytecode_mismatch(Path(archive), python, magics.of(python))
