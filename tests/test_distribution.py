"""lichhook installed as a package (pip, pipx, an editable install) registers hooks that run
an archive all the same: install assembles it from the installed packages.

The wheel and the sdist themselves, installed into fresh environments, are checked by
``python3 -m testkit.distcheck`` (.ci/run runs it).
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from lichhook.archive import read_archive
from lichhook.install.errors import AssembleError
from lichhook.install.copies.assemble import dependencies, marker_holds, oldest_of
from testkit.archive import absolute, installed_copy
from testkit.constants import LICH_SESSION


def lichhook_members(archive: Path) -> dict:
    _, files = read_archive(archive)
    return {name: data for name, data in files.items() if name.startswith("lichhook/") and not name.endswith(".pyc")}


def top_level(archive: Path) -> set:
    _, files = read_archive(archive)
    return {name.split("/", 1)[0] for name in files if "/" in name and ".dist-info/" not in name}


def install_from_package(env: dict, cwd: Path, *harnesses: str) -> subprocess.CompletedProcess:
    """``install`` run by this Python's installed (here: editable) lichhook, not an archive."""
    return subprocess.run([sys.executable, "-m", "lichhook", "install", *harnesses], env=env, cwd=str(cwd),
                          capture_output=True, timeout=120)


def test_install_from_an_installed_lichhook_assembles_the_archive_its_hooks_run(base_env, home, pyz, standin):
    (home / ".claude").mkdir()
    done = install_from_package(base_env, home, "claude")
    said = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode() + said
    assert "archive: copied the lichhook installed in " in said
    if sys.prefix != sys.base_prefix:  # the registered Python lives and dies with this environment
        assert f"note: the hooks run {os.path.abspath(sys.executable)}, the Python of the virtual environment" in said
        assert "run lichhook uninstall --all before you remove that environment" in said
    copy = installed_copy(home)
    # The same lichhook as the release build, and the same packages beside it (their
    # versions are whatever pip installed here), but tomli from 3.11 on, where the
    # standard library reads TOML and pip installs no tomli for lichhook.
    assert lichhook_members(copy) == lichhook_members(pyz)
    assert top_level(copy) == top_level(pyz) - ({"tomli"} if sys.version_info >= (3, 11) else set())

    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = next(h["command"] for group in settings["hooks"]["SessionStart"] for h in group["hooks"]
                   if h["command"].split()[-1] == "claude")
    payload = json.dumps({"session_id": "s-from-wheel", "hook_event_name": "SessionStart", "source": "startup",
                          "cwd": str(home)}).encode()
    hook = subprocess.run(shlex.split(command), input=payload, env={**base_env, **standin.environ(),
                          "LICH_SESSION_ID": LICH_SESSION}, capture_output=True, timeout=60)
    assert hook.returncode == 0 and hook.stdout == b"", hook.stderr
    reports = standin.wait_for(1, 10)
    assert [r.contract for r in reports] == ["session-start"] and reports[0].accepted

    again = install_from_package(base_env, home, "claude")
    assert again.returncode == 0 and "(up to date)" in again.stdout.decode(), again.stdout.decode()


def test_the_oldest_python_an_archive_runs_on_is_its_highest_lower_bound():
    found = oldest_of({
        "tomlkit-0.15.2.dist-info/METADATA": b"Name: tomlkit\nRequires-Python: >=3.8\n",
        "pluggy-1.7.0.dist-info/METADATA": b"Name: pluggy\nRequires-Python: >=3.10\n",
        "platformdirs-4.4.0.dist-info/METADATA": b"Name: platformdirs\nRequires-Python: !=3.0.*, >= 3.9, <4\n",
        "other-1.dist-info/METADATA": b"Name: other\n",
    })
    assert found == ((3, 10), "pluggy-1.7.0")
    assert oldest_of({"x-1.dist-info/METADATA": b"Name: x\nRequires-Python: <4\n"}) is None


@pytest.mark.parametrize("marker,python,holds", [
    ("", (3, 9), True),
    (' python_version < "3.11"', (3, 9), True),
    (' python_version < "3.11"', (3, 10), True),
    (' python_version < "3.11"', (3, 11), False),
    (" python_version < '3.11'", (3, 15), False),
    (' python_version >= "3.10" and python_version != "3.12"', (3, 13), True),
    (' python_version >= "3.10" and python_version != "3.12"', (3, 12), False),
    (' python_version > "3.9"', (3, 9), False),
    (' python_version <= "3.9"', (3, 9), True),
    (' python_version == "3.10"', (3, 10), True),
])
def test_a_python_version_marker_is_judged_for_the_python_that_assembles(marker, python, holds):
    assert marker_holds(marker, python) is holds


@pytest.mark.parametrize("marker", [' sys_platform == "win32"', ' python_version < "3.11" or os_name == "nt"',
                                    ' python_full_version < "3.11.2"'])
def test_a_marker_install_cannot_judge_is_named_not_guessed(marker):
    with pytest.raises(AssembleError) as refused:
        marker_holds(marker, (3, 11))
    assert marker.strip() in str(refused.value)


def test_tomli_is_assembled_before_3_11_only():
    assert "tomli" in dependencies((3, 9)) and "tomli" in dependencies((3, 10))
    assert "tomli" not in dependencies((3, 11))
    assert {"pluggy", "platformdirs", "tomlkit"} <= set(dependencies((3, 11)))


def _python_older_than(bound: tuple) -> "str | None":
    for minor in range(9, bound[1]):
        found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3.{minor}")))
        if found:
            return found[-1]
    return None


def test_install_leaves_an_older_pythons_copy_that_the_installed_packages_cannot_run(base_env, home, pyz):
    needs = oldest_of({f"{d.metadata['Name']}.dist-info/METADATA": f"Requires-Python: {d.metadata['Requires-Python']}".encode()
                       for d in map(metadata.distribution, ("pluggy", "platformdirs", "tomlkit"))
                       if d.metadata["Requires-Python"]})
    older = _python_older_than(needs[0]) if needs and needs[0] > (3, 9) else None
    if older is None:
        pytest.skip("this Python's pluggy, platformdirs and tomlkit all run on 3.9, or no older Python is here")
    (home / ".codex").mkdir()
    (home / ".claude").mkdir()
    first = subprocess.run([older, str(pyz), "install", "codex"], env=base_env, cwd=str(home),
                           capture_output=True, timeout=300)
    assert first.returncode == 0, first.stderr.decode()
    theirs = installed_copy(home, older)
    before = theirs.read_bytes()

    done = install_from_package(base_env, home, "claude")
    said = absolute(done.stdout.decode(), home)
    assert done.returncode == 0, done.stderr.decode() + said
    assert f"archive: left {theirs} as it is: " in said and f"needs Python {needs[0][0]}.{needs[0][1]} or newer" in said
    assert theirs.read_bytes() == before


OLD_PYTHONS = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[678].*/bin/python3.[678]")))


@pytest.mark.skipif(not OLD_PYTHONS, reason="no Python older than 3.9 here (pyenv's 3.6 to 3.8)")
@pytest.mark.parametrize("python", OLD_PYTHONS)
def test_a_python_older_than_3_9_is_named_and_a_hook_still_exits_0(python, pyz, base_env):
    command = subprocess.run([python, str(pyz), "demo"], env=base_env, capture_output=True, timeout=60)
    said = command.stderr.decode()
    assert command.returncode == 1 and command.stdout == b""
    assert said.startswith("lichhook needs Python 3.9 or newer, and ") and python in said and "Traceback" not in said
    hook = subprocess.run([python, "-I", "-S", str(pyz), "claude", "PreToolUse"], input=b"{}", env=base_env,
                          capture_output=True, timeout=60)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
    told = subprocess.run([python, "-I", "-S", str(pyz), "claude"], input=b"{}", env=dict(base_env, LICHHOOK_DEBUG="1"),
                          capture_output=True, timeout=60)
    assert told.returncode == 0 and b"this hook does nothing: lichhook needs Python 3.9" in told.stderr


def test_ci_runs_the_readmes_two_commands_exactly():
    from testkit.constants import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = [block.split("```", 1)[0].strip() for block in setup.split("```\n")[1::2]]
    assert len(commands) == 2 and commands[1].startswith("python3 -m venv .venv && ")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert [c for c in commands if c in ci] == commands
