"""doctor, install and uninstall as a person reads them: one screen, one line per harness,
problems one line per cause, paths from the home, marks and colour on a terminal only;
doctor --json and adapters --json in the shape docs/schemas/ documents."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from lichhook.adapters import BY_PROVIDER
from lichhook.install.face import from_home
from lichhook.install.harnesses import NAMES
from testkit.archive import installed_hooks
from lichhook.descriptor import registrations

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cret-face-token-7f0e"
FOLDERS = (".claude", ".codex", ".config/opencode", ".omp/agent", ".config/crush", ".gemini/antigravity")


def schema(name: str) -> dict:
    return json.loads((ROOT / "docs" / "schemas" / f"{name}.json").read_text())


def six(home: Path) -> None:
    """A home where all six harnesses are detected (their config folders exist)."""
    for folder in FOLDERS:
        (home / folder).mkdir(parents=True)


def lines(done: subprocess.CompletedProcess) -> list:
    return done.stdout.decode().splitlines()


def tree(home: Path) -> dict:
    return {str(p): p.read_bytes() if p.is_file() else None for p in sorted(home.rglob("*"))}


def test_six_harnesses_install_doctor_and_uninstall_each_fit_a_screen(run, home):
    six(home)
    install = run("install", *NAMES, timeout=120)
    assert install.returncode == 0, install.stderr
    out = install.stdout.decode()
    assert len(lines(install)) <= 30, out
    assert str(home) not in out and "~/.claude/settings.json" in out, out  # paths from the home
    for name in NAMES:
        assert sum(line.startswith(f"{name}: ") for line in lines(install)) == 1, out  # one block each
    assert lines(install)[-1].startswith("done: lichhook registered in claude, codex") and "doctor" in lines(install)[-1]

    doctor = run("doctor", timeout=180)
    shown = lines(doctor)
    assert doctor.returncode == 1 and len(shown) <= 60, doctor.stdout.decode()
    for name in NAMES:  # one line per harness: its state, what lich sees, whether every command ran
        [line] = [line for line in shown if not line.startswith("problem:") and f" {name} " in line]
        state = "needs you" if name == "codex" else "ok"
        assert line.startswith(state) and "every one ran" in line, line
    assert [line for line in shown if line.startswith("problem:")] == [
        'problem: codex: 8 hooks not trusted yet. Fix: start codex; when it says "Hooks need review", choose '
        '"Trust all and continue" (or review them with /hooks and press t on each). Trusting is your decision: '
        'lichhook never does it for you']
    assert shown[-1].endswith("doctor --verbose")
    assert len(lines(run("doctor", "--verbose", timeout=180))) > 100  # today's detail is still there

    uninstall = run("uninstall", *NAMES)
    assert uninstall.returncode == 0 and len(lines(uninstall)) <= 30, uninstall.stdout.decode()
    assert lines(uninstall)[-1].startswith("done: lichhook removed from claude, codex")


def test_a_codex_home_with_eight_untrusted_hooks_gives_one_line(run, home):
    rows = registrations(BY_PROVIDER["codex"])
    assert len(rows) == 8
    install = run("install", "codex").stdout.decode()
    said = [line for line in install.splitlines() if "not trusted yet" in line]
    assert said == [line for line in said if line.startswith("note: codex: 8 hooks not trusted yet. Fix: start codex")]
    assert len(said) == 1, install
    doctor = run("doctor", "--no-run").stdout.decode()
    assert len([line for line in doctor.splitlines() if "trust" in line.lower()]) == 1, doctor
    # --verbose names each hook, as before
    verbose = run("doctor", "--no-run", "--verbose").stdout.decode()
    assert verbose.count("problem: codex: Codex does not run lichhook's") == 8


def test_doctor_json_is_the_documented_shape(run, home):
    six(home)
    run("install", *NAMES, timeout=120)
    done = run("doctor", "--json", timeout=180)
    data = json.loads(done.stdout)
    jsonschema.validate(data, schema("doctor"))
    assert done.returncode == 1 and data["ok"] is False and data["live_runs"] is True
    assert [h["name"] for h in data["harnesses"]] == list(NAMES)
    assert {h["name"]: h["state"] for h in data["harnesses"]} == {n: "needs you" if n == "codex" else "ok" for n in NAMES}
    assert all(r["run"]["ok"] for h in data["harnesses"] for r in h["registrations"])
    [problem] = data["problems"]
    assert (problem["harness"], problem["cause"], problem["count"], len(problem["each"])) == \
        ("codex", "hooks not trusted yet", 8, 8)
    claude = data["harnesses"][0]["registrations"][0]
    assert claude["path"] == str(home / ".claude" / "settings.json") and claude["ours"]

    unread = json.loads(run("doctor", "--json", "--no-run").stdout)
    jsonschema.validate(unread, schema("doctor"))
    assert unread["live_runs"] is False and all(r["run"] is None for h in unread["harnesses"]
                                                for r in h["registrations"])


def test_doctor_json_in_an_empty_home_names_every_harness_absent(run, home):
    done = run("doctor", "--json", "--no-run")
    data = json.loads(done.stdout)
    jsonschema.validate(data, schema("doctor"))
    assert done.returncode == 0 and data["ok"] and data["problems"] == []
    assert {h["state"] for h in data["harnesses"]} == {"absent"}


def test_adapters_json_is_the_documented_shape(run):
    done = run("adapters", "--json")
    data = json.loads(done.stdout)
    jsonschema.validate(data, schema("adapters"))
    assert set(NAMES) <= {a["provider"] for a in data["adapters"]}
    text = run("adapters").stdout.decode()
    assert all(a["provider"] in text for a in data["adapters"])


def test_a_pipe_gets_no_colour_and_no_marks(run, home):
    six(home)
    run("install", "codex")
    for args in (("doctor", "--no-run"), ("install", "claude"), ("uninstall", "claude")):
        done = run(*args)
        assert b"\x1b" not in done.stdout + done.stderr and "\u2713".encode() not in done.stdout, args
        assert done.stderr == b"", args  # no progress either


def in_terminal(pyz: Path, env: dict, *args: str) -> str:
    """What the archive writes to a real terminal (a pty as its stdout and stderr)."""
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, str(pyz), *args], stdin=subprocess.DEVNULL, stdout=child, stderr=child,
                            env=env)
    os.close(child)
    seen = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child end closed
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(main)
    return seen.decode("utf-8", "replace")


def test_a_terminal_gets_marks_in_colour_unless_no_color_is_set(pyz, base_env, run, home):
    run("install", "claude", "codex")
    env = dict(base_env, LANG="C.UTF-8", PYTHONIOENCODING="utf-8")
    coloured = in_terminal(pyz, env, "doctor", "--no-run")
    assert "\x1b[33m! needs you" in coloured and "\x1b[32m\u2713 ok" in coloured, coloured
    plain = in_terminal(pyz, dict(env, NO_COLOR="1"), "doctor", "--no-run")
    assert "\x1b" not in plain and "\u2713" not in plain and "needs you codex" in plain, plain
    # the live runs show progress on a terminal, on one line it rewrites, and leave it blank
    live = in_terminal(pyz, env, "doctor")
    assert "\rdoctor: running codex's" in live and "needs you" in live


@pytest.mark.parametrize("args", [("doctor",), ("doctor", "--verbose"), ("doctor", "--json"), ("install", "claude"),
                                  ("adapters", "--json"), ("uninstall", "claude")])
def test_no_face_prints_lich_token(run, home, standin, args):
    six(home)
    run("install", "claude")
    env = {"LICH_PORT": str(standin.port), "LICH_TOKEN": SECRET, "LICH_SESSION_ID": "lich-s1"}
    done = run(*args, env=env, timeout=120)
    assert SECRET.encode() not in done.stdout + done.stderr, args
    if args == ("doctor", "--json"):
        assert json.loads(done.stdout)["inside_lich"] is True


@pytest.mark.parametrize("args", [("doctor", "--sideways"), ("doctor", "--json", "--verbose"),
                                  ("doctor", "--no-run", "extra"), ("adapters", "--yaml")])
def test_bad_flags_get_one_line_and_change_nothing(run, home, args):
    six(home)
    run("install", "codex")
    before = tree(home)
    done = run(*args)
    assert done.returncode == 2 and done.stdout == b"", args
    assert len(done.stderr.decode().strip().splitlines()) == 1 and "run:" in done.stderr.decode(), done.stderr
    assert tree(home) == before


def test_paths_are_shown_from_the_home_as_each_system_names_it():
    assert from_home("created /home/ann/.claude/settings.json", "/home/ann", False) == \
        "created ~/.claude/settings.json"
    assert from_home("created C:\\Users\\Ann\\.claude\\settings.json", "C:\\Users\\Ann", True) == \
        "created %USERPROFILE%\\.claude\\settings.json"
    assert from_home("/home/annex/x and /home/ann", "/home/ann", False) == "/home/annex/x and /home/ann"
    assert from_home("/x/y", "/", False) == "/x/y"  # a home at the root shortens nothing


def test_a_registration_that_cannot_run_marks_its_harness_broken(run, home):
    run("install", "claude", "codex")
    installed_hooks(home).unlink()
    data = json.loads(run("doctor", "--json", "--no-run").stdout)
    jsonschema.validate(data, schema("doctor"))
    states = {h["name"]: h["state"] for h in data["harnesses"]}
    assert states["claude"] == states["codex"] == "broken"
    claude = [p for p in data["problems"] if p["harness"] == "claude"]
    assert len(claude) == 1 and claude[0]["broken"] and claude[0]["count"] > 1  # one cause, one line
    shown = run("doctor", "--no-run")
    assert shown.returncode == 1
    assert [line.split()[:2] for line in lines(shown) if " claude " in f" {line} " and not line.startswith("problem")] \
        == [["broken", "claude"]]
