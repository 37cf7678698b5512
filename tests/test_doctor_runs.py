"""doctor never executes a command it only claims to read, and names what in a
registration lichhook did not write."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from lichhook.install import quoting
from testkit.environment import lich_env


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


def rewrite_commands(home: Path, change) -> None:
    """Put ``change(words)`` in place of every command of Claude Code's settings."""
    settings = home / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    for groups in doc["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = quoting.sh_join(change(quoting.split_words(handler["command"])))
    settings.write_text(json.dumps(doc, indent=2))


def test_doctor_no_run_starts_no_registered_interpreter(run, home, tmp_path):
    (home / ".claude").mkdir()
    ok(run("install", "claude"))
    marker = tmp_path / "ran"
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(0o755)
    rewrite_commands(home, lambda words: [str(python), *words[1:]])
    shown = run("doctor", "--no-run", "--verbose")
    assert not marker.exists(), shown.stdout.decode()
    assert f"python:  {python} (exists)" in shown.stdout.decode()
    assert "bytecode: not checked (--no-run starts no interpreter)" in shown.stdout.decode()
    # the live run does start it, as it says
    run("doctor")
    assert marker.exists()


def test_doctor_names_an_interpreter_option_before_the_archive_and_does_not_run_it(run, home, tmp_path, standin):
    (home / ".claude").mkdir()
    ok(run("install", "claude"))
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w')"
    rewrite_commands(home, lambda words: [words[0], "-c", code, *words[1:]])
    shown = run("doctor", "--verbose", env=lich_env(standin))
    out = shown.stdout.decode()
    assert not marker.exists(), out
    assert shown.returncode == 1
    assert f"not lichhook's: -c {code}" in out
    assert f"passes Python options lichhook does not write, before its archive: -c {code}" in out
    assert os.listdir(tmp_path) == ["home"]
