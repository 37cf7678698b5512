"""The store's lock: waited for in the kernel with a deadline, and a refusal that says what
happened. Every party is a real process running the archive's own code."""

from __future__ import annotations

import json
import locale
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

NODE = "testnode"
# The queue of waiters is POSIX's (lichhook/waits/lock.py); Windows tries until its deadline.
POSIX_QUEUE = pytest.mark.skipif(sys.platform == "win32", reason="no queue of waiters on Windows")

# Holds the lock until the file ``release`` appears; with ``bump`` it also moves the lock's
# count on every 0.1 s, as processes taking the lock in turn would.
HOLDER = r"""
import os, sys, time
pyz, folder, ready, release, bump = sys.argv[1:6]
sys.path.insert(0, pyz)
from lichhook.waits.folder import for_op
with for_op(folder) as waits, waits.lock():
    open(ready, "w").close()
    lock = os.path.join(folder, "store.lock")
    while not os.path.exists(release):
        if bump == "1":
            with open(lock, "r+b") as f:
                pid, count = f.read(32).split()
                f.seek(0)
                f.write(b"%10d %20d\n" % (int(pid), int(count) + 1))
        time.sleep(0.1)
"""

# Asks for the lock with a deadline, says what happened (and, holding the lock, appends
# its name to ``log``), then stays alive ``linger`` s.
WAITER = r"""
import sys, time
pyz, folder, timeout, linger, name, log = sys.argv[1:7]
sys.path.insert(0, pyz)
from lichhook.waits.folder import FolderRefused, for_op
try:
    with for_op(folder) as waits, waits.lock(timeout=float(timeout)):
        if log:
            with open(log, "a") as f:
                f.write(name + "\n")
        print("got", flush=True)
except FolderRefused as exc:
    print("refused:", exc, flush=True)
time.sleep(float(linger))
"""


@pytest.fixture
def folder(pyz, tmp_path, base_env) -> Path:
    """A waits folder made by a real op."""
    waits = tmp_path / "waits"
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(waits), LICHHOOK_NODE=NODE)
    done = subprocess.run([sys.executable, str(pyz), "wait", "list", "--by", "rev", "--session", "s1"], env=env,
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stdout
    return waits


class Holder:
    def __init__(self, pyz: Path, folder: Path, tmp_path: Path, bump: bool = False) -> None:
        self.ready, self.release = tmp_path / "ready", tmp_path / "release"
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(pyz), str(folder), str(self.ready),
                                      str(self.release), "1" if bump else "0"])
        deadline = time.monotonic() + 30
        while not self.ready.exists():
            assert self.proc.poll() is None and time.monotonic() < deadline, "the holder never got the lock"
            time.sleep(0.01)

    def let_go(self) -> None:
        self.release.write_bytes(b"")
        assert self.proc.wait(timeout=30) == 0

    def __enter__(self) -> "Holder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.write_bytes(b"")
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def waiter(pyz: Path, folder: Path, timeout: float, linger: float = 0, name: str = "",
           log: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WAITER, str(pyz), str(folder), str(timeout), str(linger),
                             name, str(log or "")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def queued(folder: Path) -> int:
    return len([n for n in os.listdir(folder / "queue") if n.isdigit()])


def join_in_turn(pyz: Path, folder: Path, names: list, log: Path, timeouts: dict | None = None) -> dict:
    """Start one waiter per name, each only once the one before is in the queue."""
    procs = {}
    for name in names:
        procs[name] = waiter(pyz, folder, (timeouts or {}).get(name, 60), name=name, log=log)
        deadline = time.monotonic() + 30
        while queued(folder) < len(procs):
            assert time.monotonic() < deadline, f"{name} never joined the queue"
            time.sleep(0.01)
    return procs


def first_line(proc: subprocess.Popen) -> str:
    # print() writes a pipe in the locale's encoding: the ANSI code page on Windows
    line = proc.stdout.readline().decode(locale.getpreferredencoding(False)).strip()
    return line


def test_a_lock_held_throughout_is_refused_naming_the_holder(pyz, folder, tmp_path):
    with Holder(pyz, folder, tmp_path) as holder:
        proc = waiter(pyz, folder, 0.5)
        said = first_line(proc)
        proc.wait(timeout=30)
    assert said == (f"refused: the waits store is busy: process {holder.proc.pid} has held its lock "
                    f"{folder / 'store.lock'} for the whole 0.5 s this op waited; try again, or end that "
                    "process if it is stuck"), said


def test_a_lock_changing_hands_all_the_time_is_said_to(pyz, folder, tmp_path):
    with Holder(pyz, folder, tmp_path, bump=True):
        proc = waiter(pyz, folder, 1.0)
        said = first_line(proc)
        proc.wait(timeout=30)
    assert said.startswith(f"refused: the waits store is busy: its lock {folder / 'store.lock'} changed hands "), said
    assert "without reaching this process" in said


def test_a_waiter_is_served_when_the_holder_lets_go(pyz, folder, tmp_path):
    with Holder(pyz, folder, tmp_path) as holder:
        proc = waiter(pyz, folder, 60)
        time.sleep(0.3)  # the waiter is blocked in the kernel by now (or soon will be)
        assert proc.poll() is None
        holder.let_go()
        assert first_line(proc) == "got"
        proc.wait(timeout=30)


def test_a_waiter_that_gave_up_leaves_no_lock_behind(pyz, folder, tmp_path):
    """Its kernel wait is abandoned, not ended: if the lock reaches it later, it must go."""
    with Holder(pyz, folder, tmp_path) as holder:
        gave_up = waiter(pyz, folder, 0.3, linger=60)
        assert first_line(gave_up).startswith("refused: the waits store is busy")
        holder.let_go()
        try:
            # The one that gave up is still alive, its abandoned wait now granted and dropped.
            later = waiter(pyz, folder, 10)
            assert first_line(later) == "got"
            later.wait(timeout=30)
            assert gave_up.poll() is None
        finally:
            gave_up.kill()
            gave_up.wait(timeout=30)


def test_the_lock_records_its_last_holder(pyz, folder, base_env):
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    pid, count = (folder / "store.lock").read_bytes().split()
    for _ in range(3):
        subprocess.run([sys.executable, str(pyz), "wait", "list", "--by", "rev", "--session", "s1"], env=env,
                       capture_output=True, timeout=30, check=True)
    raw = (folder / "store.lock").read_bytes()
    assert len(raw) == 32 and raw.endswith(b"\n")
    assert int(raw.split()[1]) == int(count) + 3


@pytest.mark.heavy
def test_the_command_line_gives_up_after_ten_seconds_naming_the_holder(pyz, folder, tmp_path, base_env):
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    with Holder(pyz, folder, tmp_path) as holder:
        done = subprocess.run([sys.executable, str(pyz), "wait", "add", "--by", "rev", "--session", "s1",
                               "--what", "x"], env=env, capture_output=True, timeout=60)
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert answer["error"].startswith(f"the waits store is busy: process {holder.proc.pid} has held its lock "
                                      f"{folder / 'store.lock'} for the whole 10 s this op waited"), answer
    assert "w1" not in json.dumps(json.loads((folder / "store.json").read_text()))  # nothing was added


@POSIX_QUEUE
def test_waiters_are_served_in_the_order_they_came(pyz, folder, tmp_path):
    log = tmp_path / "order"
    with Holder(pyz, folder, tmp_path) as holder:
        procs = join_in_turn(pyz, folder, ["first", "second", "third", "fourth"], log)
        holder.let_go()
        for proc in procs.values():
            assert first_line(proc) == "got"
            proc.wait(timeout=30)
    assert log.read_text().split() == ["first", "second", "third", "fourth"]
    assert queued(folder) == 0  # each left the queue as it went


@POSIX_QUEUE
def test_a_waiter_that_gives_up_in_the_middle_of_the_queue_holds_nobody_up(pyz, folder, tmp_path):
    log = tmp_path / "order"
    with Holder(pyz, folder, tmp_path) as holder:
        procs = join_in_turn(pyz, folder, ["first", "impatient", "third"], log, {"impatient": 1})
        assert first_line(procs["impatient"]).startswith("refused: the waits store is busy")
        holder.let_go()
        for name in ("first", "third"):
            assert first_line(procs[name]) == "got"
            procs[name].wait(timeout=30)
        procs["impatient"].wait(timeout=30)
    assert log.read_text().split() == ["first", "third"]


@POSIX_QUEUE
def test_a_node_left_by_a_dead_waiter_is_swept(pyz, folder, tmp_path, base_env):
    (folder / "queue").mkdir(exist_ok=True)
    (folder / "queue" / "7").write_bytes(b"")  # nobody holds it: its owner died
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(folder), LICHHOOK_NODE=NODE)
    done = subprocess.run([sys.executable, str(pyz), "wait", "list", "--by", "rev", "--session", "s1"], env=env,
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stdout
    assert os.listdir(folder / "queue") == []
