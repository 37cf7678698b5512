"""omp through the archive: the agent folder install and doctor use is the one omp reads,
and a task sub-agent's session is not reported while every other session is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit.archive import absolute
from testkit.environment import lich_env

SUB_TASK_DIR = "2026-11-30T23-19-28-946Z_01a22ec1-97b2-7095-8c31-d3e20ad35509"


def ok(result):
    assert result.returncode == 0, result.stderr.decode() + result.stdout.decode()
    return result


# -- the agent folder ----------------------------------------------------------------------
# Each case as omp 18.2.3 resolves it (@oh-my-pi/pi-utils src/dirs.ts): (environment, folder
# under home). "ABS" stands for an absolute folder outside home.

FOLDERS = [
    ({}, ".omp/agent"),
    ({"OMP_PROFILE": "work"}, ".omp/profiles/work/agent"),
    ({"PI_PROFILE": "work"}, ".omp/profiles/work/agent"),
    ({"OMP_PROFILE": "work", "PI_PROFILE": "play"}, ".omp/profiles/work/agent"),
    ({"OMP_PROFILE": "default", "PI_PROFILE": "work"}, ".omp/agent"),
    ({"OMP_PROFILE": "", "PI_PROFILE": "work"}, ".omp/agent"),
    ({"OMP_PROFILE": "  work "}, ".omp/profiles/work/agent"),
    ({"OMP_PROFILE": "work", "PI_CODING_AGENT_DIR": "ABS"}, ".omp/profiles/work/agent"),
    ({"PI_CODING_AGENT_DIR": "ABS"}, "ABS"),
    ({"PI_CONFIG_DIR": ".omp-alt"}, ".omp-alt/agent"),
    ({"PI_CONFIG_DIR": ".omp-alt", "OMP_PROFILE": "w.1_x-y"}, ".omp-alt/profiles/w.1_x-y/agent"),
    # a PI_CODING_AGENT_DIR a parent omp left for the PI_PROFILE that OMP_PROFILE overrode
    ({"OMP_PROFILE": "default", "PI_PROFILE": "work", "PI_CODING_AGENT_DIR": "HOME/.omp/profiles/work/agent"},
     ".omp/agent"),
    # OMP_CODING_AGENT_DIR does not exist in omp: it moves nothing
    ({"OMP_CODING_AGENT_DIR": "ABS"}, ".omp/agent"),
]


def expand(value: str, home: Path, elsewhere: Path) -> str:
    return value.replace("ABS", str(elsewhere)).replace("HOME", str(home))


@pytest.mark.parametrize("environ,folder", FOLDERS, ids=[json.dumps(e) for e, _ in FOLDERS])
def test_install_and_doctor_use_the_folder_omp_reads(run, home, tmp_path, environ, folder):
    elsewhere = tmp_path / "agent elsewhere"
    env = {k: expand(v, home, elsewhere) for k, v in environ.items()}
    agent = Path(expand(folder, home, elsewhere)) if folder.startswith("ABS") else home / folder
    out = absolute(ok(run("install", "omp", env=env)).stdout.decode(), home)
    module = agent / "extensions" / "lich.js"
    assert f"created {module}" in out
    written = sorted(p for p in list(home.rglob("lich.js")) + list(tmp_path.glob("agent*/**/lich.js")))
    assert written == [module]  # nowhere else
    assert json.loads((agent / "mcp.json").read_text())["mcpServers"]["lichhook"]["args"][-1] == "mcp"
    doctor = run("doctor", "--verbose", env=env).stdout.decode()
    omp = doctor.split("oh-my-pi (omp)")[1]
    assert "registered: yes" in omp and f"module in {module}" in omp
    assert "problem: omp" not in doctor
    ok(run("uninstall", "omp", env=env))
    assert not module.exists()


@pytest.mark.parametrize("variable,value", [("OMP_PROFILE", "Work"), ("OMP_PROFILE", "../x"),
                                             ("PI_PROFILE", "a."), ("OMP_PROFILE", "nul.txt"),
                                             ("OMP_PROFILE", "x" * 65)])
def test_a_profile_omp_refuses_is_refused_naming_it(run, home, variable, value):
    result = run("install", "omp", env={variable: value})
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"{variable}={value!r} is not a profile name omp accepts" in err and "omp itself refuses" in err
    assert not (home / ".omp").exists()
    doctor = run("doctor", "--verbose", env={variable: value})
    assert doctor.returncode == 1
    assert f"problem: omp: {variable}={value!r} is not a profile name omp accepts" in doctor.stdout.decode()


# -- sub-agents ----------------------------------------------------------------------------
# What the extension forwards, with the files and headers omp 18.2.3 wrote (see the
# reference page): the main session, its task sub-agent, a fork and a /tree branch.

SESSIONS = "/home/u/.omp/agent/sessions/--home-u-proj--"
MAIN = {"type": "session_start", "session_id": "01a22ec1-97b2-7095-8c31-d3e20ad35509",
        "session_file": f"{SESSIONS}/{SUB_TASK_DIR}.jsonl", "parent_session": None}
SUB_AGENT = {"type": "session_start", "session_id": "01a22ec1-9c13-710d-9244-342937c83f84",
             "session_file": f"{SESSIONS}/{SUB_TASK_DIR}/CaptureSub.jsonl",
             "parent_session": f"{SESSIONS}/{SUB_TASK_DIR}.jsonl"}
FORK = {"type": "session_switch", "session_id": "01a22ec2-0000-7000-8000-000000000001",
        "session_file": f"{SESSIONS}/2026-11-30T23-20-00-000Z_01a22ec2-0000-7000-8000-000000000001.jsonl",
        "parent_session": "01a22ec1-97b2-7095-8c31-d3e20ad35509"}
BRANCH = {"type": "session_branch", "session_id": "01a22ec3-0000-7000-8000-000000000002",
          "session_file": f"{SESSIONS}/2026-11-30T23-21-00-000Z_01a22ec3-0000-7000-8000-000000000002.jsonl",
          "parent_session": f"{SESSIONS}/{SUB_TASK_DIR}.jsonl"}
NESTED = dict(SUB_AGENT, session_id="01a22ec4-0000-7000-8000-000000000003",
              session_file=f"{SESSIONS}/{SUB_TASK_DIR}/CaptureSub/Deeper.jsonl",
              parent_session=f"{SESSIONS}/{SUB_TASK_DIR}/CaptureSub.jsonl")
OLD_EXTENSION = {"type": "session_start", "session_id": "01a22ec5-0000-7000-8000-000000000004"}


@pytest.mark.parametrize("payload,reported", [(MAIN, True), (SUB_AGENT, False), (NESTED, False), (FORK, True),
                                              (BRANCH, True), (OLD_EXTENSION, True)],
                         ids=["main", "sub-agent", "sub-agent of a sub-agent", "fork", "branch",
                              "an older extension's payload"])
def test_only_a_sub_agent_session_goes_unreported(run, standin, payload, reported):
    result = run("omp", stdin=json.dumps(payload), env=lich_env(standin))
    assert result.returncode == 0 and result.stdout == b""
    got = [r.accepted["provider_session_id"] for r in standin.wait_for(1, timeout=5 if reported else 1)]
    assert got == ([payload["session_id"]] if reported else [])


OMP_DRIVER = r"""
import { pathToFileURL } from "node:url";
const [modulePath, sessionsJson] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
const handlers = {};
mod.default({ on(name, fn) { (handlers[name] ??= []).push(fn); } });
for (const s of JSON.parse(sessionsJson)) {
  const sessionManager = { getSessionId: () => s.session_id, getSessionFile: () => s.session_file ?? undefined,
                           getHeader: () => ({ type: "session", id: s.session_id, parentSession: s.parent_session ?? undefined }) };
  for (const fn of handlers[s.type] ?? []) fn({ type: s.type }, { sessionManager });
}
"""


def test_the_extension_forwards_file_and_parent_so_a_sub_agent_is_left_out(run, home, base_env, standin, tmp_path):
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    ok(run("install", "omp"))
    driver = tmp_path / "driver.mjs"
    driver.write_text(OMP_DRIVER)
    module = home / ".omp" / "agent" / "extensions" / "lich.js"
    env = dict(base_env, **lich_env(standin))
    done = subprocess.run([node, str(driver), str(module), json.dumps([MAIN, SUB_AGENT, FORK])], env=env,
                          capture_output=True, timeout=20)
    assert done.returncode == 0, done.stderr.decode()
    reports = standin.wait_for(2, timeout=10)
    assert sorted(r.accepted["provider_session_id"] for r in reports) == sorted([MAIN["session_id"], FORK["session_id"]])
    assert len(standin.wait_for(3, timeout=2)) == 2  # the sub-agent's never comes
