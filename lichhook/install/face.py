"""What install, uninstall and doctor say to a person, and doctor's JSON.

They hand over what happened (files planned or written, harnesses skipped, registrations
and their runs, and every finding as a ``Problem``: harness, sentence, fix, and the
cause it shares with others); this module alone turns it into lines and writes them.
Problems with the same harness, cause and fix are one line with their count. Marks and
colour only on a terminal, never when piped, never with NO_COLOR set; progress only on a
terminal.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from lichhook.install.copies import stable
from lichhook.install.copies.target import current_python
from lichhook.install.quoting import ps_command, sh_quote

try:
    import ctypes
    import msvcrt
except ImportError:  # not Windows, or a Python without _ctypes: no console to ask
    ctypes = msvcrt = None  # type: ignore[assignment]

SCHEMA = 1  # doctor --json's shape (docs/schemas/doctor.json); a change that breaks a reader raises it

OK, NEEDS_YOU, BROKEN, ABSENT = "ok", "needs you", "broken", "absent"
_MARKS = {OK: ("\u2713", "+", "32"), NEEDS_YOU: ("!", "!", "33"), BROKEN: ("\u2717", "x", "31"),
          ABSENT: ("-", "-", "2")}


class Problem(NamedTuple):
    """One thing that keeps a harness from reporting, and its fix. ``cause``: the plural
    phrase problems of one kind share ("hooks not trusted yet"); ``broken``: the harness
    cannot report, rather than waits for a step of the user's. A plain (harness, text,
    fix) tuple is a Problem too."""

    harness: str
    text: str
    fix: str
    cause: Optional[str] = None
    broken: bool = False


Finding = Union[Problem, Tuple[str, str, str]]


def grouped(problems: Iterable[Finding]) -> List[Tuple[Problem, List[str]]]:
    """(the first problem, every text) per harness, cause and fix, in the order found."""
    groups: Dict[tuple, Tuple[Problem, List[str]]] = {}
    for found in problems:
        p = found if isinstance(found, Problem) else Problem(*found)
        first, texts = groups.setdefault((p.harness, p.cause or p.text, p.fix), (p, []))
        if p.text not in texts:
            texts.append(p.text)
        if p.broken and not first.broken:
            groups[(p.harness, p.cause or p.text, p.fix)] = (first._replace(broken=True), texts)
    return list(groups.values())


def said(p: Problem, texts: Sequence[str]) -> str:
    return f"{len(texts)} {p.cause}" if p.cause and len(texts) > 1 else texts[0]


def problem_line(harness: str, text: str, fix: str, lead: str = "problem: ") -> str:
    return f"{lead}{harness}: {text}. Fix: {fix}"


def problem_lines(problems: Iterable[Finding], lead: str = "problem: ") -> List[str]:
    return [problem_line(p.harness, said(p, texts), p.fix, lead) for p, texts in grouped(problems)]


class Style:
    """How ``stream`` shows marks: as symbols in colour on a terminal (unless NO_COLOR),
    as words otherwise."""

    def __init__(self, stream: object, environ: Mapping[str, str]) -> None:
        isatty = getattr(stream, "isatty", None)
        self.terminal = bool(isatty and isatty()) and not environ.get("NO_COLOR") and _takes_colour(stream)
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            "\u2713\u2717".encode(encoding)
            self.symbols = True
        except (UnicodeEncodeError, LookupError):
            self.symbols = False  # a console whose code page lacks them

    def mark(self, state: str) -> str:
        word = f"{state:<9}"
        if not self.terminal:
            return word
        symbol, plain, colour = _MARKS[state]
        return f"\x1b[{colour}m{symbol if self.symbols else plain} {word}\x1b[0m"


def _takes_colour(stream: object) -> bool:
    """Whether a terminal shows colour codes as colour: a Windows console only once asked
    to (virtual terminal processing); else it gets the words, as a pipe does."""
    if sys.platform != "win32":
        return True
    try:
        handle = msvcrt.get_osfhandle(stream.fileno())  # type: ignore[attr-defined]
        mode = ctypes.c_uint32()
        kernel32 = ctypes.windll.kernel32
        return bool(kernel32.GetConsoleMode(handle, ctypes.byref(mode))
                    and kernel32.SetConsoleMode(handle, mode.value | 0x0004))
    except (AttributeError, OSError, ValueError):
        return False


class Progress:
    """One line on stderr, rewritten in place, while a long step runs; nothing when
    stderr is not a terminal (so a pipe or a log gets none of it)."""

    def __init__(self, stream: object) -> None:
        isatty = getattr(stream, "isatty", None)
        self.stream = stream if isatty and isatty() else None
        # A terminal that reports no size says 0 columns; Python before 3.11 passes that on.
        self.width = max(20, (shutil.get_terminal_size().columns or 80) - 1)

    def say(self, text: str) -> None:
        if self.stream is not None:
            self.stream.write("\r" + text[:self.width].ljust(self.width))  # type: ignore[attr-defined]
            self.stream.flush()  # type: ignore[attr-defined]

    def done(self) -> None:
        if self.stream is not None:
            self.say("")
            self.stream.write("\r")  # type: ignore[attr-defined]
            self.stream.flush()  # type: ignore[attr-defined]


def from_home(text: str, home: Optional[str], windows: bool) -> str:
    """``text`` with the home folder written as ``~`` (``%USERPROFILE%`` on Windows)."""
    if not home or len(home.rstrip("\\/")) < 2:
        return text
    home = home.rstrip("\\/")
    return text.replace(home + ("\\" if windows else "/"), "%USERPROFILE%\\" if windows else "~/")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def say(stream: object, *lines: str) -> None:
    """Each line, ended, on ``stream``: how install, uninstall and doctor write."""
    for line in lines:
        stream.write(line + "\n")  # type: ignore[attr-defined]


def fail(command: str, text: str) -> None:
    """What stopped ``command``, on stderr, named for it."""
    say(sys.stderr, f"lichhook {command}: {text}")


def command_line(words: List[str], python: Optional[str] = None) -> str:
    """The line a person types to run this archive's ``words``: with ``python`` when it is
    the interpreter that must run it. On Windows a PowerShell line naming the Python that
    runs this one when no other is needed: there ``python3`` is the Store's installer stub
    on a python.org install, and POSIX quotes do not quote."""
    archive = stable.running_archive_or_none() or "lichhook.pyz"
    if sys.platform == "win32":
        return ps_command([python or current_python(), archive, *words])
    return " ".join([sh_quote(python) if python else "python3", sh_quote(archive), *words])


# -- doctor -----------------------------------------------------------------------------

def state_of(harness: Mapping[str, object], problems: Sequence[Tuple[Problem, List[str]]]) -> str:
    mine = [p for p, _ in problems if p.harness == harness["name"]]
    if any(p.broken for p in mine):
        return BROKEN
    if mine:
        return NEEDS_YOU
    return OK if harness["registered"] != "no" or harness["lich_reads"] else ABSENT


def doctor_json(report: Dict[str, object], problems: Sequence[Finding]) -> Dict[str, object]:
    """doctor's findings as doctor --json prints them (docs/schemas/doctor.json)."""
    groups = grouped(problems)
    harnesses = [dict(h, state=state_of(h, groups)) for h in report["harnesses"]]  # type: ignore[attr-defined]
    return {"schema": SCHEMA, "ok": not groups, **report, "harnesses": harnesses, "problems": [
        {"harness": p.harness, "cause": p.cause, "count": len(texts), "said": said(p, texts), "each": texts,
         "fix": p.fix, "broken": p.broken} for p, texts in groups]}


def _what(h: Mapping[str, object]) -> str:
    """What lich sees in a harness, and whether every registered command ran."""
    regs: List[dict] = h["registrations"]  # type: ignore[assignment]
    ours = [r for r in regs if r["ours"]]
    if h["registered"] == "release plugin":
        seen = "lichhook's release plugin"
    elif ours:
        seen = f"lichhook registered ({plural(len(ours), 'command')})"
    elif h["registered"] == "unknown":
        seen = "cannot tell (a config cannot be read)"
    elif not h["lich_reads"]:
        return "not registered" + (f" (detected: {h['detected']})" if h["detected"] else "; not detected")
    else:
        seen = ""
    if h["lich_reads"]:
        first: object = h["lich_reads"][0]  # type: ignore[index]
        seen += ("; " if seen else "") + f"lich reads {first}"
    runs = [r["run"] for r in regs if r["run"] is not None]
    if not runs:
        return seen
    ran = sum(1 for r in runs if r["ok"])
    unrun = next((r["said"] for r in runs if r["said"].startswith("not run")), None)  # its reason, once
    return seen + ("; every one ran" if ran == len(regs) else f"; {ran} of {len(regs)} ran"
                   + (f" ({unrun})" if unrun else ""))


def doctor_summary(data: Mapping[str, object], style: Style, verbose: str) -> List[str]:
    """One screen: the harnesses, each with its mark, then its problems, one line per cause."""
    lines = [f"lichhook {data['lichhook']} doctor (python {data['python']}; "
             f"{'inside lich' if data['inside_lich'] else 'outside lich'}; "
             f"{'live runs against a stand-in lich' if data['live_runs'] else 'configs read only (--no-run)'})"]
    by_harness: Dict[str, List[str]] = {}
    for p in data["problems"]:  # type: ignore[attr-defined]
        by_harness.setdefault(p["harness"], []).append(problem_line(p["harness"], p["said"], p["fix"]))
    for h in data["harnesses"]:  # type: ignore[attr-defined]
        lines.append(f"{style.mark(h['state'])} {h['name']:<12} {_what(h)}")
        lines += by_harness.pop(h["name"], [])
    for rest in by_harness.values():  # lichhook's own: its archive copies
        lines += rest
    failures: List[str] = data["failures"]  # type: ignore[assignment]
    if failures:
        lines.append(f"recent hook failures: {len(failures)}, the newest: {failures[-1]}")
    count = len(data["problems"])  # type: ignore[arg-type]
    lines.append("verdict: no problem found" if not count else
                 f"verdict: {plural(count, 'problem')}; fix, then run doctor again")
    lines.append(f"every registration, run and failure: {verbose}")
    return lines


def verdict_lines(problems: Sequence[Finding]) -> List[str]:
    """doctor --verbose's last lines: every problem as it was found, with its fix."""
    return [problem_line(*p[:3]) for p in problems] or ["verdict: no problem found"]


def registration_lines(found: Any, python: str, archive: str) -> List[str]:
    """doctor --verbose: one registration (a ``Registered``), with whether its Python and
    archive are there (``python``, ``archive``), and what in it lichhook did not write."""
    tag = "" if found.ours else " (another lichhook archive)"
    lines = [f"    {found.label} in {found.path}{tag}",
             f"      command: {found.text}",
             f"      python:  {found.python} ({python})",
             f"      archive: {found.archive} ({archive})"]
    if found.additions:
        lines.append(f"      customised (install keeps it): {'; '.join(found.additions)}")
    if found.foreign:
        lines.append(f"      not lichhook's: {'; '.join(found.foreign)}")
    return lines


def checked_line(what: str, said: str) -> str:
    """doctor --verbose: what checking a registration's ``what`` (its run, its bytecode) showed."""
    return f"      {what + ':':<8} {said}"


# -- install and uninstall ----------------------------------------------------------------

class FromHome:
    """A text stream that writes paths in the home from ``~`` (``%USERPROFILE%``)."""

    def __init__(self, stream: object, home: Optional[str], windows: bool) -> None:
        self.stream, self.home, self.windows = stream, home, windows

    def write(self, text: str) -> int:
        return self.stream.write(from_home(text, self.home, self.windows))  # type: ignore[attr-defined, no-any-return]


# (harness, what happened to it) pairs: its planned or written files, or its errors
Pairs = Sequence[Tuple[Any, Sequence[Any]]]


def _shown(planned: Sequence[Any]) -> list:
    """The files worth a word: those there before or after."""
    return [p for p in planned if not (p.before is None and p.after is None)]


def plan_lines(plans: Pairs) -> List[str]:
    """``--dry-run``: per harness, what would happen to each file, its notes and its diff."""
    lines = []
    for h, planned in plans:
        lines.append(f"{h.title} ({h.name}):")
        if not _shown(planned):
            lines.append("  nothing to do")
        for p in _shown(planned):
            lines.append(f"  {p.describe(True)}")
            lines += [f"    note: {note}" for note in p.notes]
            if p.changed:
                lines += [f"    {line}" for line in p.diff().splitlines()]
    return lines


def changes_line(name: str, planned: Sequence[Any]) -> str:
    """``name: created a, b; changed c``: one harness's files, by what happened to them."""
    verbs: Dict[str, List[str]] = {}
    for p in _shown(planned):
        words = p.describe()
        at = words.index(p.path)
        verbs.setdefault(words[:at].strip(), []).append(words[at:])
    return f"{name}: " + ("; ".join(f"{verb} {', '.join(paths)}" for verb, paths in verbs.items())
                          or "nothing to do")


def done_lines(done: Pairs, notes: Sequence[Tuple[str, str, str]]) -> List[str]:
    """One line per harness, with what happened to its files; below, ``notes`` and the
    files' own, grouped."""
    notes = [*notes, *((h.name, h.title, note) for h, planned in done for p in planned for note in p.notes)]
    return [changes_line(h.name, planned) for h, planned in done] + note_lines(notes)


def note_lines(notes: Iterable[Tuple[str, str, str]]) -> List[str]:
    """One line per note, from (harness name, title, sentence); a sentence several
    harnesses say alike, but for their names, is one line naming them all."""
    groups: Dict[str, List[Tuple[str, str]]] = {}
    for name, title, text in notes:
        text = text[len(title) + 2:] if text.startswith(title + ": ") else text
        key = text.replace(f"`{name}`", "`\0`").replace(title, "\0")
        groups.setdefault(key, []).append((name, text))
    lines = []
    for key, members in groups.items():
        names = list(dict.fromkeys(name for name, _ in members))
        text = members[0][1] if len(names) == 1 else key.replace("`\0`", "its CLI").replace("\0", "the harness")
        lines.append(f"note: {', '.join(names)}: {text}")
    return lines


def refuse(command: str, failed: Pairs, skipped: Pairs, others_done: bool) -> None:
    """On stderr: each error of a harness that failed or was skipped, then which were
    skipped whole and whether the others were done."""
    lines = [f"lichhook {command}: {h.name}: {e}" for h, errors in [*failed, *skipped] for e in errors]
    names = ", ".join(h.name for h, _ in skipped)
    if skipped and others_done:
        lines.append(f"Skipped {names}: nothing was changed for {'it' if len(skipped) == 1 else 'them'}; "
                     "the other harnesses were done.")
    elif skipped:
        lines.append(f"Skipped {names}. Nothing was changed.")
    say(sys.stderr, *lines)


def closing_line(command: str, done: Pairs, failed: Pairs, todo: bool) -> str:
    """What changed in the harnesses that did not fail, and the next step."""
    broken = {h.name for h, _ in failed}
    names = [h.name for h, _ in done if h.name not in broken]
    changed = sum(1 for h, applied in done if h.name not in broken for p in applied if p.changed)
    if not names:
        return f"done: nothing was {command}ed."
    where = ", ".join(names)
    files = f"{plural(changed, 'file')} changed"
    if command == "uninstall":
        return f"done: lichhook removed from {where} ({files})."
    doctor = command_line(["doctor"])
    if not changed:
        return f"done: nothing to change; lichhook is registered in {where}. To check it runs: {doctor}"
    first = "do what the notes above ask, then " if todo else ""
    return (f"done: lichhook registered in {where} ({files}). Next: {first}start "
            f"{'the harness' if len(names) == 1 else 'each harness'} inside lich; to check: {doctor}")
