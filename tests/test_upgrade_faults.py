"""A hook never fails the turn because its archive copy is half there: the complete
archive missing or cut short (as a swap or a broken copy leaves it), the hook still exits 0
with its verdict, and doctor names the missing archive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lichhook.archive import archive_bytes, legacy_pyc, members, stamp
from lichhook.install.copies.stable import copy_archive
from testkit.archive import STALE_START, hook_options, installed_copy, installed_hooks
from testkit.environment import other_pythons, shadowing_project

PLUGIN = "from lichhook import hookimpl\n"  # any plugin file sends the hook through the host


def hook(env: dict, archive: Path, *args: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", str(archive), *args], input=json.dumps(payload).encode(),
                          env=env, capture_output=True, timeout=30)


@pytest.fixture
def installed(run, home, base_env, tmp_path):
    done = run("install", "antigravity", "claude")
    assert done.returncode == 0, done.stderr.decode()
    plugins = tmp_path / "plugins"
    plugins.mkdir(mode=0o755)
    (plugins / "mine.py").write_text(PLUGIN)
    return dict(base_env, LICHHOOK_PLUGIN_DIR=str(plugins)), installed_copy(home), installed_hooks(home)


@pytest.mark.parametrize("damage", ["missing", "cut-short"])
def test_a_hook_whose_complete_archive_is_gone_still_gives_its_verdict(installed, damage):
    env, complete, hooks = installed
    if damage == "missing":
        complete.unlink()
    else:
        data = complete.read_bytes()
        complete.write_bytes(data[: len(data) // 2])
    done = hook(env, hooks, "antigravity", "PreToolUse",
                payload={"conversation_id": "c-1", "tool_name": "run_command", "hook_event_name": "PreToolUse"})
    assert (done.returncode, done.stdout) == (0, b'{"decision":"allow"}'), done.stderr.decode()
    assert b"Traceback" not in done.stderr
    done = hook(env, hooks, "antigravity", "Stop", payload={"conversation_id": "c-1"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode()


def test_doctor_names_a_missing_complete_archive(run, installed):
    env, complete, hooks = installed
    assert run("uninstall", "claude").returncode == 0  # its MCP server names the complete archive itself
    complete.unlink()
    done = run("doctor", "--verbose")
    out = done.stdout.decode()
    assert done.returncode == 1 and "no problem found" not in out
    assert f"{complete}" in out and "missing" in out.split("problem:", 1)[1]


def test_doctor_names_a_cut_short_complete_archive_without_a_traceback(run, installed):
    env, complete, hooks = installed
    assert run("uninstall", "claude").returncode == 0
    data = complete.read_bytes()
    complete.write_bytes(data[: len(data) // 2])  # its zip directory, at the end, is gone
    done = run("doctor", "--verbose")
    out = done.stdout.decode()
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    assert done.returncode == 1 and "no problem found" not in out
    assert f"cannot compare {hooks} with {complete}" in out


# -- an upgrade while a hook runs ------------------------------------------------------------

def next_release(complete: bytes) -> bytes:
    """``complete`` as a later release could be: one more member near the front, so every
    member after it lies at another offset, as any change to the sources does."""
    shebang, files = members(complete)
    files["lichhook/!upgrade.txt"] = b"a later release\n" * 200
    return archive_bytes(files, shebang, stamp(complete))


def started(command: list, env: dict) -> subprocess.Popen:
    """``command`` started with its stdin open and empty, once it waits there for its
    payload (Linux says so in /proc): it has imported what a hook imports before reading
    its payload, and imports the rest after. It reads for 1 s at most."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    waiting = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 0.8
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if any(word in waiting.read_text() for word in ("poll", "select")):
                break
        except OSError:
            pass
        time.sleep(0.005)
    assert proc.poll() is None, proc.communicate()
    return proc


@pytest.mark.parametrize("with_plugin", [False, True], ids=["hooks-archive", "and-the-complete-one"])
@pytest.mark.parametrize("provider,event,payload,verdict", [
    ("claude", "PreToolUse", {"session_id": "s-up", "hook_event_name": "PreToolUse", "tool_name": "Bash"}, b""),
    ("antigravity", "PreToolUse", {"conversation_id": "s-up", "tool_name": "run_command",
                                   "hook_event_name": "PreToolUse"}, b'{"decision":"allow"}'),
])
def test_a_hook_running_while_install_replaces_its_archives_sends_its_report(installed, standin, provider, event,
                                                                            payload, verdict, with_plugin):
    """install replaces both archives (its own code, stable.copy_archive) while a hook
    waits for its payload: the hook still imports what it needs, whole, from the files
    it started with, and its report reaches lich once."""
    plugin_env, complete, hooks = installed
    env = dict(plugin_env if with_plugin else {k: v for k, v in plugin_env.items() if k != "LICHHOOK_PLUGIN_DIR"},
               **standin.environ(), LICHHOOK_DEBUG="1")
    upgrade, before = next_release(complete.read_bytes()), hooks.read_bytes()
    # run as registered: through the launcher (lichhook.install.copies.target)
    proc = started([sys.executable, *hook_options(provider, event), str(hooks), provider, event], env)
    copy_archive(upgrade, str(complete))
    assert hooks.read_bytes() != before
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=30)
    assert (proc.returncode, out) == (0, verdict), err.decode()
    assert b"nothing sent" not in err and b"Traceback" not in err, err.decode()
    assert [r.verdict for r in standin.wait_for(1, timeout=10)] == ["accepted"]


@pytest.mark.parametrize("holder", ["a hook to its deadline", "a program that never lets go"])
def test_on_windows_install_waits_out_a_hook_holding_its_archives(pyz, tmp_path, monkeypatch, holder):
    """Windows refuses to replace a file a process has open, and a hook holds both archives
    from its start to its exit (lichhook/__main__.py): its deadline, HOOK_SECONDS, plus its
    interpreter's start and exit. install's copy outlasts that (on a clock and refusals
    faked here; the Windows lane does it for real), where diskio's one second would not;
    a holder that never lets go gets install's message, with nothing changed."""
    import time

    from lichhook import diskio
    from lichhook.install.copies import stable
    from lichhook.install.errors import ConfigError
    from lichhook.hook import HOOK_SECONDS

    dest = tmp_path / "py3.11" / "lichhook.pyz"
    copy_archive(pyz.read_bytes(), str(dest))
    hooks = dest.with_name("hooks.pyz")
    old, old_hooks = dest.read_bytes(), hooks.read_bytes()
    upgrade = next_release(old)
    # A hook whose deadline began as the copy did, and whose interpreter took 0.6 s to end.
    lets_go = HOOK_SECONDS + 0.6 if holder.startswith("a hook") else float("inf")
    assert diskio.REPLACE_RETRY_SECONDS < lets_go <= stable.ARCHIVE_RETRY_SECONDS or lets_go == float("inf")
    clock = {"now": 0.0}
    real_replace = os.replace

    def replace(src, dst, **kw):  # type: ignore[no-untyped-def]
        if clock["now"] < lets_go:
            raise PermissionError(13, "The process cannot access the file because it is being used", dst)
        real_replace(src, dst)

    monkeypatch.setattr(diskio.sys, "platform", "win32")
    monkeypatch.setattr(diskio.os, "replace", replace)
    monkeypatch.setattr(time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(time, "sleep", lambda seconds: clock.update(now=clock["now"] + seconds))
    if lets_go == float("inf"):
        with pytest.raises(ConfigError) as refused:
            copy_archive(upgrade, str(dest))
        monkeypatch.undo()
        assert "another program has it open" in str(refused.value) and str(hooks) in str(refused.value)
        assert refused.value.partly_done is False  # type: ignore[attr-defined]
        assert (dest.read_bytes(), hooks.read_bytes()) == (old, old_hooks)
        assert stable.ARCHIVE_RETRY_SECONDS - 0.1 <= clock["now"] <= stable.ARCHIVE_RETRY_SECONDS
    else:
        copy_archive(upgrade, str(dest))
        monkeypatch.undo()
        assert dest.read_bytes() == upgrade and stable.pair_mismatch(str(dest)) is None
    assert sorted(p.name for p in dest.parent.iterdir()) == ["hooks.pyz", "lichhook.pyz"]  # no temporary left


def test_a_project_on_pythonpath_never_runs_inside_an_archive_run_by_hand(pyz, base_env, tmp_path):
    """``python3 lichhook.pyz claude-code stop`` by hand, without -I, in a project with
    PYTHONPATH=. holding its own json.py, struct.py, zlib.py: the standard library's
    run, and the Stop hook answers as it does anywhere else. On a Python the archive has
    no bytecode for, its sources are inflated with zlib, which then is Python's too."""
    project, markers = shadowing_project(tmp_path)
    payload = b'{"session_id": "s-by-hand", "stop_hook_active": false}'
    pythons = [sys.executable] + other_pythons()[:1]
    for python in pythons:
        clean = subprocess.run([python, str(pyz), "claude-code", "stop"], input=payload, env=base_env,
                               capture_output=True, timeout=60, cwd=str(tmp_path))
        done = subprocess.run([python, str(pyz), "claude-code", "stop"], input=payload,
                              env=dict(base_env, PYTHONPATH="."), capture_output=True, timeout=60, cwd=str(project))
        assert (done.returncode, done.stdout, done.stderr) == (0, clean.stdout, b""), (python, done.stderr.decode())
        assert sorted(os.listdir(markers)) == [], python


# -- whatever breaks, no traceback ------------------------------------------------------------

def damaged(hooks: Path, module: str) -> None:
    """Make ``module`` (an archive path without suffix) of the hooks archive raise when
    imported, as a bug or a damaged copy would."""
    shebang, files = members(hooks.read_bytes())
    source = b"raise RuntimeError('damaged on purpose')\n"
    files[module + ".py"] = source
    files[module + ".pyc"] = legacy_pyc(module + ".py", source)
    hooks.write_bytes(archive_bytes(files, shebang, stamp(hooks.read_bytes())))


@pytest.mark.parametrize("module,args,payload,outcome", [
    ("lichhook/report", ["antigravity", "PreToolUse"], {"conversation_id": "c-1", "tool_name": "run_command"},
     (0, b'{"decision":"allow"}')),
    ("lichhook/waits/hooks/__init__", ["claude-code", "stop"], {"session_id": "s-1"}, (0, b"")),
    ("lichhook/waits/hooks/text", ["codex-waits", "session-start"], {"session_id": "s-1"}, (0, b"")),
    ("lichhook/waits/cli", ["wait", "list", "--by", "me", "--session", "s-1"], None, (1, b"")),
])
def test_a_hook_that_raises_where_nothing_catches_it_exits_with_its_verdict(installed, standin, home, module, args,
                                                                          payload, outcome):
    env, _, hooks = installed
    env = dict(env, **standin.environ())
    env.pop("LICHHOOK_PLUGIN_DIR")
    damaged(hooks, module)
    done = subprocess.run([sys.executable, "-I", "-S", str(hooks), *args],
                          input=json.dumps(payload).encode() if payload else b"", env=env, capture_output=True,
                          timeout=30)
    assert (done.returncode, done.stdout) == outcome, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    if args[0] == "wait":
        assert b"damaged on purpose" in done.stderr and done.stderr.count(b"\n") == 1
    else:
        assert done.stderr == b""
        failures = list(home.rglob("failures.jsonl"))
        assert failures and b"damaged on purpose" in failures[0].read_bytes()


def without_proc(command: list) -> list:
    """``command`` in a mount namespace of its own whose /proc is an empty folder, as in
    a container or chroot without one (root and util-linux's unshare only)."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount -t tmpfs none /proc && exec "$@"',
            "sh", *command]


def can_hide_proc() -> bool:
    try:
        return subprocess.run(without_proc(["test", "!", "-e", "/proc/self"]), capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.parametrize("proc", ["/proc", "no /proc"])
def test_an_upgrade_landing_as_a_hook_starts_still_runs_one_release_whole(installed, standin, tmp_path, proc):
    """The archives replaced after Python read hooks.pyz's table of contents (as it does
    when it starts) but before the hook holds them: with /proc the hook reads the file it
    holds afresh; without (and where the table cannot be read again: Windows' Python 3.9)
    its first imports fail, nothing read or sent yet, and the hook runs again from the
    start. Either way: its verdict, one report."""
    if proc == "no /proc" and not can_hide_proc():
        pytest.skip("needs root and unshare to run a hook without /proc")
    plugin_env, complete, hooks = installed
    env = dict({k: v for k, v in plugin_env.items() if k != "LICHHOOK_PLUGIN_DIR"}, **standin.environ(),
               LICHHOOK_DEBUG="1")
    go = tmp_path / "go"
    command = [sys.executable, "-I", "-S", "-c", STALE_START, str(hooks), str(go), "antigravity", "PreToolUse"]
    proc_run = subprocess.Popen(without_proc(command) if proc == "no /proc" else command, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc_run.stdout is not None and proc_run.stdout.readline().strip() == b"read", proc_run.communicate()
    copy_archive(next_release(complete.read_bytes()), str(complete))
    go.write_bytes(b"")
    payload = {"conversation_id": "s-start", "tool_name": "run_command", "hook_event_name": "PreToolUse"}
    out, err = proc_run.communicate(json.dumps(payload).encode(), timeout=30)
    assert (proc_run.returncode, out) == (0, b'{"decision":"allow"}'), err.decode()
    assert b"Traceback" not in err, err.decode()
    assert (b"running it again" in err) == (proc == "no /proc"), err.decode()
    time.sleep(0.3)  # a second report, if any, would have arrived by now
    assert [r.verdict for r in standin.reports] == ["accepted"]
