"""The opencode and omp modules, installed by the archive and run by Node.

A small driver imports the installed module file the way each harness does (opencode
calls every export with its plugin input and feeds events to ``event``; omp calls the
default export with ``pi`` and later calls the handlers with an event and ``ctx``). The
module spawns the real archive, which reports to the stand-in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.environment import lich_env

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

OPENCODE_DRIVER = r"""
import { pathToFileURL } from "node:url";
const [modulePath, eventsJson] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
const exports = Object.keys(mod);
const hooks = {};
for (const plugin of Object.values(mod)) {
  Object.assign(hooks, await plugin({ client: {}, project: {}, directory: "/tmp", worktree: "/tmp", $: undefined }));
}
const returned = [];
if (typeof hooks.event === "function") {
  for (const event of JSON.parse(eventsJson)) returned.push(await hooks.event({ event }));
  returned.push(await hooks.event({}));
}
console.log(JSON.stringify({ exports, hooks: Object.keys(hooks), returned: returned.map(String) }));
"""

OMP_DRIVER = r"""
import { pathToFileURL } from "node:url";
const [modulePath, ...ids] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
const handlers = {};
const pi = { on(name, fn) { (handlers[name] ??= []).push(fn); } };
mod.default(pi);
const returned = [];
const fire = (name, ctx) => { for (const fn of handlers[name] ?? []) returned.push(fn({ type: name }, ctx)); };
fire("session_start", { sessionManager: { getSessionId: () => ids[0] } });
fire("session_switch", { sessionManager: { getSessionId: () => ids[1] } });
fire("session_start", {});
fire("session_start", { sessionManager: { getSessionId: () => { throw new Error("boom"); } } });
console.log(JSON.stringify({ exports: Object.keys(mod), subscribed: Object.keys(handlers), returned: returned.map(String) }));
"""

SESSION_CREATED = {
    "type": "session.created",
    "properties": {"sessionID": "ses_011856954ffe5NEMhsYeTuWykR",
                   "info": {"id": "ses_011856954ffe5NEMhsYeTuWykR", "directory": "/home/u/proj", "title": "New session"}},
}
SUB_SESSION = {"type": "session.created",
               "properties": {"info": {"id": "ses_child", "parentID": "ses_011856954ffe5NEMhsYeTuWykR"}}}
IDLE = {"type": "session.idle", "properties": {"sessionID": "ses_011856954ffe5NEMhsYeTuWykR"}}


def drive(tmp_path: Path, driver: str, args: list, env: dict) -> dict:
    script = tmp_path / "driver.mjs"
    script.write_text(driver)
    result = subprocess.run([NODE, str(script), *args], env=env, capture_output=True, timeout=20)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


@pytest.fixture
def installed(run, home, tmp_path):
    agent = tmp_path / "omp agent"
    result = run("install", "opencode", "omp", env={"PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    return {"opencode": home / ".config" / "opencode" / "plugins" / "lichhook.js",
            "omp": agent / "extensions" / "lichhook.js"}


def test_opencode_module_reports_session_created(installed, base_env, standin, tmp_path):
    env = dict(base_env, **lich_env(standin))
    out = drive(tmp_path, OPENCODE_DRIVER, [str(installed["opencode"]), json.dumps([SESSION_CREATED, SUB_SESSION, IDLE])], env)
    assert out["exports"] == ["LichhookPlugin"]  # opencode calls every export: one only
    assert out["hooks"] == ["event"]
    assert out["returned"] == ["undefined"] * 4
    reports = standin.wait_for(1, timeout=10)
    assert reports[0].verdict == "accepted"
    assert reports[0].accepted["provider"] == "opencode"
    assert reports[0].accepted["provider_session_id"] == "ses_011856954ffe5NEMhsYeTuWykR"
    # the sub-session and the idle event are not forwarded as reports
    assert len(standin.wait_for(2, timeout=2)) == 1


def test_opencode_module_does_nothing_outside_lich(installed, base_env, tmp_path):
    partial = dict(base_env, LICH_PORT="1", LICH_TOKEN="  ", LICH_SESSION_ID="s")
    for env in (base_env, partial):
        out = drive(tmp_path, OPENCODE_DRIVER, [str(installed["opencode"]), json.dumps([SESSION_CREATED])], env)
        assert out["hooks"] == [] and out["returned"] == []


def test_omp_module_reports_start_and_switch(installed, base_env, standin, tmp_path):
    env = dict(base_env, **lich_env(standin))
    out = drive(tmp_path, OMP_DRIVER, [str(installed["omp"]), "019ffb38-ceab-7000-afae-20b8eae145d8", "V1StGXR8_Z5jdHi6B-myT"], env)
    assert out["exports"] == ["default"]
    assert out["subscribed"] == ["session_start", "session_switch", "session_branch"]
    assert out["returned"] == ["undefined"] * 4  # handlers return nothing, even on bad ctx
    reports = standin.wait_for(2, timeout=10)
    assert sorted(r.accepted["provider_session_id"] for r in reports) == [
        "019ffb38-ceab-7000-afae-20b8eae145d8", "V1StGXR8_Z5jdHi6B-myT"]
    assert {r.accepted["provider"] for r in reports} == {"omp"}
    assert all(r.verdict == "accepted" for r in reports)


def test_omp_module_subscribes_to_nothing_outside_lich(installed, base_env, tmp_path):
    out = drive(tmp_path, OMP_DRIVER, [str(installed["omp"]), "a", "b"], base_env)
    assert out["subscribed"] == [] and out["returned"] == []


def test_modules_swallow_a_missing_python(run, home, base_env, standin, tmp_path):
    python = tmp_path / "gone" / "python3"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    agent = tmp_path / "agent"
    result = run("install", "opencode", "omp", env={"PI_CODING_AGENT_DIR": str(agent)}, python=str(python))
    assert result.returncode == 0, result.stderr
    python.unlink()
    env = dict(base_env, **lich_env(standin))
    out = drive(tmp_path, OPENCODE_DRIVER,
                [str(home / ".config" / "opencode" / "plugins" / "lichhook.js"), json.dumps([SESSION_CREATED])], env)
    assert out["returned"] == ["undefined", "undefined"]
    out = drive(tmp_path, OMP_DRIVER, [str(agent / "extensions" / "lichhook.js"), "a", "b"], env)
    assert out["subscribed"] == ["session_start", "session_switch", "session_branch"]
    assert standin.reports == []


def test_module_source_escapes_paths_as_js_strings(tmp_path):
    """Paths with quotes, backslashes and non-ASCII survive as JS string literals."""
    from lichhook.install.jsmodules import baked_paths, module_source
    from lichhook.install.target import Target

    python = 'C:\\Users\\Zoë "x"\\python.exe'
    archive = "/home/it's\u2028here/lichhook.pyz"
    for kind in ("opencode", "omp"):
        source = module_source(kind, Target(python, archive, windows=False))
        assert baked_paths(source) == (python, archive)
        path = tmp_path / f"{kind}.mjs"
        path.write_bytes(source)
        check = subprocess.run([NODE, "--input-type=module", "-e",
                                f"import {{ readFileSync }} from 'node:fs';"
                                f"const src = readFileSync({json.dumps(str(path))}, 'utf8');"
                                "const grab = (n) => JSON.parse(src.match(new RegExp('const ' + n + ' = (.*);'))[1]);"
                                "console.log(JSON.stringify([grab('PYTHON'), grab('ARCHIVE')]));"
                                f"await import({json.dumps(path.as_uri())});"],
                               capture_output=True, timeout=20)
        assert check.returncode == 0, check.stderr.decode()
        assert json.loads(check.stdout) == [python, archive]
