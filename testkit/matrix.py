"""The default suite and a real install on every Python lichhook is tested on.

``python -m testkit.matrix`` takes each version of ``lichhook._version.TESTED_PYTHONS``
(with ``--skip-running`` the suite is not run again on the one running it, which
``.ci/run`` has already tested: only its archive check below),
finds its interpreter (pyenv's ``~/.pyenv/versions/X.Y.*``, then the Debian sid builds
``testkit.sidpython`` unpacks, then ``pythonX.Y`` on PATH), and on each:

1. makes a virtualenv of its own in the cache folder (``LICHHOOK_MATRIX_CACHE``, else
   ``/var/tmp/lichhook-matrix``) and installs the checkout with its test extra there;
2. runs the default suite, spread over the machine's cores by pytest-xdist; with
   ``--spread`` the oldest and the newest Python run all of it, and the Pythons between
   share it: each runs its own share (``LICHHOOK_SHARE=k/n``, tests/conftest.py), so every
   test still runs on the running Python, the oldest, the newest and one between;
3. builds the archive with that Python and, in a throw-away home, runs ``demo``,
   ``install claude``, one registered hook exactly as Claude Code runs it (``sh -c`` on its
   command line, a payload on stdin) against lich's stand-in, ``doctor`` (which runs every
   registered command live) and ``uninstall claude``, checking each.

Every Python is tried even when one fails; the exit code is 1 when any failed, and the
last line counts them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
import zlib
from typing import Dict, List, Optional, Sequence

from lichhook._version import TESTED_PYTHONS
from testkit.constants import ROOT

DEFAULT_CACHE = Path("/var/tmp/lichhook-matrix")
XDIST = "pytest-xdist>=3.5"
SUITE_TIMEOUT = 1800
STEP_TIMEOUT = 300
# What doctor runs after `install claude` on the config route: 12 hooks and the MCP server.
REGISTRATIONS = 13


SHARE_VARIABLE = "LICHHOOK_SHARE"


def in_share(nodeid: str, share: str) -> bool:
    """Whether the test ``nodeid`` is in ``share`` ("k/n": the k-th of n, from 1); the same
    test lands in the same share on every Python and every run."""
    k, n = (int(part) for part in share.split("/"))
    return zlib.crc32(nodeid.encode("utf-8")) % n == k - 1


def shares(versions: Sequence[str], running: Optional[str]) -> Dict[str, Optional[str]]:
    """For each version whose suite runs here: None (all of it) or its share ("k/n"). The
    oldest and the newest run it all; those between (the running one left out: its caller
    ran it all) each take one share."""
    between = [v for v in versions[1:-1] if v != running]
    spread: Dict[str, Optional[str]] = {v: f"{i}/{len(between)}" for i, v in enumerate(between, 1)}
    return {v: spread.get(v) for v in versions if v != running}


class Failed(Exception):
    """One step on one Python did not do what it must; the message says which and why."""


def find(version: str, environ: Dict[str, str]) -> Optional[str]:
    """The interpreter of ``version`` ("3.12") here, or None."""
    pyenv = Path(environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    pattern = re.compile(re.escape(version) + r"\.(\d+)$")
    found = sorted(((int(m.group(1)), p) for p in (pyenv.glob(f"{version}.*") if pyenv.is_dir() else [])
                    if (m := pattern.match(p.name))), reverse=True)
    for _, folder in found:
        python = folder / "bin" / f"python{version}"
        if python.is_file():
            return str(python)
    from testkit import sidpython

    for python in sidpython.interpreters(environ):
        if python.name == f"python{version}":
            return str(python)
    return shutil.which(f"python{version}")


def run(argv: Sequence[str], what: str, timeout: float = STEP_TIMEOUT, **kwargs) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                              **kwargs)
    except subprocess.TimeoutExpired:
        raise Failed(f"{what}: no end in {timeout:.0f} s")
    if done.returncode != 0:
        lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
        # pytest's "E " lines say why each test failed; the tail says which failed
        said = [line for line in lines if line.startswith("E ")][:40] + lines[-15:]
        raise Failed(f"{what}: exit {done.returncode}\n    " + "\n    ".join(said))
    return done


def venv(python: str, version: str, cache: Path) -> str:
    """A virtualenv of ``python`` with the checkout and its test extra installed."""
    folder = cache / f"py{version}"
    bin_python = folder / "bin" / "python"
    if not bin_python.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        run([python, "-m", "venv", str(folder)], f"{version}: python -m venv")
    run([str(bin_python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", ".[test]", XDIST],
        f"{version}: pip install -e '.[test]'", cwd=ROOT)
    return str(bin_python)


def suite(python: str, version: str, workers: int, share: Optional[str] = None) -> str:
    """The default suite, or its ``share``; its closing line."""
    args = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if workers > 1:
        args += ["-n", str(workers)]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop(SHARE_VARIABLE, None)
    if share:
        env[SHARE_VARIABLE] = share
    done = run(args, f"{version}: the default suite" + (f", share {share}" if share else ""),
               timeout=SUITE_TIMEOUT, cwd=ROOT, env=env)
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def through_the_archive(python: str, version: str) -> str:
    """demo, install, one registered hook as its harness runs it, doctor, uninstall."""
    from testkit.environment import clean_env
    from testkit.servers import standin

    with tempfile.TemporaryDirectory(prefix=f"lichhook-matrix-{version}-") as work:
        pyz = Path(work) / "lichhook.pyz"
        home = Path(work) / "home"
        home.mkdir()
        (home / ".claude").mkdir()
        env = clean_env(home)
        run([python, str(ROOT / "build_zipapp.py"), "--out", str(pyz)], f"{version}: build_zipapp.py", cwd=ROOT)
        run([python, str(pyz), "demo"], f"{version}: demo", env=env, cwd=work)
        run([python, str(pyz), "install", "claude"], f"{version}: install claude", env=env, cwd=work)
        settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
        command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        if f"python{version}" not in command and python not in command:
            raise Failed(f"{version}: install registered another Python: {command}")
        payload = {"session_id": "matrix-1", "hook_event_name": "UserPromptSubmit", "cwd": work,
                   "transcript_path": str(Path(work) / "none.jsonl"), "prompt": "hi"}
        with standin() as lich:
            hook_env = dict(env, **lich.environ())
            hook = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), env=hook_env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, cwd=work)
            reports = lich.wait_for(1, timeout=10)
        if hook.returncode != 0 or hook.stdout or len(reports) != 1 or reports[0].status != 204:
            raise Failed(f"{version}: the registered UserPromptSubmit hook (exit {hook.returncode}, stdout "
                         f"{hook.stdout[:80]!r}) reached the stand-in {len(reports)} time(s): "
                         + ", ".join(f"{r.status} {r.verdict}" for r in reports))
        doctor = run([python, str(pyz), "doctor", "--verbose"], f"{version}: doctor", env=env, cwd=work)
        out = doctor.stdout.decode("utf-8", "replace")
        live = [line for line in out.splitlines() if line.strip().startswith("run:")]
        if len(live) != REGISTRATIONS or "verdict: no problem found" not in out:
            raise Failed(f"{version}: doctor ran {len(live)} of Claude Code's {REGISTRATIONS} registrations "
                         "or found a problem:\n"
                         + out[-2000:])
        run([python, str(pyz), "uninstall", "claude"], f"{version}: uninstall claude", env=env, cwd=work)
        # install created settings.json, so uninstall removes it; anything left must not name lichhook.
        settings_file = home / ".claude" / "settings.json"
        left = settings_file.read_text(encoding="utf-8") if settings_file.exists() else ""
        if "lichhook" in left:
            raise Failed(f"{version}: uninstall left lichhook in settings.json: {left[:300]}")
    return f"demo, install, a registered hook reported, doctor ran {REGISTRATIONS} registrations, uninstall"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testkit.matrix", description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-running", action="store_true",
                        help="no suite on the Python running this (the caller ran it); its archive check still runs")
    parser.add_argument("--only", nargs="*", default=None, help="only these versions (3.12 3.15 ...)")
    parser.add_argument("--archive-only", action="store_true", help="skip the suites: only the archive checks")
    parser.add_argument("--spread", action="store_true",
                        help="all of the suite on the oldest and the newest Python, a share of it on each between")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pytest-xdist workers per suite")
    args = parser.parse_args(argv)
    running = "%d.%d" % sys.version_info[:2]
    versions = list(args.only or TESTED_PYTHONS)
    cache = Path(os.environ.get("LICHHOOK_MATRIX_CACHE") or DEFAULT_CACHE)
    cache.mkdir(parents=True, exist_ok=True)
    plan = shares(list(TESTED_PYTHONS), running if args.skip_running else None) if args.spread else {}
    passed: List[str] = []
    failed: List[str] = []
    for version in versions:
        start = time.monotonic()
        python = find(version, dict(os.environ))
        try:
            if python is None:
                raise Failed(f"{version}: no interpreter here (pyenv install {version}, or python -m testkit.sidpython "
                             "for 3.14 and 3.15)")
            print(f"matrix: {version}: {python}", flush=True)
            if args.skip_running and version == running:
                env_python = sys.executable
                print(f"matrix: {version}: default suite: run by the caller", flush=True)
            else:
                env_python = venv(python, version, cache)
            if not args.archive_only and env_python != sys.executable:
                share = plan.get(version)
                closing = suite(env_python, version, args.workers, share)
                print(f"matrix: {version}: default suite{f' (share {share})' if share else ''}: {closing}", flush=True)
            print(f"matrix: {version}: {through_the_archive(env_python, version)}", flush=True)
        except Failed as exc:
            failed.append(version)
            print(f"matrix: FAILED {exc}", flush=True)
        except Exception as exc:  # a check that broke is a failure of that Python, and the others still run
            failed.append(version)
            print(f"matrix: FAILED {version}: {type(exc).__name__}: {exc}", flush=True)
        else:
            passed.append(version)
        print(f"matrix: {version}: {time.monotonic() - start:.0f} s", flush=True)
    print(f"matrix: Pythons {' '.join(passed) or '-'} passed; {' '.join(failed) or 'none'} failed")
    print(f"matrix: {len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
