"""The opencode and omp modules, as install writes them, run by Node (and Bun, which runs
both harnesses, when the end-to-end cache holds it).

A small driver imports the module file the way each harness does (opencode calls every
export with its plugin input, feeds bus events to ``event`` and calls the
``tool.execute.*`` hooks with their input and output; omp calls the default export with
``pi`` and later calls each handler with an event and ``ctx``) and replays real captured
events (``tests/payloads/``). Most tests render the module with a recorder script in
place of the archive, which keeps its command words and each event line it takes, and when;
some run the real archive against the stand-in.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from lichhook.install.copies.target import launcher
from testkit.environment import lich_env

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
PAYLOADS = Path(__file__).parent / "payloads"
PROJECT = "/home/u/proj"  # the plugin's directory in the captures (sanitised)
OPENCODE_SID = "ses_dd13b4d40ffe3aYyIuLUoqsjmq"


def bun() -> Optional[str]:
    """Bun from PATH or from the end-to-end cache, if either has it (never installed here)."""
    from testkit import harnesses

    found = shutil.which("bun")
    cached = harnesses.bin_of(harnesses.cache_dir()) / "bun"
    return found or (str(cached) if cached.exists() else None)


# Runs each step against the module (a `pause` step waits that many seconds), then stays (as a
# harness does) until the recorder holds `expect` lines or the file `until` exists (at most
# `wait` s, 30 by default); with `exit`, it ends the process at once, as a harness exits.
DRIVER = r"""
import { pathToFileURL } from "node:url";
import { readFileSync, existsSync } from "node:fs";
const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const mod = await import(pathToFileURL(script.module).href);
const out = { exports: Object.keys(mod), hooks: [], returned: [], changed: [], logged: [] };
const lines = () => existsSync(script.record) ? readFileSync(script.record, "utf8").split("\n").filter(Boolean).length : 0;
if (script.kind === "opencode") {
  const hooks = {};
  for (const plugin of Object.values(mod)) Object.assign(hooks, await plugin({ client: { app: { log: async ({ body }) => { out.logged.push(body.message); } } }, project: {}, directory: script.directory, worktree: script.directory, $: undefined }));
  out.hooks = Object.keys(hooks);
  for (const step of script.steps) {
    if (step.pause) await new Promise((r) => setTimeout(r, step.pause * 1000));
    if (!hooks[step.hook]) continue;
    const before = JSON.stringify(step.output);
    out.returned.push(String(step.hook === "event" ? await hooks.event({ event: step.event }) : await hooks[step.hook](step.input, step.output)));
    if (JSON.stringify(step.output) !== before) out.changed.push(step.hook);
  }
} else {
  const handlers = {};
  mod.default({ on(name, fn) { (handlers[name] ??= []).push(fn); }, logger: { warn: (m) => out.logged.push(m) } });
  out.hooks = Object.keys(handlers);
  for (const step of script.steps) {
    if (step.pause) { await new Promise((r) => setTimeout(r, step.pause * 1000)); continue; }
    const c = step.ctx;
    const ctx = c === null ? undefined : c.throws ? { cwd: c.cwd, sessionManager: {
      getSessionId: () => c.id, getSessionName: () => { throw new Error("boom"); }, getSessionFile: () => { throw new Error("boom"); },
      getHeader: () => { throw new Error("boom"); } } } : { cwd: c.cwd, sessionManager: {
      getSessionId: () => c.id, getSessionName: () => c.name, getSessionFile: () => c.file, getHeader: () => c.header } };
    for (const fn of handlers[step.on] ?? []) out.returned.push(String(fn(step.event, ctx)));
  }
}
if (script.exit) { console.log(JSON.stringify(out)); process.exit(0); }
const deadline = Date.now() + (script.wait ?? 30) * 1000;
const waiting = () => script.until ? !existsSync(script.until) : lines() < script.expect;
while (waiting() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify(out));
"""

# Stands in for the archive's `<provider> --serve`: keeps its command words and each event
# line, and when it took it. A RECORD_SLOW event makes its line take that long; after the
# RECORD_DIE event the process exits.
RECORDER = r"""
import json, os, sys, time
words = sys.argv[1:]
slow = json.loads(os.environ.get("RECORD_SLOW") or "{}")
for raw in sys.stdin.buffer:
    start = time.time()
    line = json.loads(raw)
    time.sleep(slow.get(line["event"], 0))
    with open(os.environ["RECORD_TO"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"words": words, "flags": [sys.flags.isolated, sys.flags.no_site], "pid": os.getpid(),
                            "event": line["event"], "stdin": line["payload"], "start": start,
                            "end": time.time()}) + "\n")
    if line["event"] == os.environ.get("RECORD_DIE"):
        sys.exit(0)
"""


class Modules:
    """The modules rendered to run a recorder instead of the archive."""

    def __init__(self, tmp_path: Path, env: dict) -> None:
        from lichhook.install.harnesses.modules import module_source
        from lichhook.install.copies.target import Target

        self.folder = tmp_path
        recorder = tmp_path / "recorder.py"
        recorder.write_text(RECORDER)
        self.record = tmp_path / "record.jsonl"
        self.env = dict(env, RECORD_TO=str(self.record))
        self.paths = {}
        for kind in ("opencode", "omp"):
            path = tmp_path / f"{kind}.mjs"
            path.write_bytes(module_source(kind, Target(sys.executable, str(recorder), windows=False)))
            self.paths[kind] = path

    def drive(self, kind: str, steps: list, expect: int = 0, exit: bool = False, runtime: Optional[str] = None,
              module: Optional[Path] = None, env: Optional[dict] = None, directory: str = PROJECT) -> dict:
        return drive(self.folder, runtime or NODE, {
            "kind": kind, "module": str(module or self.paths[kind]), "record": str(self.record),
            "directory": directory, "steps": steps, "expect": expect, "exit": exit}, dict(self.env, **(env or {})))

    def recorded(self, expect: int = 0, settle: float = 0.0) -> List[dict]:
        import time

        deadline = time.monotonic() + 20
        while len(self.lines()) < expect and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(settle)
        return sorted(self.lines(), key=lambda r: r["start"])

    def lines(self) -> List[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines() if line]


def drive(folder: Path, runtime: str, script: dict, env: dict) -> dict:
    (folder / "driver.mjs").write_text(DRIVER)
    (folder / "script.json").write_text(json.dumps(script))
    result = subprocess.run([runtime, str(folder / "driver.mjs"), str(folder / "script.json")], env=env,
                            capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout.decode().splitlines()[0])


@pytest.fixture
def modules(tmp_path, base_env):
    return Modules(tmp_path, dict(base_env, LICH_PORT="1", LICH_TOKEN="tok", LICH_SESSION_ID="card"))


def payload(harness: str, name: str) -> dict:
    return json.loads((PAYLOADS / harness / f"{name}.json").read_text(encoding="utf-8"))["payload"]


# -- opencode ---------------------------------------------------------------------------------


def bus(name: str) -> dict:
    """A bus event as opencode hands it to the plugin, from the payload the module wrote."""
    data = payload("opencode", name)
    return {"hook": "event", "event": {"id": "evt_22ec4b2c0001fs0tpJkhOEkGGI", "type": data["type"],
                                       "properties": data["properties"]}}


def tool_hook(name: str, **changes: dict) -> dict:
    """A tool.execute.* hook call as opencode makes it, from the payload the module wrote:
    after a tool, opencode's input holds the args and its output the tool's whole output."""
    data = payload("opencode", name)
    data.update(changes)
    if data["type"] == "tool.execute.after":
        return {"hook": data["type"], "input": dict(data["input"], args={"command": "echo hi > f.txt"}),
                "output": {"title": "echo hi > f.txt", "metadata": {"exit": 0}, "output": "(no output)"}}
    return {"hook": data["type"], "input": data["input"], "output": data["output"]}


def sub_session(kind: str, **properties: object) -> dict:
    sub = payload("opencode", "session.created-subsession")["properties"]["info"]["id"]
    return {"hook": "event", "event": {"type": kind, "properties": dict({"sessionID": sub}, **properties)}}


SUB_ID = "ses_dd13afecbffer5zRuW1pWjkjsF"
WRITE_AFTER = {"input": {"tool": "write", "sessionID": OPENCODE_SID, "callID": "call_8f8793bd6caf4b88"}}

# The first turn of the `run-tools` capture, in the order opencode sent it, with the
# sub-session of `run-agent` mixed in; and what the module runs for each (None: nothing).
OPENCODE_LIFE = [
    (bus("session.created"), "session.created"),
    (bus("session.updated-placeholder"), None),  # the title it was created with
    (bus("session.status-busy"), "session.status-busy"),
    (bus("session.updated-titled"), "session.updated-titled"),
    (bus("session.updated-titled"), None),  # the same title again
    (bus("session.status-busy"), None),  # busy again, nothing between: no card changes
    (bus("session.created-subsession"), None),
    (bus("session.updated-subsession"), None),
    (sub_session("session.status", status={"type": "busy"}), None),
    (dict(tool_hook("tool.execute.before-bash"), input=dict(payload("opencode", "tool.execute.before-bash")["input"],
                                                             sessionID=SUB_ID)), None),
    (tool_hook("tool.execute.before-bash"), "tool.execute.before-bash"),
    (tool_hook("tool.execute.after-bash"), "tool.execute.after-bash"),
    (bus("session.status-busy"), "session.status-busy"),
    (tool_hook("tool.execute.before-write"), "tool.execute.before-write"),
    (bus("file.edited"), "file.edited"),
    ({"hook": "event", "event": {"type": "message.part.updated", "properties": {"sessionID": OPENCODE_SID}}}, None),
    ({"hook": "event", "event": {"type": "session.idle", "properties": {"sessionID": OPENCODE_SID}}}, None),
    (bus("session.status-idle"), "session.status-idle"),
]


def test_opencode_module_forwards_each_event_once_in_order(modules):
    steps = [step for step, _ in OPENCODE_LIFE]
    wanted = [name for _, name in OPENCODE_LIFE if name]
    # The first lichhook is slow: were the others not held back, they would overtake it.
    out = modules.drive("opencode", steps, expect=len(wanted), env={"RECORD_SLOW": '{"session.created": 0.5}'})
    assert out["exports"] == ["LichhookPlugin"]  # opencode calls every export: one only
    assert out["hooks"] == ["event", "tool.execute.before", "tool.execute.after"]
    assert out["returned"] == ["undefined"] * len(steps)
    assert out["changed"] == []  # the tool's arguments as opencode gave them
    runs = modules.recorded(len(wanted), settle=0.3)
    assert [r["event"] for r in runs] == [payload("opencode", n)["type"] for n in wanted]
    # one lichhook for the whole session, -I -S as install registers every command
    assert {(tuple(r["words"]), tuple(r["flags"]), r["pid"]) for r in runs} == {(("opencode", "--serve"), (1, 1),
                                                                                  runs[0]["pid"])}
    assert [r["stdin"] for r in runs] == [payload("opencode", n) for n in wanted]


def test_a_forwarded_title_is_not_forwarded_again_but_a_new_one_is(modules):
    first = bus("session.updated-titled")
    renamed = json.loads(json.dumps(first))
    renamed["event"]["properties"]["info"]["title"] = "Write hello into g.txt"
    steps = [bus("session.created"), first, first, renamed, first, bus("session.created-fork")]
    modules.drive("opencode", steps, expect=5)
    runs = modules.recorded(5, settle=0.3)
    assert [(r["event"], r["stdin"]["properties"]["info"]["title"]) for r in runs] == [
        ("session.created", "New session - 2026-11-30T23:22:52.479Z"),
        ("session.updated", "Write hi into f.txt"),
        ("session.updated", "Write hello into g.txt"),
        ("session.updated", "Write hi into f.txt"),
        ("session.created", "Write hi into f.txt (fork #1)"),  # a fork is a session of its own
    ]


def test_a_long_tool_argument_is_cut_before_it_is_sent(modules):
    step = tool_hook("tool.execute.before-write")
    step["output"] = {"args": dict(step["output"]["args"], content="x" * 100_000)}
    out = modules.drive("opencode", [step], expect=1)
    assert out["changed"] == []
    (run,) = modules.recorded(1)
    args = run["stdin"]["output"]["args"]
    assert args["content"] == "x" * 4096 and args["filePath"] == "/home/u/proj/g.txt"


@pytest.mark.parametrize("env", [{}, {"LICH_TOKEN": "  "}, {"LICH_PORT": ""}])
def test_opencode_module_does_nothing_outside_lich(modules, env):
    if env:
        modules.env.update(env)  # one of them blank
    else:
        modules.env = {k: v for k, v in modules.env.items() if not k.startswith("LICH_")}
    out = modules.drive("opencode", [step for step, _ in OPENCODE_LIFE])
    assert out["hooks"] == [] and out["returned"] == []
    assert modules.recorded(settle=0.5) == []


# -- omp --------------------------------------------------------------------------------------


def omp_step(name: str, ctx: Optional[dict] = None) -> dict:
    """An omp event and its ctx as omp hands them to the handler, from the payload the
    module wrote."""
    data = payload("omp", name)
    event = {"type": data["type"]}
    for key in ("toolName", "input", "isError"):
        if key in data:
            event[key] = data[key]
    if data["type"] == "tool_call":
        event["toolCallId"] = "call_1"
    parent = data["parent_session"]
    if ctx is None:
        ctx = {"id": data["session_id"], "name": data.get("session_name"), "file": data["session_file"],
               "cwd": data["cwd"], "header": {"type": "session", "id": data["session_id"],
                                               **({"parentSession": parent} if parent else {})}}
    return {"on": data["type"], "event": event, "ctx": ctx}


# The `tui` capture's first turn, the sub-agent of `p-agent` mixed in.
OMP_LIFE = ["session_start", "input", "turn_start-titled", "tool_call-bash", "session_start-subagent",
            "tool_result-subagent", "tool_result-bash", "tool_call-write", "session_stop"]


def test_omp_module_forwards_what_the_event_and_its_ctx_say_in_order(modules):
    steps = [omp_step(name) for name in OMP_LIFE]
    out = modules.drive("omp", steps, expect=len(steps), env={"RECORD_SLOW": '{"session_start": 0.5}'})
    assert out["exports"] == ["default"]
    assert out["hooks"] == ["session_start", "session_switch", "session_branch", "input", "turn_start",
                            "tool_call", "tool_result", "session_stop"]
    # a value returned by an omp handler is a decision (tool_call's blocks the call): none is
    assert out["returned"] == ["undefined"] * len(steps)
    runs = modules.recorded(len(steps), settle=0.3)
    assert [r["event"] for r in runs] == [payload("omp", n)["type"] for n in OMP_LIFE]
    assert {(tuple(r["words"]), r["pid"]) for r in runs} == {(("omp", "--serve"), runs[0]["pid"])}
    # the sub-agent's events go too: lichhook tells them apart by their session file
    assert [r["stdin"] for r in runs] == [payload("omp", n) for n in OMP_LIFE]


def test_omp_module_sends_the_id_when_the_other_getters_fail_and_the_event_without_one(modules):
    steps = [omp_step("input", ctx={"id": "01a22ec3-4501-7766-a07b-ba211c3beff8", "cwd": PROJECT, "throws": True}),
             omp_step("input", ctx={"id": "", "cwd": PROJECT}),
             omp_step("input", ctx=None)]
    steps[2]["ctx"] = None
    out = modules.drive("omp", steps, expect=3)
    assert out["returned"] == ["undefined"] * 3
    assert [r["stdin"] for r in modules.recorded(3, settle=0.3)] == [
        {"type": "input", "session_id": "01a22ec3-4501-7766-a07b-ba211c3beff8", "cwd": PROJECT,
         "session_file": None, "parent_session": None},
        # lichhook still reports the event (busy, a tool, touched), with no id alongside
        {"type": "input", "session_id": None, "cwd": PROJECT, "session_file": None, "parent_session": None},
        {"type": "input", "session_id": None, "session_file": None, "parent_session": None},
    ]


def test_omp_module_subscribes_to_nothing_outside_lich(modules):
    modules.env = {k: v for k, v in modules.env.items() if not k.startswith("LICH_")}
    out = modules.drive("omp", [omp_step(n) for n in OMP_LIFE])
    assert out["hooks"] == [] and out["returned"] == []
    assert modules.recorded(settle=0.5) == []


# -- both ---------------------------------------------------------------------------------------


# Bun (which runs opencode and omp) comes with the pinned harnesses, so its case runs with
# the end-to-end suite, after the cache is installed.
@pytest.mark.parametrize("runtime", ["node", pytest.param("bun", marks=pytest.mark.e2e)])
def test_what_is_queued_when_the_harness_exits_still_goes(modules, tmp_path, runtime):
    """The harness may exit right after its last event, while lichhook still works on an
    earlier one: what it wrote before its exit is taken in all the same, in order, and
    the lichhook ends with its stdin."""
    program = NODE if runtime == "node" else bun()
    if program is None:
        pytest.skip("bun is neither on PATH nor in the end-to-end cache")
    temp = tmp_path / "temp"
    temp.mkdir()
    names = ("session_start", "input", "tool_call-write", "session_stop")
    modules.drive("omp", [omp_step(n) for n in names], exit=True, runtime=program,
                  env={"RECORD_SLOW": '{"session_start": 0.5}', "TMPDIR": str(temp)})
    runs = modules.recorded(len(names), settle=0.3)
    assert [r["stdin"] for r in runs] == [payload("omp", n) for n in names]
    assert list(temp.iterdir()) == []
    assert not alive(runs[0]["pid"])


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not a zombie), within 3 s."""
    import time

    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def test_a_lichhook_that_died_is_followed_by_another_at_the_next_event(modules):
    steps = [omp_step("session_start"), omp_step("input")]
    out = modules.drive("omp", steps + [{"pause": 0.5}] + [omp_step("tool_call-bash")], expect=3,
                        env={"RECORD_DIE": "input"})
    runs = modules.recorded(3)
    assert [r["event"] for r in runs] == ["session_start", "input", "tool_call"]
    assert runs[0]["pid"] == runs[1]["pid"] != runs[2]["pid"]
    assert out["logged"] == []


def test_modules_swallow_a_missing_python(run, home, base_env, standin, tmp_path):
    python = tmp_path / "gone" / "python3"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    agent = tmp_path / "agent"
    result = run("install", "opencode", "omp", env={"PI_CODING_AGENT_DIR": str(agent)}, python=str(python))
    assert result.returncode == 0, result.stderr
    python.unlink()
    env = dict(base_env, **lich_env(standin))
    opencode = home / ".config" / "opencode" / "plugin" / "lich.js"
    script = {"kind": "opencode", "module": str(opencode), "record": str(tmp_path / "none"), "directory": PROJECT,
              "steps": [step for step, _ in OPENCODE_LIFE], "expect": 0, "exit": False}
    out = drive(tmp_path, NODE, dict(script, until=str(tmp_path / "never"), wait=1), env)
    assert out["returned"] == ["undefined"] * len(OPENCODE_LIFE)
    # said once, in opencode's own log
    assert [m.split(" could not be started")[0] for m in out["logged"]] == [f"lichhook: {python}"], out["logged"]
    script.update(kind="omp", module=str(agent / "extensions" / "lich.js"), steps=[omp_step(n) for n in OMP_LIFE])
    out = drive(tmp_path, NODE, dict(script, until=str(tmp_path / "never"), wait=1), env)
    assert out["returned"] == ["undefined"] * len(OMP_LIFE)
    assert [m.split(" could not be started")[0] for m in out["logged"]] == [f"lichhook: {python}"], out["logged"]
    assert standin.wait_for(1, timeout=1) == []


# -- the real archive ------------------------------------------------------------------------


@pytest.fixture
def installed(run, home, tmp_path):
    agent = tmp_path / "omp agent"
    result = run("install", "opencode", "omp", env={"PI_CODING_AGENT_DIR": str(agent)})
    assert result.returncode == 0, result.stderr
    return {"opencode": home / ".config" / "opencode" / "plugin" / "lich.js",
            "omp": agent / "extensions" / "lich.js"}


def said(report) -> tuple:
    assert report.status == 204, (report.status, report.verdict, report.body)
    a = report.accepted
    if report.contract == "session-start":
        return ("start", a["provider_session_id"])
    if report.contract == "session-state":
        return (a["state"], a["tool"], a["detail"])
    if report.contract == "session-title":
        return ("title", a["title"])
    return (report.contract,)


def life(tmp_path: Path, kind: str, module: Path, steps: list, env: dict, standin, count: int) -> list:
    """The reports lich got while the driver, as the harness, stayed until it had ``count``."""
    until = tmp_path / "enough"
    script = {"kind": kind, "module": str(module), "record": str(tmp_path / "none"), "directory": PROJECT,
              "steps": steps, "expect": 0, "until": str(until), "exit": False}
    (tmp_path / "driver.mjs").write_text(DRIVER)
    (tmp_path / "script.json").write_text(json.dumps(script))
    proc = subprocess.Popen([NODE, str(tmp_path / "driver.mjs"), str(tmp_path / "script.json")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        reports = standin.wait_for(count, timeout=30)
    finally:
        until.write_text("")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out.decode().splitlines()[0])["returned"] == ["undefined"] * len(steps)
    return [said(r) for r in reports]


def test_a_whole_opencode_turn_reaches_lich_in_order(installed, base_env, standin, tmp_path):
    env = dict(base_env, **lich_env(standin), XDG_STATE_HOME=str(tmp_path / "state"))
    expected = [("start", OPENCODE_SID), ("busy", "", ""), ("title", "Write hi into f.txt"),
                ("busy", "bash", "echo hi > f.txt"), ("busy", "", ""), ("busy", "", ""), ("busy", "write", "g.txt"),
                ("session-touched",), ("done", "", "")]
    steps = [step for step, _ in OPENCODE_LIFE]
    assert life(tmp_path, "opencode", installed["opencode"], steps, env, standin, len(expected)) == expected
    assert len(standin.wait_for(len(expected) + 1, timeout=1)) == len(expected)


def test_a_whole_omp_turn_reaches_lich_in_order(installed, base_env, standin, tmp_path):
    env = dict(base_env, **lich_env(standin), XDG_STATE_HOME=str(tmp_path / "state"))
    expected = [("start", "01a22ec3-4501-7766-a07b-ba211c3beff8"), ("busy", "", ""), ("busy", "", ""),
                ("title", "Write hi into f.txt"), ("busy", "bash", "echo hi > f.txt"), ("session-touched",),
                ("busy", "write", "g.txt"), ("done", "", "")]
    steps = [omp_step(n) for n in OMP_LIFE]
    assert life(tmp_path, "omp", installed["omp"], steps, env, standin, len(expected)) == expected
    assert len(standin.wait_for(len(expected) + 1, timeout=1)) == len(expected)


# -- what install writes ---------------------------------------------------------------------


def test_module_source_escapes_paths_as_js_strings(tmp_path):
    """Paths with quotes, backslashes and non-ASCII survive as JS string literals."""
    from lichhook.install.harnesses.modules import baked_paths, module_source
    from lichhook.install.copies.target import Target

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


def test_a_baked_value_nested_past_pythons_recursion_reads_as_none():
    """A module whose constants were edited into arrays nested 100,000 deep: doctor reads
    them as not lichhook's, and does not fail."""
    from lichhook.install.harnesses.modules import baked_events, baked_flags, baked_paths

    deep = "[" * 100_000 + "]" * 100_000
    raw = "\n".join(f"const {name} = {deep};" for name in ("PYTHON", "ARCHIVE", "FLAGS", "EVENTS")).encode()
    assert baked_paths(raw) == (None, None)
    assert baked_flags(raw) == [] and baked_events(raw) is None


# -- modules earlier releases installed (tests/fixtures/js/) -------------------------------------

EARLIER = Path(__file__).parent / "fixtures" / "js"


def earlier_module(kind: str, release: str, python: str, archive: str) -> bytes:
    """A module as an earlier release's installer wrote it."""
    text = (EARLIER / f"{kind}-{release}.js").read_text(encoding="utf-8")
    text = text.replace('"@PYTHON@"', json.dumps(python)).replace('"@ARCHIVE@"', json.dumps(archive))
    return text.replace('"@FLAGS@"', json.dumps(["-I", "-S"])).encode("utf-8")


@pytest.mark.parametrize("release", ["first", "flags"])
@pytest.mark.parametrize("kind", ["opencode", "omp"])
def test_an_earlier_module_is_read_back(kind, release):
    from lichhook.install.harnesses.modules import baked_events, baked_flags, baked_paths, module_source
    from lichhook.install.copies.target import Target

    raw = earlier_module(kind, release, "/usr/bin/python3", "/home/u/.local/share/lichhook/lichhook.pyz")
    assert baked_paths(raw) == ("/usr/bin/python3", "/home/u/.local/share/lichhook/lichhook.pyz")
    assert baked_flags(raw) == (["-I", "-S"] if release == "flags" else [])
    assert baked_events(raw) is None  # it forwarded the session start alone, as the bare command
    now = module_source(kind, Target("/usr/bin/python3", "/a/lichhook.pyz", windows=False))
    assert baked_events(now) == {r[0]: list(r[1]) for r in descriptor_rows(kind)}


def descriptor_rows(kind: str) -> list:
    from lichhook.adapters import BY_PROVIDER

    return list(BY_PROVIDER[kind].registrations)


@pytest.mark.parametrize("release", ["first", "flags"])
def test_install_replaces_an_earlier_module_and_doctor_calls_it_out_of_date(run, home, pyz, tmp_path, release):
    from testkit.archive import installed_hooks

    agent = tmp_path / "agent"
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    paths = {"opencode": home / ".config" / "opencode" / "plugin" / "lich.js",
             "omp": agent / "extensions" / "lich.js"}
    legacy = home / ".local" / "share" / "lichhook" / "lichhook.pyz"  # where the first releases put it
    legacy.parent.mkdir(parents=True)
    shutil.copyfile(pyz, legacy)
    for kind, path in paths.items():
        path.parent.mkdir(parents=True)
        path.write_bytes(earlier_module(kind, release, sys.executable, str(legacy)))
    doctor = run("doctor", "--verbose", env=env).stdout.decode()
    for kind, path in paths.items():
        assert f"problem: {kind}: the registration is incomplete or out of date ({path}" in doctor, doctor
        assert f"command: {sys.executable}{' -I -S' if release == 'flags' else ''} {legacy} {kind}\n" in doctor

    result = run("install", "opencode", "omp", env=env)
    assert result.returncode == 0, result.stderr
    hooks = installed_hooks(home)
    for kind, path in paths.items():
        text = path.read_text(encoding="utf-8")
        assert "const EVENTS = {" in text and json.dumps(str(hooks)) in text
    doctor = run("doctor", "--verbose", env=env).stdout.decode()
    assert "problem: opencode" not in doctor and "problem: omp" not in doctor, doctor
    started = shlex.join([sys.executable, "-I", "-S", "-c", launcher(), str(hooks), "opencode"])
    assert (f"command: {started} --serve, on session.created, session.status, "
            "tool.execute.before, tool.execute.after, *.asked, session.updated, file.edited\n") in doctor

    result = run("uninstall", "opencode", "omp", env=env)
    assert result.returncode == 0, result.stderr
    assert not any(path.exists() for path in paths.values())


def test_uninstall_removes_an_earlier_module(run, home, pyz):
    path = home / ".config" / "opencode" / "plugin" / "lich.js"
    path.parent.mkdir(parents=True)
    path.write_bytes(earlier_module("opencode", "first", sys.executable, str(pyz)))
    result = run("uninstall", "opencode")
    assert result.returncode == 0, result.stderr
    assert not path.exists()
