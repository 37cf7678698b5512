"""Cold-start benchmark: whole lichhook processes against the baselines they must beat.

    python build_zipapp.py
    python bench/coldstart.py [--python /usr/bin/python3] [--runs 25] [--json out.json]

Every case is a fresh process started from here with ``subprocess``, its payload on stdin,
timed in this process (fork and exec included). After warm-up the cases run interleaved,
one of each per round with the starting case rotating, so a burst of load elsewhere
on the machine lands on every case alike. Each case is checked on every run (exit
status, stdout, and for a report that lich's stand-in accepted it); a case
with a failed run shows FAIL instead of a verdict.

Baselines, measured in the same rounds:
- ``python -c pass`` with the chosen interpreter;
- an empty zipapp: a ``__main__`` that does nothing, with its legacy unchecked-hash
  ``.pyc``, written like the real archive; the floor of the format;
- the sh + curl (+ jq) session-start client lichhook replaces, written below from its
  description, when ``sh`` and ``curl`` exist.

Standard library only, with the test helpers of this checkout (``testkit``: the clean
environment, lich's stand-in). The interpreter that runs this script does the timing;
the one given with ``--python`` runs the cases.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

# case group -> (baseline it is held against, largest allowed ratio of medians)
BUDGETS = {
    "no-op": ("empty zipapp", 1.10),
    "report": ("shell client", 1.00),
    "event": ("empty zipapp", 1.15),
    "hook": ("empty zipapp", 1.60),
    "wait": ("empty zipapp", 2.00),
}
BASELINES = ("python -c pass", "empty zipapp", "shell client")
# The shell client's label says which tool read the id (jq, or sed when jq is missing).
SHELL_LABELS = {True: "sh+curl+jq", False: "sh+curl+sed (no jq)"}


# --- lich ------------------------------------------------------------------------------


def start_standin():
    """lich's stand-in (shared with the tests) on 127.0.0.1, judging every report as lich
    does; it holds the bench's token and session. Stop it with ``.stop()``."""
    return standin(token=TOKEN, session_id=LICH_SESSION).start()


# --- cases ---------------------------------------------------------------------------


class Case:
    """One command to time. ``check(proc)`` returns None when the run did its job, else why not;
    ``prepare()`` runs untimed before each run."""

    def __init__(self, name: str, group: str, argv: list, stdin: bytes = b"", env: Optional[dict] = None,
                 check: Optional[Callable[[subprocess.CompletedProcess], Optional[str]]] = None,
                 prepare: Optional[Callable[[], None]] = None, note: str = "") -> None:
        self.name, self.group, self.argv, self.stdin = name, group, argv, stdin
        self.env, self.check, self.prepare, self.note = env, check, prepare, note
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

    CPU time is much less disturbed than wall time by other work on a shared machine,
    so it is reported beside the wall-time figures the budgets use."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def clean_environment(home: Path) -> dict:
    """This environment without anything that would change what a hook does, and with
    every per-user folder in ``home`` so no one's own plugins or waits are touched."""
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
    subprocess.run([python, "-c", code, str(ROOT), str(out)], check=True)
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


def archive_adapters(python: str, pyz: Path) -> dict:
    """provider -> {sample, verdict, id}: each built-in adapter's own sample, read from the
    archive with the interpreter under test, and the id it should report."""
    code = (
        "import json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from importlib import import_module\n"
        "from lichhook.adapters import BUILTIN\n"
        "out = {}\n"
        "for provider, module in BUILTIN.items():\n"
        "    a = import_module('lichhook.adapters.' + module).ADAPTER\n"
        "    sample = dict(a.sample)\n"
        "    out[provider] = {'sample': sample, 'verdict': a.verdict or '', 'id': a.session_id(sample, {})}\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([python, "-I", "-c", code, str(pyz)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise SystemExit(f"coldstart: cannot read the adapters from {pyz}:\n{done.stderr.decode(errors='replace')}")
    return json.loads(done.stdout)


def report_check(server, provider: str, expected_id: str, verdict: str):
    def check(proc) -> str | None:
        if proc.stdout.decode("utf-8", "replace") != verdict:
            return f"stdout {proc.stdout[:80]!r}, expected {verdict!r}"
        if not server.reports:
            return "no report arrived"
        last = server.reports.pop()
        server.reports.clear()
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


def wait_cli(python: str, pyz: Path, env: dict, waits_dir: Path, op: str, by: str, session: str, *extra: str) -> list:
    return [python, str(pyz), "wait", op, "--by", by, "--session", session, *extra, "--waits-dir", str(waits_dir)]


def fill_waits(python, pyz, env, waits_dir: Path, names: int, per_name: int, prefix: str) -> str | None:
    """Open ``per_name`` waits for each of ``names`` names through the real ``wait add``,
    a few processes at a time. Returns None, or why the folder could not be filled."""
    jobs = [
        wait_cli(python, pyz, env, waits_dir, "add", f"{prefix}{n}", f"{prefix}-session-{n}",
                 "--what", f"reply from reviewer {k} on change {n}-{k}",
                 *(["--family", "ci.build"] if k % 2 else []))
        for k in range(per_name) for n in range(names)
    ]
    first = subprocess.run(jobs[0], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if first.returncode != 0:
        return f"`wait add` failed (exit {first.returncode}): {first.stderr.decode(errors='replace').strip()[-200:]}"

    def one(argv):
        return subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)

    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2))) as pool:
        for done in pool.map(one, jobs[1:]):
            if done.returncode != 0:
                return f"`wait add` failed while filling (exit {done.returncode}): {done.stderr.decode(errors='replace').strip()[-200:]}"
    return None


def build_cases(args, work: Path, server) -> list:
    python, pyz = args.python, args.pyz
    env = clean_environment(work / "home")
    (work / "home").mkdir()
    lich = dict(env, LICH_PORT=str(server.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=LICH_SESSION)
    adapters = archive_adapters(python, pyz)
    cases = [
        Case("python -c pass", "baseline", [python, "-c", "pass"], env=env),
        Case("empty zipapp", "baseline", [python, str(write_empty_zipapp(work, python))], env=env),
    ]
    sh, curl, jq = shutil.which("sh"), shutil.which("curl"), shutil.which("jq")
    claude = adapters["claude"]
    if sh and curl:
        script = write_reference_client(work)
        note = "" if jq else "jq not found: the reference reads the id with sed"
        cases.append(Case("shell client", "baseline", [sh, str(script), "claude"], json.dumps(claude["sample"]).encode(),
                          env=lich, check=report_check(server, "claude", claude["id"], ""), note=note))
        cases[-1].label = SHELL_LABELS[bool(jq)]
    cases.append(Case("no-op: claude, no LICH_*", "no-op", [python, str(pyz), "claude"],
                      json.dumps(claude["sample"]).encode(), env=env, check=silent_check))
    for provider, info in adapters.items():
        cases.append(Case(f"report: {provider}", "report", [python, str(pyz), provider],
                          json.dumps(info["sample"]).encode(), env=lich,
                          check=report_check(server, provider, info["id"], info["verdict"])))
    cases += event_cases(args, work)
    cases += hook_cases(args, work, env)
    cases += wait_cases(args, work, env)
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        cases = [c for c in cases if c.group == "baseline" or any(w in c.name for w in wanted)]
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


def archive_lives(python: str, pyz: Path, folder: Path) -> dict:
    """provider -> [(event, payload)]: each built-in adapter's own session (its ``life``),
    read from the archive with the interpreter under test; its files land in ``folder``."""
    code = (
        "import json, os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from importlib import import_module\n"
        "from lichhook.adapters import BUILTIN\n"
        "out = {}\n"
        "for provider, module in BUILTIN.items():\n"
        "    folder = os.path.join(sys.argv[2], provider)\n"
        "    os.makedirs(folder, exist_ok=True)\n"
        "    out[provider] = import_module('lichhook.adapters.' + module).ADAPTER.life(folder)\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([python, "-I", "-c", code, str(pyz), str(folder)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        return {}
    return json.loads(done.stdout)


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


def event_cases(args, work: Path) -> list:
    """One case per common harness event (EVENT_CASES), as the harness runs it:
    ``<provider> <event>``, its payload from the adapter's own session, inside lich. Each
    is a card of its own, so after the warm-up its title is known and the case measures
    the steady state (a Stop still reads the transcript's end for a newer title). lich is
    played by testkit's QuickLich: it answers at once, as lich's Go server does, and
    judges each report afterwards with the stand-in's rules, so a refused one still fails
    the case; the stand-in's own 0.4 ms per answer would be counted against each report."""
    python, pyz = args.python, args.pyz
    server = QuickLich(token=TOKEN, session_id=LICH_SESSION)  # a daemon thread; ends with the benchmark
    lives = archive_lives(python, pyz, work / "lives")
    home = work / "home"
    cases = []
    for provider, event, nth, contracts in EVENT_CASES:
        name = f"event: {provider} {event}"
        steps = [payload for step, payload in lives.get(provider, []) if step == event]
        if len(steps) <= nth:
            cases.append(skipped(name, "event", "the archive's adapter has no such event in its session"))
            continue
        session = f"bench-{provider}-{event}"
        env = dict(clean_environment(home), LICH_PORT=str(server.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=session)
        verdict = BY_VERDICT.get((provider, event), "")
        cases.append(Case(name, "event", [python, str(pyz), provider, event], json.dumps(steps[nth]).encode(),
                          env=env, check=events_check(server, session, verdict, contracts)))
    return cases


# What the harness reads on stdout for the events above (lichhook.adapters holds them; the
# benchmark checks the archive prints exactly this).
BY_VERDICT = {("antigravity", "PreInvocation"): "{}", ("antigravity", "PreToolUse"): '{"decision":"allow"}'}


def hook_cases(args, work: Path, env: dict) -> list:
    python, pyz = args.python, args.pyz
    names = ("claude-code session-start", "claude-code stop")
    if not archive_has(pyz, "lichhook/claude_code.py", "lichhook/claude_code/__init__.py"):
        return [skipped(n, "hook", "lichhook.claude_code is not in this archive yet") for n in names]
    if not archive_has(pyz, "lichhook/waits/cli.py", "lichhook/waits.py"):
        return [skipped(n, "hook", "the hooks need `wait` to set up their waits; lichhook.waits is not in this archive yet") for n in names]
    waits_dir = work / "hook-waits"
    problem = fill_waits(python, pyz, env, waits_dir, 1, args.hook_waits, "hooked")
    if problem:
        return [skipped(n, "hook", problem) for n in names]
    session = "hooked-session-0"
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

    hook = [python, str(pyz), "claude-code"]
    return [
        Case(names[0], "hook", hook + ["session-start", str(waits_dir)], json.dumps(start).encode(), env=env,
             check=json_check(context_names_session, "no session id in the context")),
        Case(names[1], "hook", hook + ["stop", str(waits_dir)], json.dumps(stop).encode(), env=env,
             check=json_check(blocks, f"did not block with {args.hook_waits} open waits"), prepare=reset_strikes),
    ]


def wait_cases(args, work: Path, env: dict) -> list:
    python, pyz = args.python, args.pyz
    names = ("wait list", "wait add")
    if not archive_has(pyz, "lichhook/waits/cli.py", "lichhook/waits.py"):
        return [skipped(n, "wait", "lichhook.waits is not in this archive yet") for n in names]
    waits_dir = work / "waits"
    per_name = max(1, args.waits // max(1, args.names))
    problem = fill_waits(python, pyz, env, waits_dir, args.names, per_name, "name")
    if problem:
        return [skipped(n, "wait", problem) for n in names]

    def ok(value) -> bool:
        return isinstance(value, dict) and value.get("ok") is True

    return [
        Case(names[0], "wait", wait_cli(python, pyz, env, waits_dir, "list", "name0", "name-session-0"),
             env=env, check=json_check(ok, "not ok")),
        Case(names[1], "wait", wait_cli(python, pyz, env, waits_dir, "add", "name1", "name-session-1",
                                        "--what", "one more review"), env=env, check=json_check(ok, "not ok")),
    ]


def skipped(name: str, group: str, why: str) -> Case:
    case = Case(name, group, [])
    case.skipped = why
    return case


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
    medians = {c.name: statistics.median(c.times) for c in cases if c.times}
    labels = {c.name: c.label for c in cases}
    results = []
    for case in cases:
        row = {"case": case.label, "group": case.group, "argv": case.argv[1:] if case.argv else [],
               "note": case.note, "skipped": case.skipped or None}
        if case.times:
            p10, p90 = spread(case.times)
            med = medians[case.name]
            row.update({
                "runs": len(case.times),
                "median_ms": round(med * 1e3, 2),
                "p10_ms": round(p10 * 1e3, 2),
                "p90_ms": round(p90 * 1e3, 2),
                "min_ms": round(min(case.times) * 1e3, 2),
                "times_ms": [round(t * 1e3, 3) for t in case.times],
                "cpu_median_ms": round(statistics.median(case.cpu) * 1e3, 2) if case.cpu else None,
                "ratios": {labels[b]: round(med / medians[b], 3) for b in BASELINES if b in medians},
                "failures": len(case.failures),
                "first_failure": case.failures[0] if case.failures else None,
            })
        budget = BUDGETS.get(case.group)
        if budget:
            against, limit = budget
            against = labels.get(against, against)
            ratio = row.get("ratios", {}).get(against)
            if case.skipped:
                verdict = "SKIP"
            elif case.failures:
                verdict = "FAIL"
            elif ratio is None:
                verdict = "n/a"
            else:
                verdict = "PASS" if ratio <= limit else "OVER"
            row["budget"] = {"against": against, "max_ratio": limit, "ratio": ratio, "verdict": verdict}
        elif case.failures:
            row["budget"] = {"verdict": "FAIL"}
        results.append(row)
    return results


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
    # The first line lists what start-up alone imported from outside the standard
    # library through site .pth files (the light customize hooks of distributions
    # aside): a lean interpreter imports nothing there.
    code = (
        "import sys; std = getattr(sys, 'stdlib_module_names', None); "
        "extra = sorted({m.split('.')[0] for m in sys.modules} - set(std)) if std else []; "
        "print(' '.join(m for m in extra if m not in ('__main__', 'sitecustomize', 'usercustomize', '_distutils_hack'))); "
        "import platform; print(sys.executable); "
        "print(platform.python_implementation(), platform.python_version(), '|', sys.version.replace(chr(10), ' '))"
    )
    done = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    site_extra, executable, version = done.stdout.decode().splitlines()[:3]
    return {"python": python, "executable": executable, "version": version, "startup_imports": site_extra.split()}


def fmt_ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(results: list) -> str:
    present = []
    for r in results:
        for b in r.get("ratios", {}):
            if b not in present:
                present.append(b)
    head = ["case", "median ms", "p10-p90 ms", "cpu ms"] + [f"x {b}" for b in present] + ["budget", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 3) + ["---", "---"]) + "|"]
    for r in results:
        if r.get("skipped"):
            cells = [r["case"], "-", "-", "-"] + ["-"] * len(present)
            budget = r.get("budget", {})
            cells += [f"<= {budget['max_ratio']:.2f}x {budget['against']}" if budget else "", "SKIP"]
        else:
            cpu = r.get("cpu_median_ms")
            cells = [r["case"], f"{r['median_ms']:.1f}", f"{r['p10_ms']:.1f}-{r['p90_ms']:.1f}", "-" if cpu is None else f"{cpu:.1f}"]
            cells += [fmt_ratio(r["ratios"].get(b)) for b in present]
            budget = r.get("budget")
            if budget and "against" in budget:
                cells += [f"<= {budget['max_ratio']:.2f}x {budget['against']}", budget["verdict"]]
            else:
                cells += ["", budget["verdict"] if budget else ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time lichhook cold starts against python -c pass, an empty zipapp and the sh+curl+jq client.")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs every case (default: this one); prefer a lean one such as /usr/bin/python3")
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
        print(f"coldstart: {args.pyz} does not exist; build it first with: python build_zipapp.py", file=sys.stderr)
        return 2

    info = {"interpreter": interpreter(args.python), "machine": machine(), "pyz": str(args.pyz),
            "runs": args.runs, "warmup": args.warmup}
    server = start_standin()
    try:
        with tempfile.TemporaryDirectory(prefix="lichhook-bench-") as tmp:
            cases = build_cases(args, Path(tmp), server)
            measure(cases, args.runs, args.warmup)
    finally:
        server.stop()
    results = summarize(cases)
    info["machine"]["load_after"] = machine()["load"]

    m, i = info["machine"], info["interpreter"]
    print(f"interpreter: {i['executable']} ({i['version'].split(' | ')[0]})")
    if i["startup_imports"]:
        print(f"note: this interpreter imports {', '.join(i['startup_imports'])} at every start (site .pth files);"
              " that inflates every baseline and flatters every ratio: prefer a lean one (see docs/performance.md)")
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['system']}; load {m['load']} -> {m['load_after']}")
    print(f"{args.runs} interleaved rounds after {args.warmup} warm-up; times are whole processes\n")
    print(table(results))
    notes = [f"- {r['case']}: {r['skipped']}" for r in results if r.get("skipped")]
    notes += [f"- {r['case']}: {r['note']}" for r in results if r.get("note")]
    notes += [f"- {r['case']}: {r['failures']} failed runs, first: {r['first_failure']}" for r in results if r.get("failures")]
    if notes:
        print("\nnotes:\n" + "\n".join(notes))
    if args.json:
        args.json.write_text(json.dumps(dict(info, results=results), indent=2) + "\n", encoding="utf-8")
    return 1 if any(r.get("failures") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
