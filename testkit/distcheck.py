"""The distribution as users install it: build the wheel and the sdist, install each into
a fresh virtual environment (and the wheel with pipx), and run the installed ``lichhook``
through what a user does first, in a throw-away home.

    python3 -m testkit.distcheck [--python PY] [--drop lichhook/some/module.py] [--keep]

Per installed command: ``--version``; ``demo``; ``--help``, ``adapters``, a hook
reporting to its own ``listen``, ``wait add``/``list``/``done``, the ``claude-code`` and
``codex-waits`` session-start hooks and ``mcp``, all run by the installed command itself;
``install claude codex``, whose archive must hold every file of the tree's ``lichhook/``
(the JS modules too); the registered Claude Code SessionStart hook, run as Claude Code
would, against lich's stand-in (one session-start report must arrive); the registered
MCP server answering ``initialize`` and ``tools/list``; ``doctor``; ``uninstall claude
codex`` (nothing of lichhook left in the configs or the data folder). Any step that
fails stops the run with its output and exit status 1.

``--drop`` removes one member from the built wheel before installing it, to show that a
distribution missing a module fails here (the run must then fail).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

from lichhook.archive import read_archive
from lichhook.install.copies.assemble import package_members
from testkit.constants import ROOT
from testkit.environment import clean_env
from testkit.servers import standin


class Failed(Exception):
    pass


def run(argv: List[str], env: Optional[Dict[str, str]] = None, stdin: bytes = b"", timeout: float = 600,
        cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=timeout)
    if done.returncode != 0:
        raise Failed(f"{shlex.join(argv)} exited {done.returncode}\n--- stdout\n"
                     f"{done.stdout.decode(errors='replace')}\n--- stderr\n{done.stderr.decode(errors='replace')}")
    return done


def venv(python: str, folder: Path) -> Path:
    """A fresh virtual environment at ``folder``; its python."""
    run([python, "-m", "venv", str(folder)])
    return folder / "bin" / "python"


def build(tools: Path, out: Path) -> Dict[str, Path]:
    """The wheel and the sdist of this checkout, built the way pip and pipx build them
    (an isolated PEP 517 build), from a copy of the tracked files only."""
    tree = out / "tree"
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    run([str(tools), "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(tree)])
    return {"wheel": next(out.glob("lichhook-*.whl")), "sdist": next(out.glob("lichhook-*.tar.gz"))}


def drop_member(wheel: Path, member: str) -> Path:
    """A copy of ``wheel`` without ``member`` (its RECORD line too, so pip installs it)."""
    out = wheel.parent / "dropped" / wheel.name
    out.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        if member not in names:
            raise Failed(f"--drop {member}: the wheel has no such member")
        for name in names:
            if name == member:
                continue
            data = src.read(name)
            if name.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.startswith(member.encode() + b","))
            dst.writestr(name, data)
    return out


def scenario(lichhook: Path, home: Path) -> List[str]:
    """What a new user does with the installed command ``lichhook``; what each step showed."""
    env = clean_env(home)
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    said = []
    version = run([str(lichhook), "--version"], env).stdout.decode().strip()
    said.append(version)
    demo = run([str(lichhook), "demo"], env, timeout=300).stdout.decode()
    said.append(demo.strip().splitlines()[-1])
    said += commands(lichhook, env, home)
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    installed = run([str(lichhook), "install", "claude", "codex"], env).stdout.decode()
    said.append(next(line for line in installed.splitlines() if line.startswith("archive:")))

    # The archive install assembled from the installed package holds every file of the
    # tree's lichhook/, data files too, which no command above may have needed.
    copies = sorted((home / ".local" / "share" / "lichhook").glob("py*/lichhook.pyz"))
    members = read_archive(copies[0])[1] if len(copies) == 1 else {}
    got = {name: data for name, data in members.items() if name.startswith("lichhook/") and not name.endswith(".pyc")}
    expected = package_members(ROOT / "lichhook")
    if got != expected:
        raise Failed(f"the archive install made ({copies}) differs from the tree's lichhook/: missing "
                     f"{sorted(set(expected) - set(got))}, extra {sorted(set(got) - set(expected))}, changed "
                     f"{sorted(n for n in set(got) & set(expected) if got[n] != expected[n])}")
    said.append(f"installed archive: the tree's {len(expected)} lichhook files, no more, no fewer")
    # tomli reads TOML values where the standard library has no tomllib: its marker brings
    # it along for 3.9 and 3.10, never for 3.11 and later.
    version = tuple(int(part) for part in copies[0].parent.name[len("py"):].split("."))
    packages = sorted({name.split("/", 1)[0] for name in members if "/" in name and ".dist-info/" not in name})
    if ("tomli" in packages) != (version < (3, 11)):
        raise Failed(f"the archive install made for Python {copies[0].parent.name} holds {packages}: tomli belongs "
                     "there before 3.11 only")
    said.append(f"installed archive for {copies[0].parent.name}: {', '.join(packages)}")

    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    starts = [h["command"] for group in settings["hooks"]["SessionStart"] for h in group["hooks"]]
    command = next(c for c in starts if c.split()[-1] == "claude")
    with standin() as lich:
        payload = json.dumps({"session_id": "dist-check-1", "hook_event_name": "SessionStart", "source": "startup",
                              "cwd": str(home), "transcript_path": str(home / "t.jsonl")}).encode()
        hook = subprocess.run(shlex.split(command), input=payload, env={**env, **lich.environ()},
                              capture_output=True, timeout=60)
        reports = lich.wait_for(1, 10)
    if hook.returncode != 0 or hook.stdout or len(reports) != 1 or not reports[0].accepted:
        raise Failed(f"the registered hook {command!r}: exit {hook.returncode}, stdout {hook.stdout!r}, "
                     f"stderr {hook.stderr.decode(errors='replace')!r}, reports {reports!r}")
    said.append(f"hook {command!r}: 1 {reports[0].contract} report accepted")

    server = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["lichhook"]
    tools = mcp_tools([server["command"], *server["args"]], {**env, "LICHHOOK_WAITS_DIR": str(home / "waits")})
    said.append(f"mcp (registered): tools {tools}")

    # Codex runs a hook only once the user has trusted it, which lichhook never does for
    # them: doctor names each untrusted hook as a problem, and that is the only one allowed.
    doctor = subprocess.run([str(lichhook), "doctor"], env=env, capture_output=True, timeout=120)
    text = doctor.stdout.decode(errors="replace")
    problems = [line for line in text.splitlines() if line.startswith("problem:")]
    others = [line for line in problems if not line.startswith("problem: codex:") or "not trusted yet" not in line]
    if doctor.returncode not in (0, 1) or others or "Traceback" in doctor.stderr.decode(errors="replace"):
        raise Failed(f"doctor exited {doctor.returncode}:\n{text}\n{doctor.stderr.decode(errors='replace')}")
    said.append(f"doctor: no problem but Codex's trust of {len(problems)} new hooks")
    run([str(lichhook), "uninstall", "claude", "codex"], env)
    left = [p for p in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json", home / ".claude.json")
            if p.exists() and "lichhook" in p.read_text(encoding="utf-8")]
    data = home / ".local" / "share" / "lichhook"
    if left or data.exists():
        raise Failed(f"uninstall left lichhook in {left} / {data if data.exists() else ''}")
    said.append("uninstall: nothing of lichhook left")
    return said


def mcp_tools(argv: List[str], env: Dict[str, str]) -> List[str]:
    """The tools the MCP server ``argv`` lists after the MCP handshake, over stdio."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "distcheck", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    mcp = run(argv, env, stdin=b"".join(json.dumps(line).encode() + b"\n" for line in lines), timeout=60)
    answers = [json.loads(line) for line in mcp.stdout.splitlines() if line.strip()]
    tools = [t["name"] for a in answers if a.get("id") == 2 for t in a["result"]["tools"]]
    if tools != ["claude_code_wait"]:
        raise Failed(f"the MCP server {shlex.join(argv)} answered {answers!r}")
    return tools


def commands(lichhook: Path, env: Dict[str, str], home: Path) -> List[str]:
    """The other commands, run from the installed package itself (not an archive): help,
    adapters, a hook reporting to ``lichhook listen``, the waits, the Claude Code and
    Codex waits hooks, the MCP server."""
    said = []
    usage = run([str(lichhook), "--help"], env).stdout.decode()
    adapters = run([str(lichhook), "adapters"], env).stdout.decode()
    if "commands:" not in usage or "claude" not in adapters:
        raise Failed(f"--help or adapters said too little:\n{usage}\n{adapters}")
    said.append(f"--help and adapters: {len(adapters.splitlines())} lines")

    listen = subprocess.Popen([str(lichhook), "listen"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # A listen that never prints would block the reads below: it is stopped after 60 s,
    # which ends its output.
    stopper = threading.Timer(60, listen.terminate)
    stopper.start()
    try:
        assert listen.stdout is not None
        lines = [listen.stdout.readline().decode() for _ in range(3)]
        if "export" not in lines[2]:
            raise Failed(f"lichhook listen printed {lines!r}; stderr {listen.stderr.read() if listen.stderr else ''!r}")
        exported = dict(word.split("=", 1) for word in lines[2].split("export", 1)[1].split())
        payload = json.dumps({"session_id": "dist-listen-1", "hook_event_name": "SessionStart",
                              "source": "startup"}).encode()
        hook = run([str(lichhook), "claude"], {**env, **exported}, stdin=payload, timeout=60)
        heard = ""
        while "accepted" not in heard:
            line = listen.stdout.readline().decode()
            if not line:
                break
            heard += line
    finally:
        stopper.cancel()
        listen.terminate()
        listen.wait(10)
    if hook.stdout or "204 accepted  session-start" not in heard or "dist-listen-1" not in heard:
        raise Failed(f"a hook run by the installed command against its own listen: stdout {hook.stdout!r}, "
                     f"listen printed {heard!r}")
    said.append(f"listen: {heard.split(chr(10))[-2].strip() if chr(10) in heard else heard.strip()}")

    waits = {**env, "LICHHOOK_WAITS_DIR": str(home / "waits-direct"), "LICHHOOK_NODE": "distcheck"}
    who = ["--by", "builder", "--session", "dist-s1"]
    added = json.loads(run([str(lichhook), "wait", "add", *who, "--what", "CI run 1"], waits).stdout)
    listed = json.loads(run([str(lichhook), "wait", "list", *who], waits).stdout)
    wait_id = added["wait"]["id"]
    run([str(lichhook), "wait", "done", *who, "--id", str(wait_id)], waits)
    if "CI run 1" not in json.dumps(listed):
        raise Failed(f"wait add then list: {added!r} then {listed!r}")
    said.append(f"wait add, list, done: {wait_id}")

    start = json.dumps({"session_id": "dist-s1", "hook_event_name": "SessionStart", "source": "startup",
                        "cwd": str(home)}).encode()
    for hook_words in (["claude-code", "session-start"], ["codex-waits", "session-start"]):
        run([str(lichhook), *hook_words], waits, stdin=start, timeout=60)
    said.append("claude-code and codex-waits session-start: exit 0")

    said.append(f"mcp (the installed command): tools {mcp_tools([str(lichhook), 'mcp'], waits)}")
    return said


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the Python to install into (default: this one)")
    parser.add_argument("--drop", help="remove this member from the wheel first (the run must then fail)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="lichhook-distcheck-"))
    started = time.monotonic()
    try:
        tools = venv(args.python, work / "tools")
        run([str(tools), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "build", "pipx"])
        built = build(tools, work / "out")
        if args.drop:
            built["wheel"] = drop_member(built["wheel"], args.drop)
        ways = {}
        for kind in ("wheel", "sdist"):
            python = venv(args.python, work / f"venv-{kind}")
            run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(built[kind])])
            ways[f"pip install {kind}"] = python.parent / "lichhook"
        pipx_env = {**os.environ, "PIPX_HOME": str(work / "pipx"), "PIPX_BIN_DIR": str(work / "pipx-bin"),
                    "PIPX_MAN_DIR": str(work / "pipx-man")}
        run([str(tools.parent / "pipx"), "install", "--python", args.python, str(built["wheel"])], pipx_env)
        ways["pipx install wheel"] = work / "pipx-bin" / "lichhook"
        for way, command in ways.items():
            home = work / f"home-{way.replace(' ', '-')}"
            home.mkdir()
            began = time.monotonic()
            for line in scenario(command, home):
                print(f"{way}: {line}")
            print(f"{way}: passed in {time.monotonic() - began:.1f} s")
    except Failed as exc:
        print(f"distcheck: FAILED\n{exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"distcheck: work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"distcheck: wheel, sdist and pipx installs passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
