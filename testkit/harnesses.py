"""The real harness CLIs, pinned in ``tests/e2e/package.json`` and its lock, installed
once with ``npm ci`` into a cache folder, and run headless in a throw-away home against a
fake model server (``testkit.models``) with lich played by its stand-in.

A test asks for a ``Sandbox`` of one harness: a fresh ``HOME`` and project folder, the
harness's own model settings pointed at the fake server, and nothing of lichhook's until
the test runs the real ``python lichhook.pyz install <harness>`` there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence

from lichhook.contracts import session_start, session_state, session_title, session_touched
from testkit.constants import E2E, LICH_SESSION, ROOT
from testkit.environment import clean_env, lich_env, outside_lich

if TYPE_CHECKING:
    from testkit.terminal import Terminal

# Each folder holds a package.json and its package-lock.json; `npm ci` installs each into
# the cache folder of the same name: the harness CLIs, and the package opencode installs
# into its own config folder before it loads a plugin (pinned so a test home takes it
# from the cache instead of the network).
LOCKED = {"harnesses": E2E, "opencode-config": E2E / "opencode-config"}
# Where `npm ci` installs them; ignored by git. LICHHOOK_E2E_CACHE moves it.
DEFAULT_CACHE = E2E / ".cache"
SKIP_SWITCH = "LICHHOOK_SKIP_E2E"
NPM_CI_TIMEOUT = 900
# How long a test waits for a report that may still be on its way (opencode and omp start
# lichhook detached, so a report can land after the harness exited), and how long it
# watches for one that must not come.
REPORT_WAIT = 20.0
SETTLE = 2.0


class Unavailable(Exception):
    """A harness that cannot run here; the message is one line saying which and why."""


def skip_reason(environ: Mapping[str, str] = os.environ) -> Optional[str]:
    """Why the end-to-end tests are skipped, or None. The switch works only outside CI."""
    if environ.get(SKIP_SWITCH, "") not in ("", "0") and not environ.get("CI"):
        return f"{SKIP_SWITCH} is set: the end-to-end tests are skipped (CI ignores this switch)"
    return None


def pinned(folder: Path = E2E) -> Dict[str, str]:
    """npm package -> exact version, as ``folder``'s package.json pins them."""
    return dict(json.loads((folder / "package.json").read_text(encoding="utf-8"))["dependencies"])


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get("LICHHOOK_E2E_CACHE") or DEFAULT_CACHE)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update((folder / name).read_bytes())
    return h.hexdigest()


def install(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache folder, with every locked folder installed there by ``npm ci`` the first
    time (and again whenever its package.json or lock changes). The CLIs are in
    ``<cache>/harnesses/node_modules/.bin``."""
    cache = cache_dir(environ)
    wanted = {name: _digest(folder) for name, folder in LOCKED.items()}
    if all(_installed(cache / name, digest) for name, digest in wanted.items()):
        return cache
    npm = shutil.which("npm", path=environ.get("PATH"))
    if npm is None:
        raise Unavailable("npm is not on PATH: the end-to-end tests install the harness CLIs with npm ci (Node 20+)")
    cache.mkdir(parents=True, exist_ok=True)
    with _locked(cache / ".lock"):
        for name, folder in LOCKED.items():
            if not _installed(cache / name, wanted[name]):
                _npm_ci(npm, folder, cache / name, wanted[name], environ)
    return cache


def _installed(target: Path, digest: str) -> bool:
    stamp = target / "installed.sha256"
    return (stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest
            and (target / "node_modules").is_dir())


def _npm_ci(npm: str, source: Path, target: Path, digest: str, environ: Mapping[str, str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    stamp = target / "installed.sha256"
    if stamp.exists():
        stamp.unlink()
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(source / name, target / name)
    lock = (source / "package-lock.json").relative_to(ROOT)
    # Install scripts start the CLIs they place (opencode's runs `opencode --version`),
    # which would leave their folders in the user's home: they get a throw-away one.
    # npm keeps the user's environment otherwise (proxies, registry), download cache and settings.
    real_home = Path(environ.get("HOME") or Path.home())
    with tempfile.TemporaryDirectory(prefix="lichhook-e2e-npm-") as home:
        env = dict(environ)
        env.update(clean_env(Path(home), {}))
        env.setdefault("npm_config_cache", str(real_home / ".npm"))
        env.setdefault("npm_config_userconfig", str(real_home / ".npmrc"))
        try:
            done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=NPM_CI_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm ci of {lock} did not finish within {NPM_CI_TIMEOUT} s") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stdout.decode("utf-8", "replace").splitlines()
                 if ln.startswith("npm error") and ln.strip() != "npm error"]
        # "npm error code E404" names the kind; the line after it says what failed.
        told = [ln for ln in lines if not ln.startswith("npm error code ")] or lines
        why = told[0] if told else f"exit {done.returncode}"
        raise Unavailable(f"npm ci of {lock} failed in {target}: {why}")
    stamp.write_text(digest + "\n", encoding="utf-8")


class _locked:
    """An exclusive lock on ``path`` (two test runs must not install at once)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: Optional[int] = None

    def __enter__(self) -> "_locked":
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl
        except ImportError:  # Windows: runs one at a time by convention
            return self
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


# --- one class per harness: how it finds the fake model, how it runs headless --------------


class Harness:
    """What the suite needs to know to run one harness CLI headless."""

    name = ""  # the harness word for `lichhook install` and the report's provider
    package = ""  # the npm package that brings the CLI
    binary = ""  # its program in node_modules/.bin
    needs: Sequence[str] = ()  # other programs it runs on (omp: bun)

    def check(self, cache: Path) -> str:
        """The CLI's version line; raises Unavailable when it is missing or not the pinned one."""
        bin_dir = bin_of(cache)
        version = pinned().get(self.package)
        label = f"{self.name} ({self.package} {version})"
        if version is None:
            raise Unavailable(f"{label}: not pinned in tests/e2e/package.json")
        for program in (self.binary, *self.needs):
            if not (bin_dir / program).exists():
                raise Unavailable(f"{label}: npm ci left no {program} in {bin_dir}")
        # In a throw-away home too: nothing of the harness's first start lands in the user's.
        with tempfile.TemporaryDirectory(prefix="lichhook-e2e-version-") as home:
            env = clean_env(Path(home))
            env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
            try:
                done = subprocess.run([str(bin_dir / self.binary), "--version"], env=env, cwd=home,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise Unavailable(f"{label}: `{self.binary} --version` failed: {exc}") from None
        out = done.stdout.decode("utf-8", "replace").strip()
        if done.returncode != 0 or version not in out:
            last = out.splitlines()[-1] if out else f"exit {done.returncode}"
            raise Unavailable(f"{label}: `{self.binary} --version` answered {last!r}")
        return next(line for line in out.splitlines() if version in line)

    def configure(self, sandbox: "Sandbox") -> None:
        """Point the harness at the fake model server (its own settings, not lichhook's)."""

    def environ(self, sandbox: "Sandbox") -> Dict[str, str]:
        return {}

    def headless(self, prompt: str, *extra: str) -> List[str]:
        raise NotImplementedError

    def session_id(self, result: subprocess.CompletedProcess) -> str:
        """The session id the harness itself shows for a headless run."""
        raise NotImplementedError

    def session_files(self, sandbox: "Sandbox", session_id: str) -> List[Path]:
        """The harness's own transcript or session files named after ``session_id``."""
        return []


def _json_lines(data: bytes) -> List[dict]:
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


class ClaudeCode(Harness):
    name = "claude"
    package = "@anthropic-ai/claude-code"
    binary = "claude"

    def environ(self, sandbox: "Sandbox") -> Dict[str, str]:
        return {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": sandbox.model.url,
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # MCP tools are otherwise deferred behind ToolSearch; list them to the model.
            "ENABLE_TOOL_SEARCH": "false",
        }

    def headless(self, prompt: str, *extra: str, stream: bool = False) -> List[str]:
        """``claude -p``; with ``stream``, every event a line (what the user is shown)."""
        output = ["stream-json", "--verbose"] if stream else ["json"]
        return ["claude", "-p", prompt, "--output-format", *output, *extra]

    def session_id(self, result: subprocess.CompletedProcess) -> str:
        for value in reversed(_json_lines(result.stdout)):
            if isinstance(value.get("session_id"), str):
                return value["session_id"]
        raise AssertionError(f"no session_id in claude's output: {result.stdout[-2000:]!r}")

    def session_files(self, sandbox: "Sandbox", session_id: str) -> List[Path]:
        return sorted((sandbox.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))

    @staticmethod
    def mode_label(pattern: str) -> str:
        """A regular expression for ``pattern`` drawn among the footer's mode labels (under the
        prompt, right-aligned), not as a status warning: its row carries no ⚠, the mark
        Claude Code puts before a status (``⚠ lich: …``)."""
        return rf"(?m)^(?!.*⚠).*{pattern}"

    def tui(self, sandbox: "Sandbox", *extra: str, lich: bool = True) -> "Terminal":
        """Claude Code's interactive TUI in the project folder, straight at its prompt: the
        first-start screens done, the test key approved and the folder trusted, as a user's
        ``~/.claude.json`` says after the first start. Non-essential traffic is left on: it
        includes the request that names the session (the transcript's ``ai-title`` line)."""
        state = sandbox.home / ".claude.json"
        known = json.loads(state.read_text(encoding="utf-8")) if state.exists() else {}
        known.update({
            "hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
            "customApiKeyResponses": {"approved": [self.environ(sandbox)["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
            "projects": {str(sandbox.project): {"hasTrustDialogAccepted": True, "allowedTools": [],
                                                "hasCompletedProjectOnboarding": True}},
        })
        state.write_text(json.dumps(known), encoding="utf-8")
        return sandbox.tui(["claude", *extra], lich=lich, unset=("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",))


class Codex(Harness):
    name = "codex"
    package = "@openai/codex"
    binary = "codex"
    # Runs hooks no one has trusted yet, for this invocation only (tests).
    bypass_trust = "--dangerously-bypass-hook-trust"

    def configure(self, sandbox: "Sandbox") -> None:
        folder = sandbox.home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(
            'model = "fake-model"\n'
            'model_provider = "fake"\n'
            "\n"
            "[model_providers.fake]\n"
            'name = "fake"\n'
            f'base_url = "{sandbox.model.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_MODEL_KEY"\n', encoding="utf-8")

    def environ(self, sandbox: "Sandbox") -> Dict[str, str]:
        return {"FAKE_MODEL_KEY": "test-key"}

    def headless(self, prompt: str, *extra: str, trusted: bool = True) -> List[str]:
        return ["codex", "exec", "--skip-git-repo-check", *([self.bypass_trust] if trusted else []), *extra, prompt]

    def session_id(self, result: subprocess.CompletedProcess) -> str:
        text = (result.stdout + result.stderr).decode("utf-8", "replace")
        found = re.search(r"^session id: (\S+)$", text, re.M)
        if not found:
            raise AssertionError(f"no 'session id:' line in codex's output: {text[-2000:]!r}")
        return found.group(1)

    def session_files(self, sandbox: "Sandbox", session_id: str) -> List[Path]:
        return sorted((sandbox.home / ".codex" / "sessions").rglob(f"rollout-*-{session_id}.jsonl"))

    def trust_in_tui(self, sandbox: "Sandbox", timeout: float = 60) -> Dict[str, str]:
        """Trust every new or changed hook as a user does: start the TUI and choose "Trust all
        and continue" when it asks. Returns the trust records Codex wrote."""
        before = self.hook_trust(sandbox)
        # --no-daemon: otherwise the TUI starts a shared app server that outlives it.
        with sandbox.tui(["codex", "--no-daemon"], lich=False) as tui:
            tui.wait_for(r"Hooks need review", timeout)
            # "2. Trust all and continue", then Enter once the choice shows as made: on a
            # busy machine a key typed before the dialog reads keys is lost, and Enter
            # would confirm the first choice. Pressing 2 again only chooses it again.
            chosen = time.monotonic() + 20
            while not re.search(r"›\s*2\. Trust all", tui.text()):
                assert time.monotonic() < chosen, f"Codex never showed the choice made; the screen reads:\n{tui.text()}"
                tui.send("2")
                time.sleep(0.5)
            tui.send("\r")
            deadline = time.monotonic() + timeout
            while self.hook_trust(sandbox) == before:
                assert time.monotonic() < deadline, f"Codex wrote no trust record; the screen reads:\n{tui.text()}"
                time.sleep(0.2)
        return self.hook_trust(sandbox)

    def hooks_list(self, sandbox: "Sandbox") -> List[dict]:
        """Codex's own view of its hooks (key, command, currentHash, trustStatus, ...), as its
        app server answers ``hooks/list`` for the project folder."""
        proc = subprocess.Popen(["codex", "app-server"], env=sandbox.environ(lich=False), cwd=sandbox.project,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        import threading

        timer = threading.Timer(60, proc.kill)  # a server that never answers ends the wait
        timer.start()
        try:
            for message in ({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "lichhook-e2e", "version": "0"}}},
                            {"method": "initialized"},
                            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(sandbox.project)]}}):
                proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            for line in proc.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    assert "result" in answer, answer
                    (entry,) = answer["result"]["data"]
                    assert not entry["errors"], entry
                    return list(entry["hooks"])
            raise AssertionError("codex app-server ended without answering hooks/list")
        finally:
            timer.cancel()
            proc.kill()
            proc.wait()

    def hook_trust(self, sandbox: "Sandbox") -> Dict[str, str]:
        """Codex's own trust records, ``[hooks.state."<key>"] trusted_hash``, by key."""
        try:
            import tomllib
        except ImportError:  # Python < 3.11
            raise Unavailable("reading Codex's config.toml needs Python 3.11 (tomllib)") from None
        data = tomllib.loads((sandbox.home / ".codex" / "config.toml").read_text(encoding="utf-8"))
        state = (data.get("hooks") or {}).get("state") or {}
        return {k: v.get("trusted_hash", "") for k, v in state.items() if isinstance(v, dict)}


class Opencode(Harness):
    name = "opencode"
    package = "opencode-ai"
    binary = "opencode"

    def configure(self, sandbox: "Sandbox") -> None:
        folder = sandbox.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "$schema": "https://opencode.ai/config.json",
            "model": "fake/fake-model",
            "autoupdate": False,
            "share": "disabled",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": f"{sandbox.model.url}/v1", "apiKey": "test-key"},
                "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
            }},
        }
        (folder / "opencode.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        installed = sandbox.cache / "opencode-config"
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(installed / name, folder / name)
        (folder / "node_modules").symlink_to(installed / "node_modules", target_is_directory=True)

    def environ(self, sandbox: "Sandbox") -> Dict[str, str]:
        return {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}

    def headless(self, prompt: str, *extra: str) -> List[str]:
        return ["opencode", "run", "--format", "json", *extra, prompt]

    def session_id(self, result: subprocess.CompletedProcess) -> str:
        for value in _json_lines(result.stdout):
            if isinstance(value.get("sessionID"), str):
                return value["sessionID"]
        raise AssertionError(f"no sessionID in opencode's output: {result.stdout[-2000:]!r}")


class Omp(Harness):
    name = "omp"
    package = "@oh-my-pi/pi-coding-agent"
    binary = "omp"
    needs = ("bun",)

    def agent_dir(self, sandbox: "Sandbox") -> Path:
        return sandbox.home / ".omp" / "agent"

    def configure(self, sandbox: "Sandbox") -> None:
        folder = self.agent_dir(sandbox)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "models.yml").write_text(
            "providers:\n"
            "  fake:\n"
            f"    baseUrl: {sandbox.model.url}/v1\n"
            "    apiKey: test-key\n"
            "    api: openai-completions\n"
            "    models:\n"
            "      - id: fake-model\n"
            "        name: Fake model\n"
            "        contextWindow: 128000\n"
            "        maxTokens: 4096\n", encoding="utf-8")

    def headless(self, prompt: str, *extra: str) -> List[str]:
        return ["omp", "-p", "--model", "fake/fake-model", "--mode", "json", "--no-title", *extra, prompt]

    def rpc(self, sandbox: "Sandbox", *extra: str, lich: bool = True) -> JsonRpcLines:
        """omp driven over stdin with JSON commands (``--mode rpc``), as an editor drives it:
        headless, and a session can switch to another inside one process."""
        argv = ["omp", "--model", "fake/fake-model", "--mode", "rpc", "--no-title", *extra]
        return JsonRpcLines(sandbox, sandbox.start(argv, lich=lich, talk=True))

    def session_id(self, result: subprocess.CompletedProcess) -> str:
        for value in _json_lines(result.stdout):
            if value.get("type") == "session" and isinstance(value.get("id"), str):
                return value["id"]
        raise AssertionError(f"no session header in omp's output: {result.stdout[-2000:]!r}")

    def session_files(self, sandbox: "Sandbox", session_id: str) -> List[Path]:
        return sorted((self.agent_dir(sandbox) / "sessions").glob(f"*/*_{session_id}.jsonl"))


def bin_of(cache: Path) -> Path:
    return cache / "harnesses" / "node_modules" / ".bin"


class JsonRpcLines:
    """A harness driven with one JSON command a line on stdin, answering with JSON lines
    on stdout (omp ``--mode rpc``): ``call`` sends a command and returns its response."""

    def __init__(self, sandbox: "Sandbox", proc: subprocess.Popen) -> None:
        import queue
        import threading

        self.sandbox, self.proc = sandbox, proc
        self.lines: "queue.Queue[Optional[dict]]" = queue.Queue()
        self.seen: List[dict] = []
        self._ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            for value in _json_lines(raw):
                self.lines.put(value)
        self.lines.put(None)

    def call(self, command: str, timeout: float = 60, **fields: object) -> dict:
        import queue

        self._ids += 1
        ident = str(self._ids)
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(dict(fields, id=ident, type=command)) + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer to {command} within {timeout} s; seen: {self.seen[-5:]}") from None
            if value is None:
                raise AssertionError(f"the harness ended before answering {command}; seen: {self.seen[-5:]}")
            self.seen.append(value)
            if value.get("type") == "response" and value.get("id") == ident:
                assert value.get("success") is True, value
                return value

    def close(self, timeout: float = 60) -> subprocess.CompletedProcess:
        """Close stdin (the end of the conversation) and wait for the harness to exit."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        seen = "".join(json.dumps(v) + "\n" for v in self.seen).encode()
        done = subprocess.CompletedProcess(self.proc.args, self.proc.returncode, seen, self.proc.stderr.read())
        assert done.returncode == 0, self.sandbox.describe(done)
        return done


HARNESSES: Dict[str, Harness] = {h.name: h for h in (ClaudeCode(), Codex(), Opencode(), Omp())}


# --- the sandbox ---------------------------------------------------------------------------


CONFIG_ROUTE = "LICHHOOK_NO_PLUGIN_ROUTE"


class Sandbox:
    """One harness in a throw-away home: its fake model, lich's stand-in, lichhook's archive."""

    def __init__(self, harness: Harness, root: Path, pyz: Path, cache: Path, model, standin) -> None:
        self.harness, self.pyz, self.cache = harness, pyz, cache
        self.bin_dir = bin_of(cache)
        self.model, self.standin = model, standin
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir(parents=True)
        self.env = clean_env(self.home)
        self.env["PATH"] = os.pathsep.join([str(self.bin_dir), self.env.get("PATH", "")])
        # Some harnesses take their working folder from PWD rather than from the process.
        self.env["PWD"] = str(self.project)
        # The cases test lichhook's config entries unless they ask for the plugin route.
        self.env[CONFIG_ROUTE] = "1"
        self.env.update(harness.environ(self))
        harness.configure(self)

    def lichhook(self, *args: str, timeout: float = 180, **extra: str) -> subprocess.CompletedProcess:
        """``python lichhook.pyz ARGS`` in this home, outside lich (install, doctor...)."""
        return subprocess.run([sys.executable, str(self.pyz), *args], env=dict(outside_lich(self.env), **extra),
                              cwd=self.project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)

    def plugin_route(self) -> "Sandbox":
        """From now on, lichhook in this home takes Claude Code's and Codex's plugin
        manager (``lichhook.install.plugin.route``), as it does for a user whose CLI can."""
        self.env.pop(CONFIG_ROUTE, None)
        return self

    def install(self) -> subprocess.CompletedProcess:
        """The real registration: ``python lichhook.pyz install <harness>``."""
        done = self.lichhook("install", self.harness.name)
        assert done.returncode == 0, (done.stdout + done.stderr).decode("utf-8", "replace")
        return done

    def environ(self, lich: bool = True, **extra: str) -> Dict[str, str]:
        env = dict(self.env, **lich_env(self.standin)) if lich else outside_lich(self.env)
        env.update(extra)
        return env

    def run(self, argv: Sequence[str], lich: bool = True, timeout: float = 180, stdin: Optional[bytes] = None,
            **extra: str) -> subprocess.CompletedProcess:
        """The harness CLI, headless, in the project folder; fails the test on a non-zero exit."""
        done = subprocess.run(list(argv), env=self.environ(lich, **extra), cwd=self.project,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        assert done.returncode == 0, self.describe(done)
        return done

    def run_status(self, argv: Sequence[str], timeout: float = 120) -> subprocess.CompletedProcess:
        """The harness CLI outside lich, whatever its exit status."""
        return subprocess.run(list(argv), env=self.environ(False), cwd=self.project, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)

    def start(self, argv: Sequence[str], lich: bool = True, talk: bool = False, **extra: str) -> subprocess.Popen:
        """The harness CLI started in the background (with ``talk``, its stdin a pipe);
        ``finish`` waits for it."""
        return subprocess.Popen(list(argv), env=self.environ(lich, **extra), cwd=self.project,
                                stdin=subprocess.PIPE if talk else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def tui(self, argv: Sequence[str], lich: bool = True, unset: Sequence[str] = (), **extra: str) -> "Terminal":
        """The harness's interactive TUI in a pseudo-terminal (``testkit.terminal``), without
        the variables named in ``unset``; close it (or use it with ``with``) when done."""
        from testkit.terminal import Terminal

        env = {k: v for k, v in self.environ(lich, **extra).items() if k not in unset}
        return Terminal(list(argv), env, self.project)

    def finish(self, proc: subprocess.Popen, timeout: float = 180) -> subprocess.CompletedProcess:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        assert done.returncode == 0, self.describe(done)
        return done

    def describe(self, done: subprocess.CompletedProcess) -> str:
        return (f"{' '.join(map(str, done.args))} exited {done.returncode}\n--- stdout\n"
                f"{done.stdout.decode('utf-8', 'replace')[-4000:]}\n--- stderr\n"
                f"{done.stderr.decode('utf-8', 'replace')[-4000:]}\n--- model requests\n{self.model.log()[-6000:]}")

    def reports(self, expected: int, settle: float = SETTLE) -> list:
        """Every report the stand-in received, of any route, once ``expected`` session-start
        reports arrived (or the wait ran out), after watching ``settle`` seconds more for any
        that should not come. ``reports(0) == []``: nothing was sent at all."""
        self.arrived(expected, START)
        time.sleep(settle)
        return list(self.standin.reports)

    def accepted(self, expected: int, settle: float = SETTLE) -> List[tuple]:
        """``(provider, provider_session_id)`` of every session-start report, in arrival
        order, once ``expected`` of them arrived; every report of any route must have been
        accepted for this lich session."""
        reports = self.reports(expected, settle)
        for report in reports:
            assert report.status == 204, (report.contract, report.status, report.verdict, report.body)
            assert report.accepted["session_id"] == LICH_SESSION
        return [(r.accepted["provider"], r.accepted["provider_session_id"])
                for r in reports if _route(r) == START]

    def arrived(self, count: int = 1, route: Optional[str] = None, timeout: float = REPORT_WAIT) -> List["Seen"]:
        """Every report so far, in arrival order, as soon as ``count`` of them went to
        ``route`` (any route when None) or the wait ran out; no settling."""
        return self.timeline(lambda seen: sum(1 for s in seen if route in (None, s.route)) >= count,
                             settle=0, timeout=timeout)

    def timeline(self, until: Optional[Callable[[List["Seen"]], bool]] = None, settle: float = SETTLE,
                 timeout: float = REPORT_WAIT) -> List["Seen"]:
        """Every report, of every route, in arrival order (``Seen``): once ``until`` holds
        for them (or the wait ran out), after watching ``settle`` seconds more."""
        deadline = time.monotonic() + timeout
        while until is not None and not until([Seen.of(r) for r in list(self.standin.reports)]):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        time.sleep(settle)
        return [Seen.of(r) for r in list(self.standin.reports)]


# The route of each of lich's hook contracts; lichhook.contracts owns them.
START, STATE, TITLE, TOUCHED = (session_start.PATH, session_state.PATH, session_title.PATH, session_touched.PATH)
ROUTES = {m.NAME: m.PATH for m in (session_start, session_state, session_title, session_touched)}


def _route(report: Any) -> str:
    """The route a stand-in report went to ("" where no contract serves its path)."""
    return ROUTES.get(report.contract, "")


class Seen(NamedTuple):
    """One report as lich's stand-in received it: its route (``START``, ``STATE``, ``TITLE``,
    ``TOUCHED``, or "" where no contract serves the path), lich's answer, the body lich
    applied (None when refused) and the JSON body as sent (lich ignores fields it does not
    know, such as a state report's ``provider_session_id``, so only ``sent`` has them)."""

    route: str
    status: int
    accepted: Optional[dict]
    sent: dict

    @classmethod
    def of(cls, report: Any) -> "Seen":
        try:
            sent = json.loads(report.body)
        except ValueError:
            sent = None
        return cls(_route(report), report.status, report.accepted, sent if isinstance(sent, dict) else {})

    @property
    def provider_session_id(self) -> Optional[str]:
        return self.sent.get("provider_session_id")

    def short(self) -> tuple:
        """What the report says, in a form a test compares: ``("start",)``,
        ``("busy", tool, detail)``, ``("waiting", reason)`` or ``("waiting", tool, detail)``
        as sent, ``("done",)``, ``("idle",)``, ``("title", title)``, ``("touched",)``."""
        body = self.accepted or {}
        if self.route == START:
            return ("start",)
        if self.route == TITLE:
            return ("title", body.get("title"))
        if self.route == TOUCHED:
            return ("touched",)
        if self.route == STATE:
            state = body.get("state")
            if state == "waiting":
                return (state, body.get("reason")) if body.get("reason") else (state, body.get("tool"), body.get("detail"))
            if state == "busy" and body.get("tool"):
                return (state, body.get("tool"), body.get("detail"))
            return (state,)
        return ("?", self.status)


def main() -> int:
    """Install the pinned harnesses and check each; one line per harness, or one line
    saying which cannot run and why (exit 1)."""
    try:
        cache = install()
        lines = [f"e2e: {name}: {harness.check(cache)}" for name, harness in HARNESSES.items()]
    except Unavailable as exc:
        print(f"e2e: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def lichhook_servers(sandbox: "Sandbox") -> Dict[int, int]:
    """pid -> parent pid of every ``lichhook <provider> --serve`` running from this sandbox's
    home (Linux: read from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] != "Z" and b"--serve" in words and any(str(sandbox.home).encode() in w for w in words):
            found[int(entry.name)] = int(stat[1])
    return found


def waited(find: Callable[[], object], timeout: float, what: str, seen: Callable[[], str]) -> object:
    """``find()`` once it is truthy; fails naming ``what`` and ``seen()`` (what the test's
    other side got) when it is not within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = find()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}; {seen()}")
        time.sleep(0.2)


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
