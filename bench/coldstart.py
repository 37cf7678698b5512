"""Cold-start benchmark: lichhook's hooks as registered, against the baselines they must beat.

    python3 build_zipapp.py
    python3 bench/coldstart.py [--python PY ...] [--runs 25] [--json out.json]

Every case runs the exact command ``install`` registers (``<python> -I -S <copy> ...``,
built by lichhook's own install code) with the archive copy install would give that
Python (compiled by it), for every Python 3.9 to 3.15 found here (or those named with
``--python``) and for a virtual environment whose site imports something slow (a ``.pth``
file, as some tools install). Each Python is held against its own empty zipapp, run the
same way, and all against the sh + curl (+ jq) session-start client lichhook replaces.
Beside each harness's session-start report, the events every session sends most
(``event_cases``: a prompt, a tool about to run, a tool done, a turn's end) run as
``<python> -I -S <copy> <provider> <event>``, held to the report's budgets.

Every case is a fresh process started from here with ``subprocess``, its payload on stdin,
timed in this process (fork and exec included), with the CPU time it and its children
used. After warm-up the cases of every Python run interleaved, one of each per round with
the starting case rotating, so a burst of load elsewhere on the machine lands on every
case alike. Each case is checked on every run (exit status, stdout, and for a report that
lich accepted it); a case with a failed run shows FAIL instead of a verdict.

Standard library only, with the test helpers of this checkout (``testkit``: the clean
environment, lich's stand-in) and lichhook's own install code (``lichhook.install``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # testkit/ (shared with the tests) lives at the top of the checkout
    sys.path.insert(0, str(ROOT))

from testkit.environment import clean_env  # noqa: E402
from testkit.servers import QuickLich, standin  # noqa: E402
DEFAULT_PYZ = ROOT / "dist" / "lichhook.pyz"

TOKEN = "bench-token-7f3a"  # URL-safe on purpose: the shell client does not encode it
LICH_SESSION = "bench-lich-session"
NODE = "benchnode"
REFERENCE_RELEASE = "0.19.2"  # the shell client release the reference mirrors

# case group -> [(baseline it is held against, largest allowed ratio of medians)]
BUDGETS = {
    "no-op": [("empty zipapp", 1.25), ("shell client", 0.60)],
    "report": [("empty zipapp", 1.25), ("shell client", 0.60)],
    "event": [("empty zipapp", 1.25), ("shell client", 0.60)],
    "hook": [("empty zipapp", 1.25)],
    "wait": [("empty zipapp", 1.40)],
}
BASELINES = ("python -c pass", "empty zipapp", "shell client")
# The shell client's label says which tool read the id (jq, or sed when jq is missing).
SHELL_LABELS = {True: "sh+curl+jq", False: "sh+curl+sed (no jq)"}
SHARED = ""  # the interpreter label of the cases every Python is held against (the shell client)
# What a slow start-up hook imports, from a .pth in a virtual environment's site-packages.
SLOW_SITE_MODULES = ("asyncio", "email.parser", "logging", "http.client")


# --- lich ------------------------------------------------------------------------------


def start_standin():
    """lich's stand-in (shared with the tests) on 127.0.0.1, judging every report as lich
    does; it holds the bench's token and session. Stop it with ``.stop()``."""
    return standin(token=TOKEN, session_id=LICH_SESSION).start()


# --- cases ---------------------------------------------------------------------------


class Case:
    """One command to time, run by one interpreter (``interp``, its label; SHARED for the
    shell client). ``check(proc)`` returns None when the run did its job, else why not;
    ``prepare()`` runs untimed before each run."""

    def __init__(self, name: str, group: str, argv: list, stdin: bytes = b"", env: Optional[dict] = None,
                 check: Optional[Callable[[subprocess.CompletedProcess], Optional[str]]] = None,
                 prepare: Optional[Callable[[], None]] = None, note: str = "", interp: str = SHARED) -> None:
        self.name, self.group, self.argv, self.stdin = name, group, argv, stdin
        self.env, self.check, self.prepare, self.note = env, check, prepare, note
        self.interp = interp
        self.label = name
        self.times: list = []
        self.cpu: list = []  # user + system CPU seconds of the process and its children
        self.failures: list = []
        self.skipped = ""

    def run_once(self) -> float:
        if self.prepare:
            self.prepare()
        before = _children_cpu()
        start = time.perf_counter()
        proc = subprocess.run(self.argv, input=self.stdin, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if before is not None:
            self.cpu.append(_children_cpu() - before)
        problem = None
        if proc.returncode != 0:
            problem = f"exit {proc.returncode}: {proc.stderr.decode('utf-8', 'replace').strip()[-300:]}"
        elif self.check:
            problem = self.check(proc)
        if problem:
            self.failures.append(problem)
        return elapsed


def _children_cpu():
    """User + system CPU seconds of every child reaped so far (None where unknown).

    CPU time is much less disturbed than wall time by other work on a shared machine."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clean_environment(home: Path) -> dict:
    """This environment without anything that would change what a hook does, and with
    every per-user folder in ``home`` so no one's own plugins or waits are touched."""
    home.mkdir(parents=True, exist_ok=True)
    return dict(clean_env(home), LICHHOOK_NODE=NODE)


def write_empty_zipapp(folder: Path, python: str) -> Path:
    """A zipapp whose ``__main__`` does nothing, with its legacy unchecked-hash ``.pyc``,
    written by the project's own archive writer so it has the same format, and by the
    interpreter under test so the ``.pyc`` is one it uses."""
    out = folder / "empty.pyz"
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from lichhook.archive import legacy_pyc, write_archive; source = b'pass\\n'; "
        "write_archive({'__main__.py': source, '__main__.pyc': legacy_pyc('__main__.py', source)}, Path(sys.argv[2]))"
    )
    subprocess.run([python, "-I", "-S", "-c", code, str(ROOT), str(out)], check=True)
    return out


# The shell client lichhook replaces, rebuilt from its documented behaviour: all three
# LICH_* set or nothing; the payload read whole with cat; the id from jq, or from sed
# when jq is missing; a body built by interpolation; one curl bounded to 1 s.
CONVERSATION_ID_SH = r"""# conversation_id: the harness id on stdin's JSON (Antigravity: conversationId)
conversation_id() {
  if command -v jq >/dev/null 2>&1 && [ -z "$BENCH_NO_JQ" ]; then
    jq -r '.conversationId // .session_id // empty'
  else
    sed -n -e 's/.*"conversationId" *: *"\([^"]*\)".*/\1/p' \
           -e 's/.*"session_id" *: *"\([^"]*\)".*/\1/p' | head -n 1
  fi
}
"""

REPORT_SH = r"""#!/bin/sh
# reference session-start client (sh + curl + jq), for timing only
if [ -z "$LICH_PORT" ] || [ -z "$LICH_TOKEN" ] || [ -z "$LICH_SESSION_ID" ]; then
  exit 0
fi
release=@RELEASE@
provider=${1:-claude}
. "${0%/*}/conversation-id.sh"
payload=$(cat)
id=$(printf '%s' "$payload" | conversation_id)
[ -n "$id" ] || exit 0
body="{\"session_id\":\"$LICH_SESSION_ID\",\"provider_session_id\":\"$id\",\"provider\":\"$provider\"}"
curl -s -o /dev/null --max-time 1 -X POST "http://127.0.0.1:$LICH_PORT/session-start?token=$LICH_TOKEN" \
  -H 'Content-Type: application/json' -H "X-Lich-Plugin: $release" -d "$body" || true
exit 0
"""


def write_reference_client(folder: Path) -> Path:
    (folder / "conversation-id.sh").write_text(CONVERSATION_ID_SH, encoding="utf-8")
    script = folder / "report-session-start.sh"
    script.write_text(REPORT_SH.replace("@RELEASE@", REFERENCE_RELEASE), encoding="utf-8")
    script.chmod(0o755)
    return script


def archive_adapters(pyz: Path) -> dict:
    """provider -> {sample, verdict, id}: each built-in adapter's own sample, read from the
    archive, and the id it should report."""
    code = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from importlib import import_module\n"
        "from lichhook.adapters import BY_PROVIDER\n"
        "out = {}\n"
        "for provider, d in BY_PROVIDER.items():\n"
        "    a = import_module('lichhook.adapters.' + d.module).ADAPTER\n"
        "    sample = dict(a.sample)\n"
        "    out[provider] = {'sample': sample, 'verdict': a.verdict or '', 'id': a.session_id(sample, {})}\n"
        "print(json.dumps(out))\n"
    )
    ok, out = ask_archive(code, pyz)
    if not ok:
        raise SystemExit(f"coldstart: cannot read the adapters from {pyz}:\n{out}")
    return out


def ask_archive(code: str, pyz: Path, *args: str) -> tuple:
    """Run ``code`` (which prints one JSON value) with ``pyz`` and ``args`` as its
    arguments: (True, the value) or (False, its stderr)."""
    done = subprocess.run([sys.executable, "-I", "-c", code, str(pyz), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        return False, done.stderr.decode(errors="replace")
    return True, json.loads(done.stdout)


def report_check(lich, provider: str, expected_id: str, verdict: str):
    def check(proc) -> str | None:
        if proc.stdout.decode("utf-8", "replace") != verdict:
            return f"stdout {proc.stdout[:80]!r}, expected {verdict!r}"
        reports = lich.take()
        if not reports:
            return "no report arrived"
        last = reports[-1]
        if last.status != 204:
            return f"report refused ({last.status}: {last.verdict})"
        got = (last.accepted["provider"], last.accepted["provider_session_id"])
        if got != (provider, expected_id):
            return f"reported {got[0]}/{got[1]}, expected {provider}/{expected_id}"
        return None

    return check


def silent_check(proc) -> str | None:
    return None if not proc.stdout else f"stdout {proc.stdout[:80]!r}, expected nothing"


def json_check(predicate, what: str):
    def check(proc) -> str | None:
        try:
            value = json.loads(proc.stdout)
        except ValueError:
            return f"stdout is not JSON: {proc.stdout[:120]!r}"
        return None if predicate(value) else f"{what}: {proc.stdout[:160]!r}"

    return check


def archive_has(pyz: Path, *names: str) -> bool:
    with zipfile.ZipFile(pyz) as zf:
        present = set(zf.namelist())
    return any(name in present for name in names)


# --- the interpreters, and what install registers for each ---------------------------------


class Interpreter:
    """A Python the cases run with: ``python`` as a registration names it, ``label`` for
    the tables."""

    def __init__(self, python: str, label: str, note: str = "") -> None:
        self.python, self.label, self.note = python, label, note


def version_of(python: str) -> Optional[str]:
    """"3.11.7" for a Python that runs, else None."""
    try:
        done = subprocess.run([python, "-I", "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode().strip() if done.returncode == 0 else None


def found_pythons() -> list:
    """Every distinct Python 3.9 to 3.15 here: pyenv's versions, then each ``python3.X``
    on PATH (pyenv's shims, which start a shell script first, left out)."""
    candidates = []
    for minor in range(9, 16):
        version = f"3.{minor}"
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            path = os.path.join(folder, f"python{version}")
            if folder and "shims" not in folder.split(os.sep) and os.path.isfile(path):
                candidates.append(path)
    seen, found = set(), []
    for path in candidates:
        real = os.path.realpath(path)
        if real not in seen and version_of(path):
            seen.add(real)
            found.append(path)
    return found


def label_of(python: str, version: str) -> str:
    where = "pyenv" if os.sep + ".pyenv" + os.sep in python else os.path.dirname(python)
    return f"{version} {where}"


def slow_site_venv(base: str, folder: Path) -> Interpreter:
    """A virtual environment of ``base`` whose site runs a ``.pth`` that imports
    SLOW_SITE_MODULES at every start, as some tools' start-up hooks do."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, stdout=subprocess.DEVNULL)
    python = str(folder / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    Path(site, "slowstart.py").write_text("".join(f"import {m}\n" for m in SLOW_SITE_MODULES), encoding="utf-8")
    Path(site, "slowstart.pth").write_text("import slowstart\n", encoding="utf-8")
    version = version_of(python) or "?"
    return Interpreter(python, f"{version} venv, slow .pth",
                       f"a venv of {base} whose site imports {', '.join(SLOW_SITE_MODULES)} through a .pth")


def registered(python: str, pyz: Path, data: Path):
    """The install ``python`` would make: its copy of ``pyz``, compiled by it (the complete
    archive and its hooks archive), where install puts it under ``data``, and the Target
    every hook registration names."""
    from lichhook.archive import interpreter_bytecode
    from lichhook.install.copies import stable
    from lichhook.install.copies.target import Target

    bytecode = interpreter_bytecode(python)
    if bytecode is None:
        raise SystemExit(f"coldstart: {python} cannot be run")
    stable.copy_archive(stable.prepared_for(python, str(pyz)), stable.archive_for(bytecode, str(data)))
    return Target(python, stable.hooks_for(bytecode, str(data)), windows=False)


def registered_commands(target) -> dict:
    """What install writes for ``target``, as argv: each harness's report, the Claude Code
    hooks (a shell runs those lines, so they are split as it splits them), what the
    opencode and omp modules spawn, and the prefix of the ``wait`` commands the hooks
    print (the hook's own Python, flags and archive)."""
    from lichhook.install.harnesses.claude import Claude
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harness import Env
    from lichhook.install.harnesses.modules import baked_flags, baked_paths, module_source

    env = Env({"HOME": "/nonexistent", "PATH": ""}, windows=False)  # entries are only rendered
    claude = {" ".join(w.sub): w.entry["command"] for ws in Claude(env).wanted(target).values() for w in ws}
    lines = {
        "claude": claude["claude"],
        "claude-code session-start": claude["claude-code session-start"],
        "claude-code stop": claude["claude-code stop"],
        "codex": Codex(env).wanted(target)["SessionStart"][0].entry["command"],  # the start report
        # the bare start report; install registers these two naming their event, which
        # the event cases below time
        "antigravity": target.sh_line("antigravity"),
        "crush": target.sh_line("crush"),
    }
    argv = {name: shlex.split(line) for name, line in lines.items()}
    for kind in ("opencode", "omp"):
        module = module_source(kind, target)
        python, archive = baked_paths(module)
        argv[kind] = [python, *baked_flags(module), archive, kind]
    argv["wait"] = target.argv("wait")
    return argv


# --- waits folders -------------------------------------------------------------------------


def fill_waits(pyz: Path, env: dict, waits_dir: Path, names: int, per_name: int, prefix: str) -> Optional[str]:
    """Open ``per_name`` waits for each of ``names`` names through the real ``wait add``,
    a few processes at a time. Returns None, or why the folder could not be filled."""
    def add(n: int, k: int) -> list:
        return [sys.executable, str(pyz), "wait", "add", "--by", f"{prefix}{n}", "--session", f"{prefix}-session-{n}",
                "--what", f"reply from reviewer {k} on change {n}-{k}", *(["--family", "ci.build"] if k % 2 else []),
                "--waits-dir", str(waits_dir)]

    jobs = [add(n, k) for k in range(per_name) for n in range(names)]

    def one(argv):
        return subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    first = one(jobs[0])
    if first.returncode != 0:
        return f"`wait add` failed (exit {first.returncode}): {first.stderr.decode(errors='replace').strip()[-200:]}"
    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2))) as pool:
        for done in pool.map(one, jobs[1:]):
            if done.returncode != 0:
                return f"`wait add` failed while filling (exit {done.returncode}): {done.stderr.decode(errors='replace').strip()[-200:]}"
    return None


class Fills:
    """The two waits folders the hook and wait cases start from, filled once and copied
    for each interpreter: one session with ``hook_waits`` open waits, and ``names`` names
    holding ``waits`` waits between them. ``problem`` says why they could not be made."""

    def __init__(self, args, pyz: Path, work: Path) -> None:
        env = clean_environment(work / "fill-home")
        self.hook, self.waits = work / "fill-hook-waits", work / "fill-waits"
        self.session = "hooked-session-0"
        per_name = max(1, args.waits // max(1, args.names))
        self.problem = (fill_waits(pyz, env, self.hook, 1, args.hook_waits, "hooked")
                        or fill_waits(pyz, env, self.waits, args.names, per_name, "name"))


# --- one interpreter's cases ------------------------------------------------------------------


def interpreter_cases(interp: Interpreter, args, work: Path, server, quick, adapters: dict, fills: Fills) -> list:
    folder = work / f"py{len(list(work.glob('py*')))}"
    folder.mkdir()
    target = registered(interp.python, args.pyz, folder / "data")
    argv = registered_commands(target)
    env = clean_environment(folder / "home")
    lich = dict(env, LICH_PORT=str(server.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=LICH_SESSION)
    from lichhook.install.copies.target import INTERPRETER_FLAGS

    python, flags = interp.python, list(INTERPRETER_FLAGS)  # the baselines start the same way

    def case(name: str, group: str, command: list, stdin: bytes = b"", **kw) -> Case:
        return Case(name, group, command, stdin, interp=interp.label, **kw)

    claude = adapters["claude"]
    cases = [
        case("python -c pass", "baseline", [python, *flags, "-c", "pass"], env=env),
        case("empty zipapp", "baseline", [python, *flags, str(write_empty_zipapp(folder, python))], env=env),
        case("no-op: claude, no LICH_*", "no-op", argv["claude"], json.dumps(claude["sample"]).encode(), env=env,
             check=silent_check),
    ]
    for provider, info in adapters.items():
        cases.append(case(f"report: {provider}", "report", argv[provider], json.dumps(info["sample"]).encode(),
                          env=lich, check=report_check(server, provider, info["id"], info["verdict"])))
    cases += event_cases(interp, args.pyz, target, folder, quick)
    cases += hook_cases(interp, argv, folder, env, fills, args)
    cases += wait_cases(interp, argv, folder, env, fills)
    return cases


# The events every session sends most, per harness: (provider, event word, which of its
# payloads in the adapter's life, the contracts lich gets once the card has its title).
EVENT_CASES = (
    ("claude", "UserPromptSubmit", 0, ("session-state",)),
    ("claude", "PreToolUse", 0, ("session-state",)),
    ("claude", "PostToolUse", 1, ("session-state", "session-touched")),
    ("claude", "Stop", 0, ("session-state",)),
    ("codex", "PreToolUse", 0, ("session-state",)),
    ("antigravity", "PreInvocation", 1, ("session-start", "session-state")),
    ("antigravity", "PreToolUse", 0, ("session-state",)),
    ("crush", "PreToolUse", 1, ("session-start", "session-touched")),
    ("opencode", "session.status", 0, ("session-state",)),
    ("omp", "tool_call", 0, ("session-state",)),
)
# What the harness reads on stdout for the events above (lichhook.adapters holds them; the
# benchmark checks the archive prints exactly this).
BY_VERDICT = {("antigravity", "PreInvocation"): "{}", ("antigravity", "PreToolUse"): '{"decision":"allow"}'}


def archive_lives(pyz: Path, folder: Path) -> dict:
    """provider -> [(event, payload)]: each built-in adapter's own session (its ``life``),
    read from the archive; the files its payloads name land in ``folder``."""
    code = (
        "import json, os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from importlib import import_module\n"
        "from lichhook.adapters import BY_PROVIDER\n"
        "out = {}\n"
        "for provider, d in BY_PROVIDER.items():\n"
        "    folder = os.path.join(sys.argv[2], provider)\n"
        "    os.makedirs(folder, exist_ok=True)\n"
        "    out[provider] = import_module('lichhook.adapters.' + d.module).ADAPTER.life(folder)\n"
        "print(json.dumps(out))\n"
    )
    ok, out = ask_archive(code, pyz, str(folder))
    return out if ok else {}


def events_check(lich, session: str, verdict: str, contracts: tuple):
    def check(proc) -> str | None:
        if proc.stdout.decode("utf-8", "replace") != verdict:
            return f"stdout {proc.stdout[:80]!r}, expected {verdict!r}"
        reports = lich.take()
        mine = [r for r in reports if r.accepted and r.accepted.get("session_id") == session]
        refused = [r for r in reports if r.status != 204]
        if refused:
            return f"report refused ({refused[0].status}: {refused[0].verdict})"
        got = tuple(r.contract for r in mine)
        return None if got == contracts else f"lich got {got}, expected {contracts}"

    return check


def event_cases(interp: Interpreter, pyz: Path, target, folder: Path, lich) -> list:
    """One case per common harness event (EVENT_CASES), as the harness would run it
    registered: ``<python> -I -S <hooks archive> <provider> <event>``, its payload from
    the adapter's own session, inside lich. Each is a card of its own, so after the
    warm-up its title is known and the case measures the steady state (a Stop still reads
    the transcript's end for a newer title). lich is played by testkit's QuickLich: it
    answers at once, as lich's Go server does, and judges each report afterwards with the
    stand-in's rules, so a refused one still fails the case; the stand-in's own 0.4 ms per
    answer would be counted against each report."""
    lives = archive_lives(pyz, folder / "lives")
    home = folder / "event-home"
    cases = []
    for provider, event, nth, contracts in EVENT_CASES:
        name = f"event: {provider} {event}"
        steps = [payload for step, payload in lives.get(provider, []) if step == event]
        if len(steps) <= nth:
            cases.append(skipped(name, "event", "the archive's adapter has no such event in its session",
                                 interp.label))
            continue
        session = f"bench-{provider}-{event}"
        env = dict(clean_environment(home), LICH_PORT=str(lich.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=session)
        verdict = BY_VERDICT.get((provider, event), "")
        cases.append(Case(name, "event", target.argv(provider, event), json.dumps(steps[nth]).encode(),
                          env=env, check=events_check(lich, session, verdict, contracts), interp=interp.label))
    return cases


def hook_cases(interp: Interpreter, argv: dict, folder: Path, env: dict, fills: Fills, args) -> list:
    names = ("claude-code session-start", "claude-code stop")
    if fills.problem:
        return [skipped(n, "hook", fills.problem, interp.label) for n in names]
    waits_dir = folder / "hook-waits"
    shutil.copytree(fills.hook, waits_dir)
    hook_env = dict(env, LICHHOOK_WAITS_DIR=str(waits_dir))
    session = fills.session
    start = {"session_id": session, "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
             "cwd": "/home/u/proj", "hook_event_name": "SessionStart", "source": "startup"}
    stop = {"session_id": session, "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": "/home/u/proj", "hook_event_name": "Stop", "stop_hook_active": False}
    counter = waits_dir / "stops" / f"{session}.count"

    def reset_strikes() -> None:
        # Every timed Stop meets a fresh counter, so each one takes the refusing path.
        try:
            counter.unlink()
        except FileNotFoundError:
            pass

    def context_names_session(value) -> bool:
        return session in json.dumps(value)

    def blocks(value) -> bool:
        return isinstance(value, dict) and value.get("decision") == "block"

    return [
        Case(names[0], "hook", argv[names[0]], json.dumps(start).encode(), env=hook_env, interp=interp.label,
             check=json_check(context_names_session, "no session id in the context")),
        Case(names[1], "hook", argv[names[1]], json.dumps(stop).encode(), env=hook_env, interp=interp.label,
             check=json_check(blocks, f"did not block with {args.hook_waits} open waits"), prepare=reset_strikes),
    ]


def wait_cases(interp: Interpreter, argv: dict, folder: Path, env: dict, fills: Fills) -> list:
    names = ("wait list", "wait add")
    if fills.problem:
        return [skipped(n, "wait", fills.problem, interp.label) for n in names]
    waits_dir = folder / "waits"
    shutil.copytree(fills.waits, waits_dir)
    wait_env = dict(env, LICHHOOK_WAITS_DIR=str(waits_dir))

    def ok(value) -> bool:
        return isinstance(value, dict) and value.get("ok") is True

    return [
        Case(names[0], "wait", argv["wait"] + ["list", "--by", "name0", "--session", "name-session-0"],
             env=wait_env, check=json_check(ok, "not ok"), interp=interp.label),
        Case(names[1], "wait", argv["wait"] + ["add", "--by", "name1", "--session", "name-session-1",
                                               "--what", "one more review"],
             env=wait_env, check=json_check(ok, "not ok"), interp=interp.label),
    ]


def skipped(name: str, group: str, why: str, interp: str) -> Case:
    case = Case(name, group, [], interp=interp)
    case.skipped = why
    return case


def shell_case(server, adapters: dict, work: Path) -> list:
    sh, curl, jq = shutil.which("sh"), shutil.which("curl"), shutil.which("jq")
    if not (sh and curl):
        return []
    claude = adapters["claude"]
    env = clean_environment(work / "shell-home")
    lich = dict(env, LICH_PORT=str(server.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=LICH_SESSION)
    note = "" if jq else "jq not found: the reference reads the id with sed"
    case = Case("shell client", "baseline", [sh, str(write_reference_client(work)), "claude"],
                json.dumps(claude["sample"]).encode(), env=lich, check=report_check(server, "claude", claude["id"], ""),
                note=note)
    case.label = SHELL_LABELS[bool(jq)]
    return [case]


def build_cases(args, interpreters: list, work: Path, server, quick) -> list:
    adapters = archive_adapters(args.pyz)
    fills = Fills(args, args.pyz, work)
    cases = shell_case(server, adapters, work)
    for interp in interpreters:
        cases += interpreter_cases(interp, args, work, server, quick, adapters, fills)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        cases = [c for c in cases if c.group == "baseline" or any(w in c.name for w in wanted)]
    return cases


# --- timing and results ----------------------------------------------------------------


def measure(cases: list, runs: int, warmup: int) -> None:
    live = [c for c in cases if not c.skipped]
    for _ in range(warmup):
        for case in live:
            case.run_once()
    for case in live:
        case.failures.clear()
        case.cpu.clear()
    for r in range(runs):
        k = r % len(live)
        for case in live[k:] + live[:k]:
            case.times.append(case.run_once())


def spread(times: list) -> tuple:
    if len(times) < 2:
        return times[0], times[0]
    cuts = statistics.quantiles(times, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def summarize(cases: list) -> list:
    """One row per case: its times, its ratios to its own interpreter's baselines and to
    the shared shell client (wall and CPU), and a verdict per budget for each."""
    def key(case: Case, name: str) -> tuple:
        return (SHARED if name == "shell client" else case.interp), name

    wall = {(c.interp, c.name): statistics.median(c.times) for c in cases if c.times}
    cpu = {(c.interp, c.name): statistics.median(c.cpu) for c in cases if c.cpu}
    labels = {c.name: c.label for c in cases}
    results = []
    for case in cases:
        row: dict = {"interpreter": case.interp, "case": case.label, "group": case.group, "argv": case.argv,
                     "note": case.note, "skipped": case.skipped or None}
        mine = (case.interp, case.name)
        if case.times:
            p10, p90 = spread(case.times)
            row.update({
                "runs": len(case.times),
                "median_ms": round(wall[mine] * 1e3, 2),
                "p10_ms": round(p10 * 1e3, 2),
                "p90_ms": round(p90 * 1e3, 2),
                "min_ms": round(min(case.times) * 1e3, 2),
                "times_ms": [round(t * 1e3, 3) for t in case.times],
                "cpu_median_ms": round(cpu[mine] * 1e3, 2) if mine in cpu else None,
                "ratios": {labels.get(b, b): round(wall[mine] / wall[key(case, b)], 3)
                           for b in BASELINES if key(case, b) in wall},
                "cpu_ratios": {labels.get(b, b): round(cpu[mine] / cpu[key(case, b)], 3)
                               for b in BASELINES if mine in cpu and key(case, b) in cpu and cpu[key(case, b)]},
                "failures": len(case.failures),
                "first_failure": case.failures[0] if case.failures else None,
            })
        budgets = []
        for against, limit in BUDGETS.get(case.group, ()):
            label = labels.get(against, against)
            ratio, cpu_ratio = row.get("ratios", {}).get(label), row.get("cpu_ratios", {}).get(label)
            budgets.append({"against": label, "max_ratio": limit, "ratio": ratio, "cpu_ratio": cpu_ratio,
                            "verdict": verdict(case, ratio, limit), "cpu_verdict": verdict(case, cpu_ratio, limit)})
        row["budgets"] = budgets
        if not budgets and case.failures:
            row["budgets"] = [{"verdict": "FAIL", "cpu_verdict": "FAIL"}]
        results.append(row)
    return results


def verdict(case: Case, ratio: Optional[float], limit: float) -> str:
    if case.skipped:
        return "SKIP"
    if case.failures:
        return "FAIL"
    if ratio is None:
        return "n/a"
    return "PASS" if ratio <= limit else "OVER"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = None
    if hasattr(os, "getloadavg"):
        load = [round(x, 2) for x in os.getloadavg()]
    return {"cpu": cpu, "cores": os.cpu_count(), "system": f"{platform.system()} {platform.release()}", "load": load}


def interpreter(python: str) -> dict:
    # What start-up alone imported from outside the standard library through site .pth
    # files (the light customize hooks of distributions aside): a lean interpreter imports
    # nothing there. The cases skip site (-S); this says what they are spared.
    # (3.9 has no sys.stdlib_module_names: there a module from a site-packages folder counts.)
    code = (
        "import sys; std = getattr(sys, 'stdlib_module_names', None); loaded = list(sys.modules); "
        "files = {m: getattr(sys.modules[m], '__file__', None) for m in loaded}; "
        "import os; packages = (os.sep + 'site-packages' + os.sep, os.sep + 'dist-packages' + os.sep); "
        "extra = sorted({m.split('.')[0] for m in loaded} - set(std)) if std else "
        "sorted({m.split('.')[0] for m in loaded if files[m] and any(p in files[m] for p in packages)}); "
        "print(' '.join(m for m in extra if m not in ('__main__', 'sitecustomize', 'usercustomize', '_distutils_hack'))); "
        "import platform; print(sys.executable); "
        "print(platform.python_implementation(), platform.python_version(), '|', sys.version.replace(chr(10), ' '))"
    )
    done = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    site_extra, executable, version = done.stdout.decode().splitlines()[:3]
    return {"python": python, "executable": executable, "version": version, "startup_imports": site_extra.split()}


def fmt_ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(rows: list) -> str:
    """One interpreter's rows (and the shared shell client) as a Markdown table."""
    present: list = []
    for r in rows:
        for b in r.get("ratios", {}):
            if b not in present and b != "python -c pass":
                present.append(b)
    head = (["case", "median ms", "p10-p90 ms", "cpu ms"] + [f"x {b}" for b in present]
            + [f"x {b} (cpu)" for b in present] + ["budget", "verdict (wall / cpu)"])
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(head) - 3) + ["---", "---"]) + "|"]
    for r in rows:
        budgets = r.get("budgets") or []
        limits = ", ".join(f"<= {b['max_ratio']:.2f}x {b['against']}" for b in budgets if "against" in b)
        verdicts = ", ".join(f"{b['verdict']} / {b['cpu_verdict']}" for b in budgets)
        if r.get("skipped"):
            cells = [r["case"], "-", "-", "-"] + ["-"] * (2 * len(present)) + [limits, "SKIP"]
        else:
            cpu = r.get("cpu_median_ms")
            cells = [r["case"], f"{r['median_ms']:.1f}", f"{r['p10_ms']:.1f}-{r['p90_ms']:.1f}",
                     "-" if cpu is None else f"{cpu:.1f}"]
            cells += [fmt_ratio(r["ratios"].get(b)) for b in present]
            cells += [fmt_ratio(r.get("cpu_ratios", {}).get(b)) for b in present]
            cells += [limits, verdicts]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(results: list, interpreters: list) -> str:
    """One line per interpreter: its floor, the worst ratio of each budgeted group (wall,
    then CPU) and whether every budget held."""
    groups = (("no-op", "empty zipapp"), ("report", "empty zipapp"), ("report", "shell client"),
              ("event", "empty zipapp"), ("event", "shell client"), ("hook", "empty zipapp"), ("wait", "empty zipapp"))
    shell = next((r["case"] for r in results if r["interpreter"] == SHARED), "shell client")
    head = ["interpreter", "empty zipapp ms (cpu)"] + [
        f"{g} x {shell if b == 'shell client' else b}" for g, b in groups] + ["budgets (wall / cpu)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 2) + ["---"]) + "|"]
    for interp in interpreters:
        rows = [r for r in results if r["interpreter"] == interp.label]
        empty = next((r for r in rows if r["case"] == "empty zipapp" and r.get("median_ms")), None)
        cells = [interp.label, "-" if empty is None else f"{empty['median_ms']:.1f} ({empty['cpu_median_ms']:.1f})"]
        for group, against in groups:
            label = shell if against == "shell client" else against
            picked = [b for r in rows if r["group"] == group for b in r["budgets"] if b.get("against") == label]
            walls = [b["ratio"] for b in picked if b["ratio"] is not None]
            cpus = [b["cpu_ratio"] for b in picked if b["cpu_ratio"] is not None]
            cells.append(f"{max(walls):.2f} / {max(cpus):.2f}" if walls and cpus else "-")
        every = [b for r in rows for b in r["budgets"]]
        passed = sum(b["verdict"] == "PASS" for b in every), sum(b["cpu_verdict"] == "PASS" for b in every)
        cells.append(f"{passed[0]}/{len(every)} / {passed[1]}/{len(every)}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description="Time lichhook's hooks as install registers them, with every Python "
                                                 "found, against an empty zipapp and the sh+curl+jq client.")
    parser.add_argument("--python", action="append", default=[],
                        help="an interpreter to register and time (repeat for several; default: every Python 3.9 "
                             "to 3.15 found here)")
    parser.add_argument("--no-slow-site", action="store_true",
                        help="leave out the virtual environment whose site imports something slow")
    parser.add_argument("--slow-site-base", default=sys.executable,
                        help="the Python that virtual environment is made from (default: this one)")
    parser.add_argument("--pyz", type=Path, default=DEFAULT_PYZ, help="archive to time (default: dist/lichhook.pyz)")
    parser.add_argument("--runs", type=int, default=25, help="timed rounds (default 25)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first (default 3)")
    parser.add_argument("--names", type=int, default=50, help="names in the waits folder of the wait cases (default 50)")
    parser.add_argument("--waits", type=int, default=500, help="open waits in that folder (default 500)")
    parser.add_argument("--hook-waits", type=int, default=20, help="open waits of the hooked session (default 20)")
    parser.add_argument("--only", default="", help="comma-separated parts of case names to run (baselines always run)")
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    args.pyz = args.pyz.resolve()
    if not args.pyz.is_file():
        print(f"coldstart: {args.pyz} does not exist; build it first with: python3 build_zipapp.py", file=sys.stderr)
        return 2
    pythons = args.python or found_pythons()
    interpreters = []
    for python in pythons:
        version = version_of(python)
        if version is None:
            parser.error(f"{python} does not run")
        interpreters.append(Interpreter(python, label_of(python, version)))

    info: dict = {"machine": machine(), "pyz": str(args.pyz), "runs": args.runs, "warmup": args.warmup}
    # lich, for every case: it answers at once, as lich's Go server does, and judges each
    # report afterwards by the stand-in's rules (see event_cases).
    quick = QuickLich(token=TOKEN, session_id=LICH_SESSION)
    try:
        with tempfile.TemporaryDirectory(prefix="lichhook-bench-") as tmp:
            work = Path(tmp)
            if not args.no_slow_site:
                interpreters.append(slow_site_venv(args.slow_site_base, work / "slow-venv"))
            info["interpreters"] = [dict(interpreter(i.python), label=i.label, note=i.note) for i in interpreters]
            cases = build_cases(args, interpreters, work, quick, quick)
            measure(cases, args.runs, args.warmup)
    finally:
        quick.close()
    results = summarize(cases)
    info["machine"]["load_after"] = machine()["load"]

    m = info["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['system']}; load {m['load']} -> {m['load_after']}")
    print(f"{args.runs} interleaved rounds after {args.warmup} warm-up; times are whole processes; every command is "
          "the one install registers (<python> -I -S <its copy>), each Python against its own empty zipapp run "
          "the same way\n")
    for i in info["interpreters"]:
        extra = f"; its site imports {', '.join(i['startup_imports'])} at every start (-S skips it)" \
            if i["startup_imports"] else ""
        print(f"- {i['label']}: {i['executable']} ({i['version'].split(' | ')[0]}){extra}")
    print("\n" + summary(results, interpreters))
    shared = [r for r in results if r["interpreter"] == SHARED]
    for interp in interpreters:
        print(f"\n{interp.label}\n")
        print(table(shared + [r for r in results if r["interpreter"] == interp.label]))
    notes = [f"- {r['interpreter'] or 'all'}: {r['case']}: {r['skipped']}" for r in results if r.get("skipped")]
    notes += [f"- {r['case']}: {r['note']}" for r in results if r.get("note")]
    notes += [f"- {r['interpreter'] or 'all'}: {r['case']}: {r['failures']} failed runs, first: {r['first_failure']}"
              for r in results if r.get("failures")]
    if notes:
        print("\nnotes:\n" + "\n".join(notes))
    if args.json:
        args.json.write_text(json.dumps(dict(info, results=results), indent=2) + "\n", encoding="utf-8")
    return 1 if any(r.get("failures") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
