"""The Windows lane tells a slow machine from a broken program: a run the machine cut
short (killed at the lane's deadline, or by a signal from outside) runs again with a
longer deadline; only a run that ends on its own, or one cut short every time, judges.
A stand-in ``wine`` on PATH plays the machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit.windows_lane import CUT_SHORT, Miss, Wine

# Each run takes the next line of ``plan``: "sleep N" (then exits 0), "kill" (SIGKILL to
# itself, as a loaded machine's wine loader got), or "exit N".
FAKE_WINE = """#!/bin/sh
n=$(cat "$PLAN.n" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$PLAN.n"
step=$(sed -n "${n}p" "$PLAN")
case "$step" in
  sleep*) sleep ${step#sleep }; echo ran; exit 0 ;;
  kill) kill -9 $$ ;;
  exit*) exit ${step#exit } ;;
esac
"""


@pytest.fixture
def wine(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "wine").write_text(FAKE_WINE)
    (bin_dir / "wine").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    plan = tmp_path / "plan"
    monkeypatch.setenv("PLAN", str(plan))
    w = Wine(tmp_path)

    def run(*steps: str, timeout: float = 1.0, measure: bool = False):
        plan.write_text("\n".join(steps) + "\n")
        if measure:
            w.measure(Path("C:/py/python.exe"))
            assert 1.9 < w.scale < 3
        return w.python(Path("C:/py/python.exe"), ["-I", "-S", "hooks.pyz", "codex", "Interrupt"], timeout=timeout)

    return run


def test_a_run_killed_at_the_deadline_runs_again_with_a_longer_one(wine, capsys):
    done = wine("sleep 2", "sleep 1.5")
    assert done.returncode == 0 and done.stdout == b"ran\n"
    assert "did not end within 1 s; running it again with 2 s" in capsys.readouterr().out


def test_a_run_killed_by_a_signal_twice_runs_a_third_time(wine, capsys):
    done = wine("kill", "kill", "sleep 0")
    assert done.returncode == 0
    assert capsys.readouterr().out.count("was killed by signal 9") == 2


def test_a_program_that_fails_on_its_own_is_judged_at_once(wine):
    done = wine("exit 3", "sleep 0")
    assert done.returncode == 3


def test_a_run_cut_short_every_time_is_a_miss_naming_the_deadlines(wine):
    with pytest.raises(Miss, match=f"cut short {CUT_SHORT} times with deadlines up to 4 s"):
        wine(*["sleep 9"] * CUT_SHORT)


def test_deadlines_are_scaled_to_wines_start_measured_on_this_machine(wine, capsys):
    # three starts of 1 s each (IDLE_START is 0.5 s): every deadline doubles
    done = wine("sleep 1", "sleep 1", "sleep 1", "sleep 1.5", measure=True)
    assert done.returncode == 0 and "running it again" not in capsys.readouterr().out
