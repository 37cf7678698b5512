"""What install registers, run as the harness runs it: a copy of the archive compiled for
each registered Python, commands isolated from the caller's environment, and the previous
release's registrations brought up to date in place."""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lichhook import archive
from lichhook.install.copies.target import launcher
from testkit.archive import absolute, hook_line, hook_options, installed_copy, installed_hooks, same_copy
from testkit.constants import ROOT
from testkit.environment import lich_env, shadowing_project

PY = os.path.abspath(sys.executable)
FLAGS = ["-I", "-S"]


def other_pythons() -> list:
    """One interpreter of every other Python 3.9 to 3.13 minor version found here."""
    mine = "%d.%d" % sys.version_info[:2]
    found = []
    for version in ("3.9", "3.10", "3.11", "3.12", "3.13"):
        if version == mine:
            continue
        for exe in sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}"))):
            if subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
                found.append(exe)
                break
    return found


OTHERS = other_pythons()
needs_another_python = pytest.mark.skipif(not OTHERS, reason="no other Python 3.9 to 3.13 installed here")


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot(folder: Path) -> dict:
    """path -> (bytes, mtime_ns) of every file under ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def data_dir(home: Path) -> Path:
    return home / ".local" / "share" / "lichhook"


def bytecode(copy: Path) -> bytes | None:
    return archive.bytecode_of(archive.read_archive(copy)[1])


def claude_commands(home: Path) -> dict:
    """The command lines of Claude Code's settings: report, session-start, stop."""
    hooks = load(home / ".claude" / "settings.json")["hooks"]
    report, start = (h["command"] for h in hooks["SessionStart"][0]["hooks"])
    return {"report": report, "session-start": start, "stop": hooks["Stop"][0]["hooks"][0]["command"]}


# -- a copy compiled for each Python -------------------------------------------------------


@needs_another_python
@pytest.mark.parametrize("python", OTHERS)
def test_install_gives_the_python_it_registers_a_copy_compiled_for_it(run, home, base_env, standin, python):
    out = absolute(ok(run("install", "claude", python=python)).stdout.decode(), home)
    copy = installed_copy(home, python)
    asked = archive.interpreter_bytecode(python)
    assert asked is not None and bytecode(copy) == asked.magic != archive.bytecode_magic(run.pyz)
    assert f"compiled for Python {asked.version}" in out and copy.parent.name == f"py{asked.version}"
    command = claude_commands(home)["report"]
    assert shlex.split(command)[:6] == [python, *hook_options("claude"), str(installed_hooks(home, python))]
    assert archive.bytecode_of(archive.read_archive(installed_hooks(home, python))[1]) == asked.magic
    done = subprocess.run(["sh", "-c", command], input=b'{"session_id": "s-compiled"}',
                          env=dict(base_env, **lich_env(standin)), capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert standin.wait_for(1, timeout=10)[0].accepted["provider_session_id"] == "s-compiled"

    # A second install leaves the copy, and every config, as they are.
    before = snapshot(home)
    out = absolute(ok(run("install", "claude", python=python)).stdout.decode(), home)
    assert snapshot(home) == before
    assert f"archive: {copy} (up to date)" in out


def test_a_copy_already_compiled_for_this_python_is_the_archive_itself(run, home, pyz):
    ok(run("install", "codex"))
    assert same_copy(installed_copy(home).read_bytes(), pyz.read_bytes())



def doctor_finds_nothing_but_trust(run, also: str = "") -> None:
    """doctor names no problem but Codex's trust, which only the user can give (and
    ``also``, when given: one more problem the configs really have)."""
    out = run("doctor", "--verbose").stdout.decode()
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    others = [line for line in problems if "Codex does not run lichhook's" not in line]
    assert others == ([others[0]] if also and others and also in others[0] else []), out

@needs_another_python
def test_two_harnesses_registered_with_two_pythons_each_run_a_copy_of_their_own(run, home):
    other = OTHERS[-1]
    ok(run("install", "claude"))
    ok(run("install", "codex", python=other))
    mine, theirs = installed_copy(home), installed_copy(home, other)
    assert mine != theirs and bytecode(mine) != bytecode(theirs)
    assert bytecode(theirs) == archive.interpreter_bytecode(other).magic
    assert f" {installed_hooks(home)} " in claude_commands(home)["stop"]
    codex = load(home / ".codex" / "hooks.json")["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert shlex.split(codex) == [other, *hook_options("codex"), str(installed_hooks(home, other)), "codex"]
    doctor_finds_nothing_but_trust(run)

    # Each install leaves the other Python's copy alone: nothing changes.
    before = snapshot(home)
    ok(run("install", "claude"))
    ok(run("install", "codex", python=other))
    assert snapshot(home) == before

    # A copy whose bytecode is not its Python's is named, with the install that mends it.
    shutil.copyfile(mine, theirs)
    shutil.copyfile(installed_hooks(home), installed_hooks(home, other))
    doctor = run("doctor", "--verbose")
    assert doctor.returncode == 1
    out = doctor.stdout.decode()
    fix = f"Fix: {other} {run.pyz} install codex"
    assert f"problem: codex: SessionStart in {home / '.codex' / 'hooks.json'}: {installed_hooks(home, other)} " \
           f"carries bytecode for another Python than the one its hooks run, {other} " \
           f"(Python {archive.interpreter_bytecode(other).version})" in out and fix in out
    ok(run("install", "codex", python=other))
    assert bytecode(theirs) == archive.interpreter_bytecode(other).magic
    doctor_finds_nothing_but_trust(run)

    out = absolute(ok(run("uninstall", "codex")).stdout.decode(), home)
    assert f"archive: removed {theirs} (no harness runs it any more)" in out
    assert not theirs.parent.exists() and mine.exists()
    ok(run("uninstall", "claude"))
    assert not data_dir(home).exists()  # every copy, its folder, and the folder they were in


@needs_another_python
def test_a_new_lichhook_is_given_to_every_python_that_runs_one(run, home, tmp_path):
    other = OTHERS[-1]
    ok(run("install", "claude", python=other))
    theirs = installed_copy(home, other)
    shebang, files = archive.read_archive(run.pyz)
    newer = tmp_path / "newer" / "lichhook.pyz"
    archive.write_archive(dict(files, **{"lichhook/NEWS.txt": b"a newer lichhook\n"}), newer, shebang)
    out = absolute(ok(subprocess.run([PY, str(newer), "install", "codex"], env=run.env, capture_output=True,
                                     timeout=120)).stdout.decode(), home)
    assert f"archive: updated {theirs}, which claude runs with {other}, compiled by it" in out
    refreshed = archive.read_archive(theirs)[1]
    assert refreshed["lichhook/NEWS.txt"] == b"a newer lichhook\n"
    assert archive.bytecode_of(refreshed) == archive.interpreter_bytecode(other).magic
    assert archive.read_archive(installed_copy(home))[1]["lichhook/NEWS.txt"] == b"a newer lichhook\n"


# -- isolated from the caller's environment ------------------------------------------------

def run_line(command: str, env: dict, cwd: Path, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], input=stdin, env=env, cwd=str(cwd), capture_output=True, timeout=30)


def test_a_projects_python_path_never_runs_inside_the_registered_hooks(run, home, base_env, standin, tmp_path):
    ok(run("install", "claude"))
    commands = claude_commands(home)
    project, markers = shadowing_project(tmp_path)
    env = dict(base_env, PYTHONPATH=str(project), **lich_env(standin))
    payload = b'{"session_id": "s-isolated", "hook_event_name": "SessionStart", "source": "startup"}'

    report = run_line(commands["report"], env, project, payload)
    assert (report.returncode, report.stdout, report.stderr) == (0, b"", b"")
    assert standin.wait_for(1, timeout=10)[0].accepted["provider_session_id"] == "s-isolated"
    stop = run_line(commands["stop"], env, project, b'{"session_id": "s-isolated", "stop_hook_active": false}')
    clean = run_line(commands["stop"], base_env, tmp_path, b'{"session_id": "s-isolated", "stop_hook_active": false}')
    assert stop.returncode == 0 and stop.stdout == clean.stdout
    assert sorted(os.listdir(markers)) == []

    # The same hooks as an earlier release registered them, without the flags: the
    # archive's entry point puts the project's folder after the standard library.
    for name in ("report", "stop"):
        unflagged = commands[name].replace(" -I -S ", " ", 1)
        assert run_line(unflagged, env, project, payload).returncode == 0
        assert sorted(os.listdir(markers)) == [], name


def test_an_adapter_installed_in_the_registered_venv_still_reports(pyz, home, base_env, fault_server, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, check=True, text=True).stdout.strip()
    source = shutil.copytree(ROOT / "examples" / "lichhook-aider", tmp_path / "aider-src")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--target", site, str(source)], check=True, capture_output=True)
    ok(subprocess.run([python, str(pyz), "install", "claude"], env=base_env, capture_output=True, timeout=120))

    words = shlex.split(claude_commands(home)["report"])
    assert words[:3] == [python, *FLAGS] and words[-1] == "claude"
    server = fault_server("status", 204)
    done = subprocess.run([*words[:-1], "aider"], input=b'{"chat": {"id": "chat-venv"}}',
                          env=dict(base_env, **lich_env(server)), capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    bodies = [json.loads(r.partition(b"\r\n\r\n")[2]) for r in server.requests]
    assert [(b["provider"], b["provider_session_id"]) for b in bodies] == [("aider", "chat-venv")]
    listing = subprocess.run([*words[:-1], "adapters"], env=base_env, capture_output=True, timeout=60)
    assert b"aider" in listing.stdout and b"entry point" in listing.stdout


# -- the previous release's registrations ----------------------------------------------------

def previous_release(home: Path, tmp_path: Path) -> dict:
    """Every config as the previous release wrote it (``<python> <data>/lichhook.pyz ...``,
    no interpreter options), with the user's additions in them; path -> text."""
    legacy = str(data_dir(home) / "lichhook.pyz")

    def line(*sub: str) -> str:
        return shlex.join([PY, legacy, *sub])

    crush_conf = home / ".config" / "crush"
    files = {
        home / ".claude" / "settings.json": {"hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear|compact|fork", "hooks": [
                {"type": "command", "command": line("claude"), "timeout": 10},
                {"type": "command", "command": line("claude-code", "session-start"), "timeout": 30}]}],
            "Stop": [{"hooks": [{"type": "command", "command": line("claude-code", "stop") + " /home/me/waits",
                                 "timeout": 10}]}]}},
        home / ".claude.json": {"numStartups": 7, "mcpServers": {"lichhook": {
            "type": "stdio", "command": PY, "args": [legacy, "mcp", "--waits-dir", "/w"], "env": {"A": "1"}}}},
        home / ".codex" / "hooks.json": {"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": line("codex"), "timeout": 5}]}]}},
        home / ".gemini" / "config" / "plugins" / "lichhook" / "hooks.json": {"lichhook": {"PreInvocation": [
            {"type": "command", "command": line("antigravity"), "timeout": 5}]}},
        crush_conf / "crush.json": {"hooks": {"PreToolUse": [
            {"name": "lichhook", "command": line("crush"), "timeout": 9}]},
            "mcp": {"lichhook": {"type": "stdio", "command": PY, "args": [legacy, "mcp"]}}},
        home / ".omp" / "agent" / "mcp.json": {"mcpServers": {"lichhook": {"command": PY, "args": [legacy, "mcp"]}}},
    }
    texts = {path: json.dumps(data, indent=2) + "\n" for path, data in files.items()}
    texts[home / ".codex" / "config.toml"] = (
        f'model = "o3"\n\n[mcp_servers.lichhook]\ncommand = "{PY}"\nargs = ["{legacy}", "mcp"]\n')
    texts[home / ".gemini" / "config" / "plugins" / "lichhook" / "plugin.json"] = json.dumps(
        {"name": "lichhook", "description": "Reports each Antigravity conversation to lich (added by "
         "'lichhook install antigravity')."}, indent=2) + "\n"
    for kind, path in (("opencode", home / ".config" / "opencode" / "plugin" / "lich.js"),
                       ("omp", home / ".omp" / "agent" / "extensions" / "lich.js")):
        template = (Path(__file__).parent / "fixtures" / "js" / f"{kind}-first.js").read_text(encoding="utf-8")
        texts[path] = template.replace('"@PYTHON@"', json.dumps(PY)).replace('"@ARCHIVE@"', json.dumps(legacy))
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return texts


def added_since(data: dict, path: Path, home: Path, hooks: str) -> None:
    """What this release adds to the previous release's configs (``data``, changed in
    place): a hook for every event the descriptor registers, each after the user's
    entries, and the bare ``antigravity`` and ``crush`` naming their event."""
    def cmd(*words: str, timeout: int) -> dict:
        return {"type": "command", "command": hook_line(PY, hooks, *words), "timeout": timeout}

    def group(*handlers: dict, matcher=None) -> list:
        return [dict({} if matcher is None else {"matcher": matcher}, hooks=list(handlers))]

    if path == home / ".claude" / "settings.json":
        table = data["hooks"]
        table["Stop"][0]["hooks"].append(cmd("claude", "Stop", timeout=10))  # into lichhook's own group
        for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "StopFailure", "PreCompact",
                      "PostCompact", "SessionEnd"):
            table[event] = group(cmd("claude", event, timeout=10))
    elif path == home / ".codex" / "hooks.json":
        table = data["hooks"]
        # the waits hook beside the report, in the same group: the report keeps its trust key
        table["SessionStart"][0]["hooks"].append(cmd("codex-waits", "session-start", timeout=5))
        for event in ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "PreCompact",
                      "PostCompact"):
            table[event] = group(cmd("codex", event, timeout=5))
        table["SessionEnd"] = group(cmd("codex", "SessionEnd", timeout=3))
    elif path.name == "hooks.json":  # Antigravity's plugin
        table = data["lichhook"]
        table["PreInvocation"][0]["command"] += " PreInvocation"
        table["PreToolUse"] = group(cmd("antigravity", "PreToolUse", timeout=5), matcher="")
        table["PostToolUse"] = group(cmd("antigravity", "PostToolUse", timeout=5), matcher=(
            "propose_code|file_change|edit_notebook|write_blob|delete_directory|run_command"))
        table["Stop"] = [cmd("antigravity", "Stop", timeout=5)]
    elif path.name == "crush.json":
        data["hooks"]["PreToolUse"][0]["command"] += " PreToolUse"  # its timeout 9 is the user's


def through_launcher(data, hooks: str) -> None:
    """Each hook command in ``data`` that runs ``hooks`` with ``-I -S`` as this release
    writes it: through its launcher (changed in place)."""
    items = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    for value in items:
        through_launcher(value, hooks)
    if isinstance(data, dict) and isinstance(data.get("command"), str):
        words = shlex.split(data["command"])
        if words[1:4] == ["-I", "-S", hooks]:
            data["command"] = hook_line(words[0], hooks, *words[4:])


def test_the_previous_release_registrations_are_updated_in_place(run, home, pyz, tmp_path):
    texts = previous_release(home, tmp_path)
    legacy = data_dir(home) / "lichhook.pyz"
    legacy.parent.mkdir(parents=True)
    shutil.copyfile(pyz, legacy)
    assert "OLD" not in str(texts)  # the fixture names no placeholder
    doctor = run("doctor", "--verbose").stdout.decode()
    for harness in ("claude", "codex", "antigravity", "crush", "opencode", "omp"):
        assert f"problem: {harness}: the registration is incomplete or out of date" in doctor, harness
    assert "another lichhook archive" not in doctor

    out = absolute(ok(run("install", "--all")).stdout.decode(), home)
    copy, hooks = str(installed_copy(home)), str(installed_hooks(home))
    assert f"archive: removed {legacy} (no harness runs it any more)" in out
    for path, old in texts.items():
        new = path.read_text(encoding="utf-8")
        if path.suffix == ".js":
            flags = json.dumps(["-I", "-S", "-c", launcher()])  # the options every hook registration has
            assert f"const FLAGS = {flags};" in new and json.dumps(hooks) in new and "const EVENTS = {" in new
            continue
        # Each of lichhook's words is brought up to date where it stands; the user's stay.
        # Hooks run the hooks archive, the MCP servers the complete one.
        expected = (old.replace(f"{PY} {legacy}", f"{PY} -I -S {hooks}")
                       .replace(f'"{legacy}"', f'"-I", "-S", "{copy}"'))
        if path.suffix == ".json":
            data = json.loads(expected)
            through_launcher(data, hooks)
            added_since(data, path, home, hooks)
            expected = json.dumps(data, indent=2) + "\n"  # an array laid out like its items
        assert new == expected, path
    # The user's Stop hook names a waits folder this fake home lacks: run, it lets every stop through.
    doctor_finds_nothing_but_trust(run, also="the waits hook does not do its job; it says: lichhook Stop hook let "
                                             "this stop through: the waits folder /home/me/waits does not exist")

    before = snapshot(home)
    ok(run("install", "--all"))
    assert snapshot(home) == before

    ok(run("uninstall", "--all"))
    assert not data_dir(home).exists()
    assert load(home / ".claude.json") == {"numStartups": 7}
    assert "lichhook" not in (home / ".codex" / "config.toml").read_text()


def test_a_crushrc_block_of_the_previous_release_is_updated_in_place(run, home):
    conf = home / ".config" / "crush"
    conf.mkdir(parents=True)
    legacy = str(data_dir(home) / "lichhook.pyz")
    from lichhook.install.harnesses.crush import BEGIN, END

    hook = f"hook add PreToolUse --name lichhook --command {shlex.quote(f'{PY} {legacy} crush')} --timeout 7"
    (conf / "crushrc").write_text(f"set x 1\n{BEGIN}\n{hook}\n{END}\n")
    ok(run("install", "crush"))
    text = (conf / "crushrc").read_text()
    new = hook_line(PY, str(installed_hooks(home)), "crush", "PreToolUse")
    start, line, end = text[len("set x 1\n"):].split("\n", 2)
    assert text.startswith("set x 1\n") and (start, end) == (BEGIN, f"{END}\n")
    assert shlex.split(line) == shlex.split(hook.replace(shlex.quote(f"{PY} {legacy} crush"), shlex.quote(new)))
    ok(run("uninstall", "crush"))
    assert (conf / "crushrc").read_text() == "set x 1\n"


def test_windows_entries_of_the_previous_release_are_updated_in_place(tmp_path):
    from lichhook.install.disk import files
    from lichhook.install.harnesses.claude import Claude
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target, launcher

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    env = Env({"USERPROFILE": str(home), "PATH": ""}, windows=True)
    python = "C:\\Python312\\python.exe"
    legacy = "C:\\Users\\zoe\\AppData\\Local\\lichhook\\lichhook.pyz"
    copy = "C:\\Users\\zoe\\AppData\\Local\\lichhook\\py3.12\\lichhook.pyz"
    stop = {"type": "command", "command": python, "args": [legacy, "claude-code", "stop", "D:\\waits"], "timeout": 10}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [stop]}]}}))
    codex = {"type": "command", "command": f"C:/Python312/python.exe {legacy.replace(chr(92), '/')} codex",
             "commandWindows": f"{python} {legacy} codex", "timeout": 5}
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [codex]}]}}))
    hooks_archive = copy.replace("lichhook.pyz", "hooks.pyz")
    target = Target(python, hooks_archive, windows=True, short_path=lambda p: None)
    for edit in Claude(env).install(target) + Codex(env).install(target):
        files.apply(edit)
    hooks = load(home / ".claude" / "settings.json")["hooks"]
    assert len(hooks["Stop"]) == 1 and hooks["Stop"][0]["hooks"][0] == dict(
        stop, args=[*hook_options("claude-code", "stop"), hooks_archive, "claude-code", "stop", "D:\\waits"])
    assert len(hooks["SessionStart"][0]["hooks"]) == 2
    entry = load(home / ".codex" / "hooks.json")["hooks"]["SessionStart"]
    assert len(entry) == 1 and entry[0]["hooks"][0] == dict(
        codex, command=hook_line("C:/Python312/python.exe", hooks_archive.replace(chr(92), "/"), "codex"),
        commandWindows=f'{python} -I -S -c "{launcher()}" {hooks_archive} codex')
    for edit in Claude(env).uninstall(target) + Codex(env).uninstall(target):
        files.apply(edit)
    assert not (home / ".claude" / "settings.json").exists() and not (home / ".codex" / "hooks.json").exists()


# -- which paths are lichhook's copies -------------------------------------------------------


def test_every_copy_is_recognised_and_nothing_else():
    from lichhook.install.copies import stable
    from lichhook.install.copies.target import Target

    data = "/home/Jo Smith/.local/share/lichhook"
    t = Target("/usr/bin/python3", f"{data}/py3.12/lichhook.pyz", windows=False)
    assert t.root == data
    for word in (f"{data}/lichhook.pyz", f"{data}/py3.9/lichhook.pyz", f"{data}/py3.13/lichhook.pyz",
                 f"{data}/magic3600/lichhook.pyz"):
        assert t.archive_of(word) == word and t.owns(f"/usr/bin/python3 -I -S {shlex.quote(word)} claude")
    for word in ("/elsewhere/lichhook.pyz", f"{data}/py3/lichhook.pyz", f"{data}/pyx.y/lichhook.pyz",
                 f"{data}/other.pyz", f"{data}/py3.12/sub/lichhook.pyz", f"{data}/py3.12", f"{data}/py.12/lichhook.pyz"):
        assert t.archive_of(word) is None, word
    # The folder is named by the version the interpreter gives (3.15 and later too); the
    # magic<number> folders of an earlier release are still lichhook's.
    assert [stable.version_folder(archive.Bytecode(v, b"\0\0\r\n")) for v in ("3.9", "3.13", "3.15")] == \
        ["py3.9", "py3.13", "py3.15"]
    assert all(stable.is_version_folder(name) for name in ("py3.9", "py3.15", "py4.0", "magic3666"))

    shorts = {"C:\\Users\\Jo Smith": "C:\\Users\\JOSMIT~1"}
    w = Target("C:\\Python312\\python.exe", "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook\\py3.12\\lichhook.pyz",
               windows=True, short_path=lambda p: shorts.get(p))
    for word in ("C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook\\py3.11\\lichhook.pyz",
                 "C:/Users/JOSMIT~1/AppData/Local/lichhook/lichhook.pyz",
                 "C:/Users/Jo Smith/AppData/Local/lichhook/py3.12/lichhook.pyz"):
        assert w.archive_of(word) is not None, word
    assert w.archive_of("C:\\Users\\JOSMIT~1\\AppData\\Local\\lichhook\\py3.11\\lichhook.pyz") == \
        "C:\\Users\\Jo Smith\\AppData\\Local\\lichhook\\py3.11\\lichhook.pyz"
