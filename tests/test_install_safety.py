"""install, uninstall and doctor never damage a user's files: one test per way they once
did, each through the built archive in a subprocess, against real files in a fake home."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from testkit.archive import absolute, installed_copy, installed_hooks

PY = os.path.abspath(sys.executable)
ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
USER_UID, USER_GID, SUDO_GID = 54321, 54322, 54323


def stable(home: Path) -> Path:
    return installed_copy(home)


def legacy(home: Path) -> Path:
    """Where the previous release kept its one copy of the archive."""
    return home / ".local" / "share" / "lichhook" / "lichhook.pyz"


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def out_err(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode() + result.stderr.decode()


def snapshot(folder: Path) -> dict:
    """path -> bytes of every regular file under ``folder``, links not followed."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def one_insertion(before: bytes, after: bytes) -> bool:
    """Whether ``after`` is ``before`` with one run of bytes added at one place."""
    prefix = 0
    while prefix < len(before) and before[prefix] == after[prefix]:
        prefix += 1
    return after.endswith(before[prefix:]) and len(after) > len(before)


def node_parses(path: Path) -> None:
    """Node's JSON.parse, the reader Claude Code and opencode use, accepts the file."""
    node = shutil.which("node")
    if node is None:
        return
    script = "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8').replace(/^\\uFEFF/, ''))"
    done = subprocess.run([node, "-e", script, str(path)], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr.decode()


# -- symbolic links -------------------------------------------------------------------------


def test_a_linked_settings_file_is_edited_where_it_points_and_stays_a_link(run, home, tmp_path):
    dotfiles = tmp_path / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    real = dotfiles / "settings.json"
    original = b'{\n  "model": "opus"\n}\n'
    real.write_bytes(original)
    (home / ".claude").mkdir()
    link = home / ".claude" / "settings.json"
    link.symlink_to(real)

    out = absolute(ok(run("install", "claude")).stdout.decode(), home)
    assert f"changed {link} (through the link to {real})" in out
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "claude-code stop" in real.read_text()
    assert sorted(p.name for p in dotfiles.iterdir()) == ["settings.json"]  # no temporary, no backup there
    backup = home / ".claude" / "settings.json.lichhook-backup"
    assert backup.read_bytes() == original and not backup.is_symlink()

    ok(run("uninstall", "claude"))
    assert link.is_symlink() and real.read_bytes() == original


def test_a_linked_config_folder_gets_its_new_file_where_it_points(run, home, tmp_path):
    target = tmp_path / "dotfiles" / "codex"
    target.mkdir(parents=True)
    (home / ".codex").symlink_to(target)
    ok(run("install", "codex"))
    assert (home / ".codex").is_symlink()
    assert (target / "hooks.json").is_file() and (target / "config.toml").is_file()
    ok(run("uninstall", "codex"))
    assert (home / ".codex").is_symlink() and list(target.iterdir()) == []


def test_a_dangling_link_is_refused_and_the_other_harnesses_are_installed(run, home, tmp_path):
    (home / ".claude").mkdir()
    link = home / ".claude" / "settings.json"
    link.symlink_to(tmp_path / "gone" / "settings.json")
    (home / ".codex").mkdir()
    result = run("install", "--all")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"{link} is a symbolic link to {tmp_path / 'gone' / 'settings.json'}, which does not exist" in err
    assert "Skipped claude" in err
    assert link.is_symlink() and not (tmp_path / "gone").exists()
    assert not (home / ".claude.json").exists()  # claude skipped whole
    assert (home / ".codex" / "hooks.json").exists()  # codex installed


def user_home(pyz: Path, tmp_path: Path) -> tuple:
    """(run as uid 54321, world folder, home owned by that user) for tests run as root."""
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no /usr/bin/python3 another user can run")
    world = Path(os.path.realpath(tmp_path)) / "world"
    world.mkdir()
    for folder in [world, *world.parents]:
        if str(folder).startswith("/tmp/"):
            os.chmod(folder, os.stat(folder).st_mode | 0o755)
    archive = world / "lichhook.pyz"
    shutil.copy(pyz, archive)
    os.chmod(archive, 0o644)
    home = world / "home"
    (home / ".claude").mkdir(parents=True)
    for path in [home, home / ".claude"]:
        os.chown(path, USER_UID, USER_GID)

    def run_as_user(*args: str) -> subprocess.CompletedProcess:
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(home / ".local" / "share")}
        return subprocess.run([python, str(archive), *args], env=env, capture_output=True, timeout=60,
                              user=USER_UID, group=USER_GID, cwd=str(home))
    return run_as_user, world, home


@ROOT_ONLY
def test_a_link_into_a_folder_the_user_cannot_write_is_refused(pyz, tmp_path):
    run_as_user, world, home = user_home(pyz, tmp_path)
    locked = world / "system"
    locked.mkdir(mode=0o755)  # root's, not writable by the user
    (locked / "settings.json").write_text('{"model": "opus"}')
    (home / ".claude" / "settings.json").symlink_to(locked / "settings.json")
    os.lchown(home / ".claude" / "settings.json", USER_UID, USER_GID)
    result = run_as_user("install", "claude")
    assert result.returncode == 1, out_err(result)
    err = result.stderr.decode()
    assert f"is a symbolic link to {locked / 'settings.json'}, and the folder {locked} cannot be written by you" in err
    assert (locked / "settings.json").read_text() == '{"model": "opus"}'
    assert not (home / ".claude.json").exists() and not (home / ".local").exists()


@ROOT_ONLY
def test_a_config_left_owned_by_root_is_not_taken_over_by_the_user(pyz, tmp_path):
    """An earlier ``sudo`` run left ``~/.claude.json`` root's: rewriting it as the user
    would change its owner, so it is refused with the fix."""
    run_as_user, world, home = user_home(pyz, tmp_path)
    state = home / ".claude.json"
    state.write_text('{"numStartups": 3}')
    os.chmod(state, 0o644)
    result = run_as_user("install", "claude")
    assert result.returncode == 1, out_err(result)
    assert f"{state} belongs to another user (uid 0); rewriting it would make it yours" in result.stderr.decode()
    assert state.read_text() == '{"numStartups": 3}' and state.stat().st_uid == 0
    assert not (home / ".claude" / "settings.json").exists()


# -- numbers, escapes and text as written ---------------------------------------------------

AWKWARD = (
    '{\n'
    '    "big": 1e400,\n'
    '    "hundred": 1e2,\n'
    '    "version": 1.10,\n'
    '    "id": 12345678901234567890123,\n'
    '    "negzero": -0,\n'
    '    "surrogate": "\\ud800",\n'
    '    "pair": "\\ud83d\\ude00",\n'
    '    "text": "Zoë ☃ \\"quoted\\" \\/ \\u2028",\n'
    '    "deep": [[[[[[[[[[{"a": [1.0E-7]}]]]]]]]]]],\n'
    '    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}\n'
    '}'
)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_numbers_escapes_and_text_survive_byte_for_byte(run, home, newline):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = AWKWARD.replace("\n", newline).encode("utf-8")
    settings.write_bytes(original)
    state = home / ".claude.json"
    state_original = b'\xef\xbb\xbf{"numStartups": 12345678901234567890, "tipsHistory": {"x": 1e2}}'
    state.write_bytes(state_original)

    ok(run("install", "claude"))
    for path, before in ((settings, original), (state, state_original)):
        assert one_insertion(before, path.read_bytes())  # nothing of the user's moved or changed
    assert b"claude-code stop" in settings.read_bytes()
    node_parses(settings)
    node_parses(state)
    doctor = run("doctor", "--verbose")
    assert "Traceback" not in out_err(doctor) and "registered: yes" in doctor.stdout.decode()

    ok(run("uninstall", "claude"))
    assert settings.read_bytes() == original
    assert state.read_bytes() == state_original


# -- ownership and mode --------------------------------------------------------------------


@ROOT_ONLY
def test_root_in_its_own_home_keeps_its_files_its_own(run, home):
    """Plain ``sudo`` sets HOME to root's: SUDO_UID must not hand root's configs over."""
    env = {"SUDO_UID": str(USER_UID), "SUDO_GID": str(SUDO_GID)}
    ok(run("install", "claude", env=env))
    for made in [home / ".claude", home / ".claude" / "settings.json", home / ".claude.json", stable(home)]:
        st = made.stat()
        assert (st.st_uid, st.st_gid) == (0, 0), made


def test_an_existing_files_mode_is_kept(run, home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}")
    os.chmod(settings, 0o640)
    ok(run("install", "claude"))
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600  # new: private, as Claude Code's own


# -- only regular files ----------------------------------------------------------------------


def test_a_fifo_where_a_config_belongs_is_refused_at_once(run, home):
    fifo = home / ".claude" / "settings.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    started = time.monotonic()
    for command in (("install", "claude"), ("doctor",), ("uninstall", "claude")):
        result = run(*command, timeout=20)
        assert result.returncode == 1
        assert f"{fifo} is a FIFO (named pipe), where a file belongs; move it away" in out_err(result)
        assert "Traceback" not in out_err(result)
    assert time.monotonic() - started < 20
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("kind", ["device", "folder"])
def test_a_device_or_folder_where_a_config_belongs_is_refused(run, home, kind):
    path = home / ".claude.json"
    if kind == "device":
        path.symlink_to("/dev/null")
        expected = f"{path} is a character device, where a file belongs"
    else:
        path.mkdir()
        expected = f"{path} is a folder, where a file belongs"
    result = run("install", "claude", timeout=20)
    assert result.returncode == 1 and expected in result.stderr.decode()
    assert not (home / ".claude").exists()  # nothing of claude was written


# -- one bad file stops only its own harness ---------------------------------------------------


def test_install_all_installs_what_it_can_and_names_what_it_skipped(run, home):
    (home / ".claude").mkdir()
    codex = home / ".codex"
    codex.mkdir()
    bad = codex / "config.toml"
    bad.write_bytes(b"[mcp_servers\nbroken = ")
    (home / ".config" / "crush").mkdir(parents=True)
    result = run("install", "--all")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"lichhook install: codex: {bad} is not valid TOML" in err
    assert "Skipped codex: nothing was changed for it; the other harnesses were done." in err
    assert bad.read_bytes() == b"[mcp_servers\nbroken = " and not (codex / "hooks.json").exists()
    assert (home / ".claude" / "settings.json").exists() and (home / ".config" / "crush" / "crush.json").exists()
    assert stable(home).exists()


def test_a_bom_in_codex_config_stops_nothing(run, home):
    codex = home / ".codex"
    codex.mkdir()
    original = b'\xef\xbb\xbfmodel = "o3"\r\n'
    (codex / "config.toml").write_bytes(original)
    (home / ".claude").mkdir()
    ok(run("install", "--all"))
    text = (codex / "config.toml").read_bytes()
    assert text.startswith(original + b"\r\n[mcp_servers.lichhook]\r\n")
    assert (home / ".claude" / "settings.json").exists()
    ok(run("uninstall", "--all"))
    assert (codex / "config.toml").read_bytes() == original


def test_the_archive_stays_while_a_config_that_may_run_it_cannot_be_read(run, home):
    ok(run("install", "claude", "codex"))
    settings = home / ".claude" / "settings.json"
    good = settings.read_bytes()
    settings.write_bytes(good[:-5])  # mid-write, or damaged by hand
    out = absolute(ok(run("uninstall", "codex")).stdout.decode(), home)
    assert stable(home).exists()
    assert f"archive: kept {stable(home)}: lichhook cannot tell whether claude still runs it, as {settings} " \
           "is not valid JSON" in out
    settings.write_bytes(good)
    out = absolute(ok(run("uninstall", "codex")).stdout.decode(), home)
    assert f"archive: kept {stable(home)}: claude still runs it ({settings})" in out
    out = absolute(ok(run("uninstall", "claude")).stdout.decode(), home)
    assert "archive: removed" in out and not stable(home).exists()


# -- the user's additions to lichhook's entries ------------------------------------------------


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_reinstall_updates_only_lichhooks_words_and_keeps_the_users(run, home, tmp_path):
    old = tmp_path / "old" / "python3"  # the Python of an earlier install, since removed
    old.parent.mkdir()
    old.symlink_to(sys.executable)
    ok(run("install", "claude", "crush", python=str(old)))
    settings, state = home / ".claude" / "settings.json", home / ".claude.json"
    crush = home / ".config" / "crush" / "crush.json"

    def customise(data):
        data["hooks"]["Stop"][0]["hooks"][0]["command"] += " /home/me/waits"
        data["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 30
        data["hooks"]["SessionStart"][0]["matcher"] = "startup|resume"
    edit_json(settings, customise)
    edit_json(state, lambda d: d["mcpServers"]["lichhook"].update(
        env={"LICHHOOK_WAITS_DIR": "/home/me/waits"}, args=d["mcpServers"]["lichhook"]["args"] + ["--waits-dir", "/w"]))
    edit_json(crush, lambda d: d["hooks"]["PreToolUse"][0].update(timeout=9))

    out = ok(run("doctor", "--verbose", python=str(old))).stdout.decode()
    assert "customised (install keeps it): arguments after lichhook's: /home/me/waits" in out
    assert "customised (install keeps it): arguments after lichhook's: --waits-dir /w; 'env' added" in out
    assert "timeout 30 (lichhook writes 10)" in out and "verdict: no problem found" in out
    customised = snapshot(home)
    ok(run("install", "claude", "crush", python=str(old)))
    assert snapshot(home) == customised  # customised and current: nothing to do

    old.unlink()
    doctor = run("doctor", "--verbose")
    assert doctor.returncode == 1
    out = doctor.stdout.decode()
    assert f"runs a Python that is missing ({old})" in out
    assert "problem: claude: the registration is incomplete or out of date" in out
    assert "(it keeps what you added to lichhook's entries)" in out

    ok(run("install", "claude", "crush"))
    now = snapshot(home)
    for name in (".claude/settings.json", ".claude.json", ".config/crush/crush.json"):
        assert now[name] == customised[name].replace(str(old).encode(), PY.encode()), name
    assert "verdict: no problem found" in ok(run("doctor", "--verbose")).stdout.decode()

    ok(run("uninstall", "claude", "crush"))
    # lichhook made them and nothing else was ever in them (their backups hold only its entries): they go
    assert not settings.exists() and not crush.exists() and not state.exists()


def test_an_entry_wrapped_in_another_command_is_left_alone_and_said_so(run, home, tmp_path):
    ok(run("install", "claude"))
    settings = home / ".claude" / "settings.json"
    edit_json(settings, lambda d: d["hooks"]["Stop"][0]["hooks"][0].update(
        command="nice -n 5 " + d["hooks"]["Stop"][0]["hooks"][0]["command"]))
    other = tmp_path / "python3"
    other.symlink_to(sys.executable)
    out = absolute(ok(run("install", "claude", python=str(other))).stdout.decode(), home)
    assert "note: claude: left your changed Stop entry in" in out and "cannot tell its own words" in out
    stop = json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert stop.startswith(f"nice -n 5 {PY} ")
    start = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert start.startswith(str(other) + " ")  # the others were updated


# -- a harness writing its file meanwhile -------------------------------------------------------

WRITER = textwrap.dedent("""
    import json, os, random, sys, time
    path, count = sys.argv[1], int(sys.argv[2])
    for i in range(count):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        data[f"k{i}"] = i
        tmp = f"{path}.writer.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)  # as Claude Code rewrites ~/.claude.json
        time.sleep(random.random() / 1000)
""")


def test_a_harness_rewriting_its_config_meanwhile_loses_nothing(run, home, tmp_path):
    state = home / ".claude.json"
    state.write_text('{"numStartups": 1}')
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    count = 1500
    proc = subprocess.Popen([sys.executable, str(writer), str(state), str(count)])
    rounds = changed = 0
    try:
        while proc.poll() is None and rounds < 12:
            command = "install" if rounds % 2 == 0 else "uninstall"
            result = run(command, "claude")
            assert result.returncode == 0 or "kept changing" in result.stderr.decode(), out_err(result)
            changed += f"changed {state}" in absolute(result.stdout.decode(), home)
            rounds += 1
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == 0 and changed >= 2  # lichhook did write while the harness wrote
    data = json.loads(state.read_text())
    missing = [i for i in range(count) if data.get(f"k{i}") != i]
    assert missing == []  # every write of the harness is there


IN_PLACE_WRITER = textwrap.dedent("""
    import json, os, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    data = json.load(open(path, encoding="utf-8"))
    i = 0
    while not os.path.exists(stop):
        i += 1
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except ValueError:
                pass  # lichhook's rename landed mid-read; keep what we had
        data[f"k{i}"] = i
        with open(path, "r+", encoding="utf-8") as f:  # in place: truncate, a pause, then write
            f.truncate(0)
            f.flush()
            time.sleep(0.004)
            json.dump(data, f)
        time.sleep(0.002)
""")


def test_a_harness_truncating_then_writing_its_config_never_makes_install_drop_it(run, home, tmp_path):
    """A harness that rewrites ``~/.claude.json`` in place leaves it empty for a moment:
    install must never write what it built from that moment, nor keep it as the backup."""
    state = home / ".claude.json"
    state.write_text(json.dumps({"numStartups": 1, "userID": "u", "projects": {"/p": {}}}))
    writer, stop = tmp_path / "writer.py", tmp_path / "stop"
    writer.write_text(IN_PLACE_WRITER)
    proc = subprocess.Popen([sys.executable, str(writer), str(state), str(stop)])
    try:
        for rounds in range(16):
            result = run("install" if rounds % 2 == 0 else "uninstall", "claude")
            assert "Traceback" not in out_err(result)
            if result.returncode:
                # refused, with nothing written: caught mid-rewrite, or between two parts of a long write
                assert any(why in result.stderr.decode() for why in ("another program", "kept changing",
                                                                      "is not valid JSON")), out_err(result)
            for path in (state, home / ".claude.json.lichhook-backup"):
                if path.exists() and path.stat().st_size:
                    try:
                        data = json.loads(path.read_text())
                    except ValueError:
                        continue  # the writer is between its truncation and its write
                    assert {"numStartups", "userID", "projects"} <= set(data), (path, sorted(data)[:5])
            backup = home / ".claude.json.lichhook-backup"
            assert not backup.exists() or backup.stat().st_size > 0
    finally:
        stop.touch()
        proc.wait(timeout=60)
    assert proc.returncode == 0


SLOW_IN_PLACE_WRITER = textwrap.dedent("""
    import os, sys, time
    path, truncated = sys.argv[1], sys.argv[2]
    data = open(path, "rb").read()
    with open(path, "r+b") as f:  # in place, stalled between its truncation and its write
        f.truncate(0)
        f.flush()
        open(truncated, "w").close()
        time.sleep(0.6)
        f.write(data)
""")


def test_a_config_left_empty_for_a_moment_is_not_taken_as_blank(tmp_path):
    """In process: a harness stalled for 0.6 s between truncating its config and writing it
    again (a busy machine). The write waits for it rather than taking the file as blank, so
    it neither keeps a blank backup nor writes what it built from nothing."""
    from lichhook.install import harness
    from lichhook.install.disk import files

    state = tmp_path / ".claude.json"
    original = json.dumps({"numStartups": 1, "userID": "u", "projects": {"/p": {}}}).encode()
    state.write_bytes(original)
    writer, truncated = tmp_path / "writer.py", tmp_path / "truncated"
    writer.write_text(SLOW_IN_PLACE_WRITER)

    def add(doc, notes):
        doc.ensure_root()  # as install does: a blank file is given an object
        doc.add_member((), "lichhook", True)

    proc = subprocess.Popen([sys.executable, str(writer), str(state), str(truncated)])
    try:
        while not truncated.exists():
            time.sleep(0.005)
        files.apply(files.Edit(str(state), harness.json_edit(str(state), add)))
    finally:
        assert proc.wait(timeout=60) == 0
    assert (tmp_path / ".claude.json.lichhook-backup").read_bytes() == original
    assert {"numStartups", "userID", "projects", "lichhook"} <= set(json.loads(state.read_bytes()))


def test_an_emptied_config_whose_backup_holds_settings_is_not_written(run, home):
    state = home / ".claude.json"
    state.write_text('{"numStartups": 3, "userID": "u"}')
    ok(run("install", "claude"))
    state.write_bytes(b"")  # caught between a harness's truncation and its write
    result = run("install", "claude")
    assert result.returncode == 1 and "Traceback" not in out_err(result)
    assert f"{state} is empty, while its backup" in result.stderr.decode()
    assert state.read_bytes() == b""


def test_a_config_that_lost_names_since_it_was_planned_is_not_written(tmp_path):
    """In process: the plan is shown from one read; the write re-reads. A version that
    lost top-level names meanwhile is refused, not written over."""
    from lichhook.install import harness
    from lichhook.install.disk import files
    from lichhook.install.errors import ConfigError

    path = tmp_path / "settings.json"
    path.write_text('{"a": 1, "b": 2}')

    def add(doc, notes):
        doc.add_member((), "lichhook", True)

    edit = files.Edit(str(path), harness.json_edit(str(path), add))
    planned = edit.plan()
    assert planned.changed
    path.write_text('{"b": 2}')
    with pytest.raises(ConfigError, match="lost 'a' since lichhook read it a moment ago"):
        files.apply(edit, seen=planned.before)
    assert path.read_text() == '{"b": 2}'


# -- Codex's config.toml, as Codex itself writes it -----------------------------------------------
# Byte-level fixtures taken from codex-cli 0.171.0 (trust, `codex mcp add`, `codex mcp remove`).

LEGACY = ("# >>> lichhook: MCP server (added by 'lichhook install codex'; 'lichhook uninstall codex' "
          "removes it) >>>")


def codex_files(home: Path, archive: str, python: str = PY) -> dict:
    """Codex configs holding the table the previous release wrote for ``archive``;
    ``current`` is that table as this release writes it."""
    table = f'[mcp_servers.lichhook]\ncommand = "{python}"\nargs = ["{archive}", "mcp"]\n'
    current = f'[mcp_servers.lichhook]\ncommand = "{PY}"\nargs = ["-I", "-S", "{stable(home)}", "mcp"]\n'
    # Codex's trust records: of a user's hook (in a project's hooks file: lichhook registers
    # every event it reports in the user's own), and of lichhook's report hook (which
    # uninstall takes out with the hook)
    trust_user = ('[hooks.state]\n\n[hooks.state."/work/proj/.codex/hooks.json:pre_compact:0:0"]\n'
                  'trusted_hash = "sha256:5c0e3e1d8a7f1c43a4b0d3e6b1f3a1d6e0f2b1c9a8d7e6f5a4b3c2d1e0f9a8b7"')
    trust = (f'{trust_user}\n\n[hooks.state."{home}/.codex/hooks.json:session_start:0:0"]\n'
             'trusted_hash = "sha256:1afbc90cd31c35916146d82a60ec961577df2f967791741fc14c1af7f81c02ae"')
    tui = "[tui]\nscreen_reader_detection_done = true\n"
    user = '# my model\nmodel = "o3"\n\n[projects."/work/proj"]\ntrust_level = "trusted"\n'
    return {
        "user": user, "table": table, "current": current, "trust": trust, "trust_user": trust_user, "tui": tui,
        # what the previous release wrote, then Codex appended its state inside the markers
        "legacy_trusted": f"{user}\n{LEGACY}\n{table}\n{tui}\n{trust}\n# <<< lichhook <<<\n",
        # `codex mcp add probe -- /bin/true` on that: the start marker is gone, probe sits inside
        "legacy_after_mcp_add": f'{user}\n{table}\n[mcp_servers.probe]\ncommand = "/bin/true"\n# <<< lichhook <<<\n\n{tui}',
        # `codex mcp remove` after the user gave the server env and arguments: Codex split env out
        "split_env": (f"{user}\n" + table.replace('"mcp"]', '"mcp", "--waits-dir", "/w"]')
                      + f'\n[mcp_servers.lichhook.env]\nLICHHOOK_DEBUG = "1"\n\n{tui}\n{trust}'),
    }


def codex_config(home: Path, fixture: str, python: str = PY) -> tuple:
    """(fixtures, path) with ``~/.codex/config.toml`` holding the fixture named."""
    f = codex_files(home, str(legacy(home)), python)
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f[fixture])
    return f, config


def test_codex_trust_written_inside_the_old_markers_survives_install_and_uninstall(run, home):
    f, config = codex_config(home, "legacy_trusted")
    ok(run("install", "codex"))
    # the old markers are lichhook's and go; every table Codex wrote between them stays
    assert config.read_text() == f"{f['user']}\n{f['current']}\n{f['tui']}\n{f['trust']}\n"
    before = config.read_bytes()
    ok(run("install", "codex"))
    assert config.read_bytes() == before  # a reinstall changes nothing
    ok(run("uninstall", "codex"))
    assert config.read_text() == f"{f['user']}\n{f['tui']}\n{f['trust_user']}\n"


def test_codex_rewritten_by_mcp_add_is_still_found_and_removed_whole(run, home):
    f, config = codex_config(home, "legacy_after_mcp_add")
    ok(run("install", "codex"))
    assert config.read_text() == f["legacy_after_mcp_add"].replace("# <<< lichhook <<<\n", "").replace(
        f["table"], f["current"])
    out = run("doctor", "--verbose").stdout.decode()
    assert f"mcp_servers.lichhook in {config}" in out and "registered: yes" in out
    ok(run("uninstall", "codex"))
    assert config.read_text() == f'{f["user"]}\n[mcp_servers.probe]\ncommand = "/bin/true"\n\n{f["tui"]}'
    assert not stable(home).exists()


def test_codex_split_env_table_is_kept_on_reinstall_and_removed_on_uninstall(run, home, tmp_path):
    other = tmp_path / "python3"
    other.symlink_to(sys.executable)
    f, config = codex_config(home, "split_env", python=str(other))
    out = run("doctor", "--verbose").stdout.decode()
    assert "customised (install keeps it): arguments after lichhook's: --waits-dir /w; 'env' added" in out
    ok(run("install", "codex"))
    assert config.read_text() == f["split_env"].replace(f["table"].replace('"mcp"]', '"mcp", "--waits-dir", "/w"]'),
                                                        f["current"].replace('"mcp"]', '"mcp", "--waits-dir", "/w"]'))
    ok(run("uninstall", "codex"))
    assert config.read_text() == f"{f['user']}\n{f['tui']}\n{f['trust_user']}"


def test_an_old_release_install_is_taken_out_whole_by_this_uninstall(run, home):
    codex = home / ".codex"
    codex.mkdir()
    f = codex_files(home, str(legacy(home)))
    (codex / "config.toml").write_text(f"{f['user']}\n{LEGACY}\n{f['table']}# <<< lichhook <<<\n")
    ok(run("uninstall", "codex"))
    assert (codex / "config.toml").read_text() == f["user"]


# -- the installed archive is the user's alone ----------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes")
@pytest.mark.parametrize("damage", ["other-owner", "mode-0666", "folder-0777"])
def test_an_archive_copy_others_can_change_is_a_problem_install_mends(run, home, damage):
    """The registered hooks run ``hooks.pyz``: whoever can change it, or the folder it is in,
    runs code as the user (as root, for root's hooks)."""
    from testkit.archive import installed_hooks

    ok(run("install", "claude"))
    hooks = installed_hooks(home)
    if damage == "other-owner":
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(hooks, USER_UID, USER_GID)
        said = f"{hooks} belongs to uid {USER_UID}"
    elif damage == "mode-0666":
        hooks.chmod(0o666)
        said = f"{hooks} can be written by anyone"
    else:
        hooks.parent.chmod(0o777)
        said = f"{hooks.parent} can be written by anyone"
    doctor = run("doctor", "--verbose")
    assert doctor.returncode == 1 and "Traceback" not in out_err(doctor)
    assert said in doctor.stdout.decode() and "no problem found" not in doctor.stdout.decode()
    again = run("install", "claude")
    assert "Traceback" not in out_err(again)
    if damage == "folder-0777":
        assert again.returncode == 1 and said in again.stderr.decode()  # not lichhook's to chmod: refused
        hooks.parent.chmod(0o755)
    else:
        ok(again)
        st = hooks.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o755)
    ok(run("doctor", "--verbose"))


# -- no traceback, whatever the surroundings ------------------------------------------------


def test_a_python_that_writes_no_archive_is_named_not_a_traceback(run, home, tmp_path):
    """Another harness's registration runs an older copy with a "Python" that answers its
    version but exits 0 without writing the archive it was asked to compile."""
    data = home / ".local" / "share" / "lichhook"
    old = data / "py3.8"
    old.mkdir(parents=True)
    (old / "lichhook.pyz").write_bytes(b"an older copy")
    (old / "hooks.pyz").write_bytes(b"an older copy")
    fake = tmp_path / "python"
    # asked its version it answers (-I -S -c); asked to compile (-S -c) it writes nothing
    fake.write_text(f"#!/bin/sh\nif [ \"$1\" = -S ]; then exit 0; fi\nexec {PY} \"$@\"\n")
    fake.chmod(0o755)
    crush = home / ".config" / "crush" / "crush.json"
    crush.parent.mkdir(parents=True)
    crush.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"name": "lichhook", "command": f"{fake} -I -S {old / 'hooks.pyz'} crush PreToolUse", "timeout": 5}]}}))
    result = run("install", "claude")
    assert "Traceback" not in out_err(result)
    assert result.returncode == 0, out_err(result)
    assert f"archive: left {old / 'lichhook.pyz'} as it is" in absolute(result.stdout.decode(), home)
    assert f"{fake} exited without writing" in result.stdout.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX byte paths")
@pytest.mark.parametrize("command", [("install", "antigravity"), ("install", "claude"), ("doctor",)])
def test_a_home_path_that_is_not_utf8_is_named_not_a_traceback(pyz, base_env, tmp_path, command):
    home = os.fsdecode(os.fsencode(str(tmp_path)) + b"/h\xff")
    os.makedirs(os.path.join(home, ".gemini"))
    os.makedirs(os.path.join(home, ".claude"))
    env = dict(base_env, HOME=home, XDG_DATA_HOME=home + "/.local/share", XDG_CONFIG_HOME=home + "/.config",
               XDG_STATE_HOME=home + "/.local/state")
    done = subprocess.run([PY, str(pyz), *command], env=env, capture_output=True, timeout=60)
    assert b"Traceback" not in done.stderr + done.stdout, done.stderr.decode(errors="replace")[-800:]
    assert done.returncode == 1
    assert b"undecodable byte" in done.stderr + done.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe closed early")
@pytest.mark.parametrize("command", [("install", "--dry-run", "claude"), ("install", "claude"), ("doctor",)])
def test_a_reader_that_stops_early_leaves_no_traceback_and_a_whole_install(pyz, base_env, home, command):
    """``install | head -1``: the reader goes away after one line; install still finishes."""
    (home / ".claude").mkdir()
    proc = subprocess.Popen([PY, str(pyz), *command], env=base_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as head does after its line
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()[-800:]
    if command == ("install", "claude"):
        assert b"claude-code stop" in (home / ".claude" / "settings.json").read_bytes()
        assert b"lichhook" in (home / ".claude.json").read_bytes()


@pytest.mark.parametrize("which", ["config", "backup"])
def test_a_config_or_backup_past_the_size_bound_is_refused_by_name(run, home, which):
    """A sparse file (no disk used) one byte past the bound: refused before it is read."""
    from lichhook.install.disk.files import MAX_CONFIG_BYTES

    state = home / ".claude.json"
    state.write_text('{"numStartups": 3}')
    big = state if which == "config" else home / ".claude.json.lichhook-backup"
    if which == "backup":
        ok(run("install", "claude"))
    with open(big, "r+b" if big.exists() else "wb") as f:
        f.truncate(MAX_CONFIG_BYTES + 1)
    result = run("uninstall" if which == "backup" else "install", "claude")
    assert result.returncode == 1 and "Traceback" not in out_err(result)
    assert f"{big} is larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB" in result.stderr.decode()


@pytest.mark.parametrize("name", ["hooks", "complete"])
def test_a_fifo_where_an_archive_copy_belongs_is_replaced_at_once(run, home, name):
    hooks = installed_hooks(home)
    fifo = hooks if name == "hooks" else installed_copy(home)
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    result = run("install", "claude", timeout=20)  # before: waited forever for a writer
    assert result.returncode == 0, out_err(result)
    assert installed_copy(home).is_file() and hooks.is_file()
    assert run("doctor", timeout=20).returncode == 0
