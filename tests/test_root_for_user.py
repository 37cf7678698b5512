"""Root running install, uninstall or doctor with another user's HOME (``sudo -E``) does
its work as that user: nothing the user planted in their home makes root write, follow or
run anything. A throw-away user is made with ``useradd``; the tests need root."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from testkit.archive import installed_copy, installed_hooks
from testkit.users import throwaway_user

SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def user():
    with throwaway_user("lhr") as entry:
        yield entry


@pytest.fixture
def world(pyz, user):
    """(top, archive, home): a folder every user can reach, a copy of the archive anyone
    can read, and the user's home in it, theirs."""
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"no {SYSTEM_PYTHON} the user can run")
    top = Path(tempfile.mkdtemp(prefix="lichhook-root-"))
    top.chmod(0o755)
    archive = top / "lichhook.pyz"
    shutil.copy(pyz, archive)
    archive.chmod(0o644)
    home = top / "home"
    (home / ".claude").mkdir(parents=True)
    for path in (home, home / ".claude"):
        os.chown(path, user.pw_uid, user.pw_gid)
    yield top, archive, home
    shutil.rmtree(top, ignore_errors=True)


def as_root(archive: Path, home: Path, *args: str, extra: dict | None = None) -> subprocess.CompletedProcess:
    """``sudo -E python3 lichhook.pyz ...``: root, with the user's HOME and XDG folders."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CONFIG_HOME": str(home / ".config"), **(extra or {})}
    return subprocess.run([SYSTEM_PYTHON, str(archive), *args], env=env, capture_output=True, timeout=120,
                          cwd=str(home))


def text(done: subprocess.CompletedProcess) -> str:
    return done.stdout.decode() + done.stderr.decode()


def chown_tree(path: Path, user) -> None:  # type: ignore[no-untyped-def]
    for p in [path, *path.rglob("*")]:
        os.lchown(p, user.pw_uid, user.pw_gid)


def test_a_link_the_user_planted_at_a_config_never_makes_root_write_there(world, user):
    top, archive, home = world
    system = top / "system"
    system.mkdir(mode=0o755)  # root's
    victim = system / "settings.json"
    victim.write_text('{"model": "opus"}')
    victim.chmod(0o644)
    link = home / ".claude" / "settings.json"
    link.symlink_to(victim)
    os.lchown(link, user.pw_uid, user.pw_gid)
    done = as_root(archive, home, "install", "claude")
    assert "Traceback" not in text(done)
    assert victim.read_text() == '{"model": "opus"}'
    assert done.returncode == 1 and f"the folder {system} cannot be written by you" in done.stderr.decode()


def test_a_link_the_user_planted_at_hooks_pyz_never_makes_root_write_there(world, user):
    top, archive, home = world
    secret = top / "root-only"
    secret.write_bytes(b"root's own\n")
    secret.chmod(0o600)
    hooks = installed_hooks(home, SYSTEM_PYTHON)
    hooks.parent.mkdir(parents=True)
    hooks.symlink_to(secret)
    chown_tree(home / ".local", user)
    done = as_root(archive, home, "install", "claude")
    assert "Traceback" not in text(done)
    assert secret.read_bytes() == b"root's own\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert secret.stat().st_uid == 0


def test_root_never_runs_the_python_a_users_registration_names(world, user):
    """A registration that looks like lichhook's names a "Python" of the user's; doctor
    asks each Python for its bytecode, and install brings other copies up to date with
    theirs. Whatever runs it, it never runs as root."""
    top, archive, home = world
    marks = top / "marks"
    marks.mkdir(mode=0o777)
    marks.chmod(0o777)
    fake = home / "bin" / "python"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\nid -u >> {marks}/ran\nexec {SYSTEM_PYTHON} \"$@\"\n")
    fake.chmod(0o755)
    other_copy = home / ".local" / "share" / "lichhook" / "py3.8" / "hooks.pyz"
    other_copy.parent.mkdir(parents=True)
    shutil.copy(archive, other_copy.with_name("lichhook.pyz"))
    shutil.copy(archive, other_copy)
    command = f"{fake} -I -S {other_copy} claude-code stop"
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
    chown_tree(home, user)
    for args in (("doctor",), ("install", "claude"), ("doctor",)):
        done = as_root(archive, home, *args)
        assert "Traceback" not in text(done), args
    ran = (marks / "ran").read_text().split() if (marks / "ran").exists() else []
    assert "0" not in ran, ran
    assert ran and set(ran) == {str(user.pw_uid)}  # it did run, as the user


def test_root_installing_for_a_user_makes_every_file_as_them(world, user):
    top, archive, home = world
    state = home / ".claude.json"
    state.write_text('{"numStartups": 3}')
    state.chmod(0o600)
    os.chown(state, user.pw_uid, user.pw_gid)
    sudo_gid = 54323  # the group the user ran sudo from, not their own
    extra = {"SUDO_UID": str(user.pw_uid), "SUDO_GID": str(sudo_gid), "SUDO_USER": user.pw_name}
    done = as_root(archive, home, "install", "claude", extra=extra)
    assert done.returncode == 0, text(done)
    for path in [home / ".claude.json", home / ".claude.json.lichhook-backup"]:
        st = path.stat()  # kept as they were
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (user.pw_uid, user.pw_gid, 0o600), path
    for path in [home / ".claude" / "settings.json", home / ".local", home / ".local" / "share" / "lichhook",
                 installed_copy(home, SYSTEM_PYTHON), installed_hooks(home, SYSTEM_PYTHON)]:
        st = path.stat()  # made by the user, in the group sudo names
        assert (st.st_uid, st.st_gid) == (user.pw_uid, sudo_gid), path
    assert stat.S_IMODE(installed_copy(home, SYSTEM_PYTHON).stat().st_mode) == 0o755
    done = as_root(archive, home, "doctor", "--verbose", extra=extra)
    assert "Traceback" not in text(done) and "registered: yes" in done.stdout.decode()
    done = as_root(archive, home, "uninstall", "claude", extra=extra)
    assert done.returncode == 0, text(done)
    assert state.read_text() == '{"numStartups": 3}' and state.stat().st_uid == user.pw_uid


def test_an_archive_the_user_cannot_read_is_refused_by_name(world, user):
    top, archive, home = world
    hidden = top / "private"
    hidden.mkdir(mode=0o700)
    private = hidden / "lichhook.pyz"
    shutil.copy(archive, private)
    done = as_root(private, home, "install", "claude")
    assert done.returncode == 1 and "Traceback" not in text(done)
    assert f"who cannot read {private}" in done.stderr.decode()
    assert not (home / ".claude" / "settings.json").exists() and not (home / ".local").exists()


def test_a_users_install_keeps_the_group_of_a_file_it_rewrites(world, user):
    """Run as the user (not root): a config in a group of theirs other than their own
    keeps that group; the docs say owner, group and mode are kept."""
    top, archive, home = world
    shared_gid = 54329  # a group the user is in besides their own
    settings = home / ".claude" / "settings.json"
    settings.write_text('{"model": "opus"}')
    os.chown(settings, user.pw_uid, shared_gid)
    settings.chmod(0o660)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(home / ".local" / "share")}
    done = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                           f"--groups={user.pw_gid},{shared_gid}", "--", SYSTEM_PYTHON, str(archive),
                           "install", "claude"], env=env, capture_output=True, timeout=120, cwd=str(home))
    assert done.returncode == 0, text(done)
    st = settings.stat()
    assert b"claude-code stop" in settings.read_bytes()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (user.pw_uid, shared_gid, 0o660)


def test_root_in_its_own_home_never_runs_a_python_another_user_could_change(world, user):
    """Root's own configs naming a "Python" in a folder another user owns: doctor and
    install say so and never run it (the user could swap it for anything)."""
    top, archive, _ = world
    home = top / "roothome"
    (home / ".claude").mkdir(parents=True)
    marks = top / "marks2"
    marks.mkdir(mode=0o777)
    marks.chmod(0o777)
    theirs = top / "theirs"
    theirs.mkdir()
    fake = theirs / "python"
    fake.write_text(f"#!/bin/sh\nid -u >> {marks}/ran\nexec {SYSTEM_PYTHON} \"$@\"\n")
    fake.chmod(0o755)
    chown_tree(theirs, user)
    other_copy = home / ".local" / "share" / "lichhook" / "py3.8" / "hooks.pyz"
    other_copy.parent.mkdir(parents=True)
    shutil.copy(archive, other_copy.with_name("lichhook.pyz"))
    shutil.copy(archive, other_copy)
    crush = home / ".config" / "crush" / "crush.json"
    crush.parent.mkdir(parents=True)
    crush.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"name": "lichhook", "command": f"{fake} -I -S {other_copy} crush PreToolUse", "timeout": 5}]}}))
    doctor = as_root(archive, home, "doctor", "--verbose")
    assert "Traceback" not in text(doctor) and doctor.returncode == 1
    assert f"{fake}" in doctor.stdout.decode() and "belongs to" in doctor.stdout.decode()
    done = as_root(archive, home, "install", "claude")
    assert "Traceback" not in text(done), text(done)
    assert not (marks / "ran").exists(), (marks / "ran").read_text()
