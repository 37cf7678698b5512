"""``doctor``'s live run: each registered command run as its harness runs it, against a stand-in lich.

Reading a config back says what is registered; only running it says whether it works
(a Python that cannot run this release, an archive that will not start, a hook that
raises and, failing open, sends nothing). For each registration lichhook wrote, doctor
runs the very command line of the entry (its interpreter, its flags, its archive, its
words) in a child process, with a sample payload of the harness's own on stdin and the
LICH_* variables pointing at lich's stand-in (``lichhook.standin``) on loopback, and
compares what happened with what the adapter makes of the same payload in this process:
the reports that must arrive, the exit code (0), and the stdout the harness's contract
asks for. The MCP server entries are asked to ``initialize``.

A run leaves nothing behind: its waits folder, state folder and working folder are
temporary, and its card is one the stand-in made up. Every run has a time limit and all of
them together have BUDGET seconds.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import tempfile
import time
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from lichhook._version import TESTED_PYTHONS
from lichhook.adapters import BY_PROVIDER, load
from lichhook.contracts import Outgoing
from lichhook.hook import Debug, Hook
from lichhook.demo import life_of
from lichhook.failures import describe, recent
from lichhook.host import all_adapters
from lichhook.install.face import plural
from lichhook.install.harness import Registered
from lichhook.install.quoting import split_words
from lichhook.standin import StandIn

# Per command: a hook answers within about 1 s once started; the rest is an interpreter
# starting on a slow or busy machine.
RUN_TIMEOUT = 10.0
# All live runs of one doctor together: past it the rest are named, not run.
BUDGET = 60.0
# How long the stand-in is watched for a report after the hook exited (it was sent before).
SETTLE = 0.5
# Registrations that run lichhook's waits hooks rather than report: (command, event of the
# provider whose sample payload they read).
WAITS_HOOKS = {("claude-code", "session-start"): ("claude", "SessionStart"),
               ("claude-code", "stop"): ("claude", "Stop"),
               ("codex-waits", "session-start"): ("codex", "SessionStart")}
MCP_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "lichhook-doctor", "version": "0"}}}


class Outcome(NamedTuple):
    """What one live run showed: ``said`` in a few words; ``problem`` None when it worked."""

    said: str
    problem: Optional[str] = None
    fix: Optional[str] = None
    reinstall: bool = False  # the fix is an install, and ``fix`` what follows its command


class Ran(NamedTuple):
    code: Optional[int]  # None: it did not end in time, or did not start
    stdout: str
    stderr: str
    failures: Sequence[dict] = ()  # what it recorded (lichhook.failures), oldest first


def shown(text: str, limit: int = 80) -> str:
    text = text.strip()
    if not text:
        return "nothing"
    return repr(text if len(text) <= limit else text[:limit] + "...")


class LiveCheck:
    """The stand-in lich, the temporary folders and the time budget of one doctor run."""

    def __init__(self, environ: Mapping[str, str], budget: float = BUDGET) -> None:
        self.environ = environ
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.standin = StandIn(session_id="lichhook-doctor-" + secrets.token_hex(4))
        self.work = tempfile.TemporaryDirectory(prefix="lichhook-doctor-")
        self._adapters: Optional[Dict[str, object]] = None

    def __enter__(self) -> LiveCheck:
        self.standin.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.standin.stop()
        self.work.cleanup()

    # -- what a registration is ----------------------------------------------------------

    def adapter(self, provider: str) -> Optional[object]:
        if self._adapters is None:
            found = all_adapters(self.environ, Debug({}))
            self._adapters = {f.adapter.provider: f.adapter for f in found}
        return self._adapters.get(provider)

    def samples(self, provider: str) -> Optional[object]:
        """Whose sample payloads a registration of ``provider`` is given: the built-in
        adapter's, written as the harness writes its payloads, even when a plugin serves
        the provider; else the serving adapter's."""
        return load(provider) if provider in BY_PROVIDER else self.adapter(provider)

    def check(self, found: Registered, windows: bool = False) -> Outcome:
        """Run ``found`` live; its outcome."""
        argv = command_of(found, windows)
        if argv is None:
            return Outcome("not run (its command does not split into words)")
        if time.monotonic() >= self.deadline:
            return Outcome(f"not run (doctor's {self.budget:.0f} s for live runs are spent)")
        words = tuple(argv[argv.index(found.archive) + 1:]) if found.archive in argv else ()
        if words[:1] == ("mcp",):
            return self._mcp(argv)
        if words[:2] in WAITS_HOOKS:
            return self._waits_hook(found, argv, words[:2])
        if "<event>" in words:
            return self._module(found, argv, words)
        if words and not words[0].startswith("-"):
            return self._hook(found, argv, words[0], words[1] if len(words) > 1 else None)
        return Outcome("not run (not a command doctor knows how to run)")

    # -- the kinds of registration ---------------------------------------------------------

    def _hook(self, found: Registered, argv: List[str], provider: str, event: Optional[str]) -> Outcome:
        adapter = self.adapter(provider)
        if adapter is None:
            return Outcome(f"not run (no adapter here serves provider {provider!r})")
        folder = self._folder(provider)
        payload = sample_payload(self.samples(provider) or adapter, event, folder)
        return self._judge(found, argv, adapter, provider, event, payload, folder)

    def _module(self, found: Registered, argv: List[str], words: Tuple[str, ...]) -> Outcome:
        """A harness that loads lichhook's module (opencode, omp): the module runs
        ``<provider> <event>`` per harness event; each event of a sample session is run."""
        provider = words[0]
        adapter = self.adapter(provider)
        if adapter is None:
            return Outcome(f"not run (no adapter here serves provider {provider!r})")
        folder = self._folder(provider)
        steps = life_of(self.samples(provider) or adapter, folder)
        at = words.index("<event>")
        outcomes = []
        for event, payload in steps:
            if time.monotonic() >= self.deadline:
                break
            line = argv[:len(argv) - len(words)] + list(words[:at]) + [event or ""]
            outcomes.append(self._judge(found, line, adapter, provider, event, payload, folder))
        bad = [o for o in outcomes if o.problem]
        if bad:
            return bad[0]
        if not outcomes:
            return Outcome("not run (its adapter has no sample session)")
        return Outcome(f"{len(outcomes)} events of a sample session, each exit 0, reports accepted, "
                       "stdout as the module reads it")

    def _waits_hook(self, found: Registered, argv: List[str], words: Tuple[str, ...]) -> Outcome:
        provider, event = WAITS_HOOKS[words]  # type: ignore[index]
        source = self.samples(provider)
        folder = self._folder(provider)
        payload = sample_payload(source, event, folder) if source is not None else {}
        ran = self._run(argv, payload, folder, self._env(folder))
        if ran.code != 0 or ran.failures:
            return self._failed(found, ran, "the waits hook", None if ran.code != 0 else "it recorded a failure")
        text = ran.stdout.strip()
        if text:
            try:
                said = json.loads(text)
            except ValueError:
                said = None
            if isinstance(said, dict) and isinstance(said.get("systemMessage"), str):
                # What these hooks let through for a reason they also say as systemMessage.
                message = said["systemMessage"][:300]
                return Outcome(f"exit 0, but the hook did not do its job; it says: {message}",
                               f"{found.label} in {found.path}: the waits hook does not do its job; it says: {message}",
                               "change what its words name (a waits folder given to it must exist), then run "
                               "doctor again")
            if not isinstance(said, dict):
                return Outcome(f"exit 0, but stdout is not the JSON object {found.label} takes: {shown(text)}",
                               f"{found.label} in {found.path} prints what its harness cannot read",
                               "run it with LICHHOOK_DEBUG=1 to see why, and report it")
        return Outcome(f"exit 0; reads the waits, sends nothing to lich by design; stdout {shown(text)}")

    def _mcp(self, argv: List[str]) -> Outcome:
        request = (json.dumps(MCP_INITIALIZE) + "\n").encode("utf-8")
        env = self._env(self.work.name)
        try:
            done = subprocess.run(argv, input=request, env=env, cwd=self.work.name, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=self._timeout())
        except subprocess.TimeoutExpired:
            return Outcome("the MCP server did not answer initialize in time",
                           "the MCP server does not answer", "run the command by hand to see why")
        except OSError as exc:
            return Outcome(f"could not start ({exc})", f"the MCP server cannot start ({exc})",
                           "install again with a working Python")
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
                info = answer["result"].get("serverInfo") or {}
                return Outcome(f"the MCP server answered initialize ({info.get('name', '?')} "
                               f"{info.get('version', '?')}, protocol {answer['result'].get('protocolVersion', '?')})")
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return Outcome(f"the MCP server gave no answer to initialize ({why[0][:160]})",
                       f"the MCP server gives no answer to initialize ({why[0][:160]})",
                       "run the command by hand to see why; install again with a supported Python")

    # -- running and judging ----------------------------------------------------------------

    def _judge(self, found: Registered, argv: List[str], adapter: object, provider: str, event: Optional[str],
               payload: dict, folder: str) -> Outcome:
        env = self._env(folder)
        hook = Hook(provider, event, env, deadline=0.0)  # the hook as the run runs it; ``plan`` sends nothing
        expected = expected_reports(hook, adapter, self.standin.session_id, payload)
        want_stdout = hook.verdict(adapter)
        before = len(self.standin.reports)
        ran = self._run(argv, payload, folder, env)
        if ran.code is None:
            return self._failed(found, ran, "the hook")
        if expected:
            self.standin.wait_for(before + expected, SETTLE)
        arrived = self.standin.reports[before:]
        accepted = [r for r in arrived if r.status == 204]
        what = f"{event}" if event else "the bare command"
        problems = []
        if ran.code != 0:
            problems.append(f"exit {ran.code}")
        if ran.failures:
            problems.append("it recorded a failure")
        if expected and not arrived:
            problems.append(f"sent nothing for {what}, where the report path makes {plural(expected, 'report')} "
                            "of this payload")
        elif len(accepted) < len(arrived):
            bad = next(r for r in arrived if r.status != 204)
            problems.append(f"lich refused a report ({bad.status} {bad.verdict})")
        if ran.stdout != want_stdout:
            problems.append(f"stdout {shown(ran.stdout)} where the harness takes {shown(want_stdout)}")
        if problems:
            return self._failed(found, ran, "the hook", "; ".join(problems))
        sent = (f"{plural(len(accepted), 'report')} arrived, accepted ("
                + ", ".join(sorted({r.contract or '?' for r in accepted})) + ")"
                if accepted else "sends nothing for this sample, as the adapter decides")
        return Outcome(f"exit 0; {sent}; stdout as the contract asks ({shown(ran.stdout)})")

    def _failed(self, found: Registered, ran: Ran, kind: str, what: Optional[str] = None) -> Outcome:
        """A run that would leave its harness with nothing: the problem, and the fix's tail
        (doctor puts the install command before it)."""
        if what is None:
            what = "did not end in time" if ran.code is None else f"exit {ran.code}"
        why = self._why(ran)
        if why and why in what:
            why = ""
        said = f"FAILED: {what}" + (f"; why: {why}" if why else "")
        problem = f"{found.label} in {found.path}: {kind} would leave its harness with nothing: {what}" + (
            f" ({why})" if why else "")
        fix = (f"with a Python this release is tested on ({TESTED_PYTHONS[0]} to {TESTED_PYTHONS[-1]}); "
               "to see why it fails, run its command with LICHHOOK_DEBUG=1 and a payload on stdin")
        return Outcome(said, problem, fix, reinstall=True)

    def _why(self, ran: Ran) -> str:
        """The newest failure the run recorded, else the last line it wrote on stderr."""
        if ran.failures:
            return describe(ran.failures[-1])
        lines = ran.stderr.strip().splitlines()
        return lines[-1][:200] if lines else ""

    def _run(self, argv: List[str], payload: dict, folder: str, env: Dict[str, str]) -> Ran:
        """Run ``argv`` with ``payload`` on stdin: what it did, and the failures it recorded."""
        data = json.dumps(payload).encode("utf-8")
        recorded = len(recent(env, 1000))
        try:
            done = subprocess.run(argv, input=data, env=env, cwd=folder, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=self._timeout())
            ran = Ran(done.returncode, _text(done.stdout), _text(done.stderr))
        except subprocess.TimeoutExpired as exc:
            ran = Ran(None, _text(exc.stdout), _text(exc.stderr))
        except OSError as exc:
            ran = Ran(None, "", f"could not start: {exc}")
        return ran._replace(failures=recent(env, 1000)[recorded:])

    def _timeout(self) -> float:
        return max(1.0, min(RUN_TIMEOUT, self.deadline - time.monotonic()))

    def _env(self, folder: str) -> Dict[str, str]:
        """The harness's environment as doctor has it, with lich played by the stand-in,
        and the waits and state folders (Linux) temporary, so a run changes none of the user's."""
        env = {k: v for k, v in self.environ.items() if not k.startswith("LICH_")
               and k not in ("LICHHOOK_DEBUG", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
        env.update(self.standin.environ())
        env["LICHHOOK_WAITS_DIR"] = waits = os.path.join(self.work.name, "waits")
        os.makedirs(waits, mode=0o700, exist_ok=True)
        env["XDG_STATE_HOME"] = os.path.join(self.work.name, "state")
        return env

    def _folder(self, provider: str) -> str:
        folder = os.path.join(self.work.name, "cwd", provider)
        os.makedirs(folder, exist_ok=True)
        return folder


def _text(data: object) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else ""


def command_of(found: Registered, windows: bool = False) -> Optional[List[str]]:
    """The argv the registration runs: its words as its harness splits them."""
    if not found.python or not found.archive:
        return None
    words = split_words(found.text)
    if not words or found.archive not in words:
        return None
    if "<event>" in found.text or " --serve, on " in found.text:
        # A module's registration, shown as "<python> ... <provider> --serve, on <events>"
        # (earlier modules: "<provider> <event>"). Each event is run as its own hook: the
        # path `--serve` takes each of its lines through (lichhook.report.deliver).
        at = next((i for i, w in enumerate(words) if w.startswith(("<event>", "--serve"))), None)
        if at is None:
            return None
        return words[:at] + ["<event>"]
    return words


def sample_payload(adapter: object, event: Optional[str], folder: str) -> dict:
    """The adapter's own sample for ``event``: the first step of its sample session that is
    that event; for the bare command or an event its session lacks, its first step (or its
    ``sample``), named as that event where the payload names its event."""
    steps = life_of(adapter, folder)
    for name, payload in steps:
        if event is not None and name == event:
            return payload
    payload = dict(steps[0][1]) if steps else dict(getattr(adapter, "sample", {}) or {})
    if event is not None and "hook_event_name" in payload:
        payload["hook_event_name"] = event
    return payload


def expected_reports(hook: Hook, adapter: object, session_id: str, payload: dict) -> int:
    """How many reports ``hook`` must send for ``payload`` to the card ``session_id``, as
    the report path plans them here, in this process, with the run's environment: the
    adapter's reports less those it rightly keeps back (a title that has not changed, say)."""
    try:
        planned = hook.plan(adapter, session_id, payload) or []
    except Exception:
        return 0
    return sum(isinstance(out, Outgoing) and out.body is not None for out in planned)
