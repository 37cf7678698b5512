"""What reporting a session costs inside opencode and omp: lichhook's module (one
``lichhook <provider> --serve`` for the session) against the floor for that design, a
minimal module that POSTs each report from JavaScript, in the harness's own process.

    python bench/js_sessions.py [--pyz dist/lichhook.pyz] [--runs 3] [--events 100] [--pace-ms 20]

For each harness and module, node imports the module as the harness does and hands it a
scripted session of ``--events`` events, one every ``--pace-ms`` (each makes exactly one
report: a tool call with its own detail, or a plain busy), against lich's stand-in. It
reports, per event: the CPU of node and of every lichhook process together (the one
start included), and the time from the event to the report accepted by the stand-in;
whether every report came once and in order; how many lichhook processes were running
at the end. Runs are
interleaved; figures are medians over runs. Linux (reads /proc). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from lichhook.contracts import RELEASE, session_start, session_state  # noqa: E402
from lichhook.standin import StandIn  # noqa: E402

TOKEN = "bench-token-7f3a"
LICH_SESSION = "bench-lich-session"
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

# Imports the module as its harness does, hands it the events at the pace asked, then stays
# until the file `until` exists; prints the time of each event and node's own CPU.
DRIVER = r"""
import { pathToFileURL } from "node:url";
import { existsSync, readFileSync } from "node:fs";
const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
// CPU milliseconds of this process, of its children alive now (lichhook's) and of those it
// has reaped (a process per event), from /proc
function cpu() {
  const own = process.cpuUsage();
  const ticks = (path, from) => {
    const f = readFileSync(path, "utf8").split(")").pop().trim().split(/\s+/);
    return (Number(f[from]) + Number(f[from + 1])) * 1000 / script.tick;
  };
  let total = (own.user + own.system) / 1000 + ticks("/proc/self/stat", 13);
  let kids = [];
  try { kids = readFileSync(`/proc/self/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean); } catch {}
  for (const pid of kids) {
    try { total += ticks(`/proc/${pid}/stat`, 11); } catch {}
  }
  return { total, kids: kids.length };
}
const before = cpu();
const mod = await import(pathToFileURL(script.module).href);
const sent = [];
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let hand;
if (script.kind === "opencode") {
  const hooks = {};
  for (const plugin of Object.values(mod)) Object.assign(hooks, await plugin({ directory: script.directory }));
  hand = (e) => e.hook === "event" ? hooks.event({ event: e.event }) : hooks[e.hook](e.input, e.output);
} else {
  const handlers = {};
  mod.default({ on(name, fn) { (handlers[name] ??= []).push(fn); } });
  const ctx = { cwd: script.directory, sessionManager: { getSessionId: () => "omp-bench", getSessionName: () => undefined,
    getSessionFile: () => undefined, getHeader: () => ({}) } };
  hand = (e) => { for (const fn of handlers[e.on] ?? []) fn(e.event, ctx); };
}
let mark;
for (const [i, e] of script.events.entries()) {
  sent.push(now());
  await hand(e);
  // after the first event, time for what starts once (lichhook's process, fetch's client)
  if (i === 0) { await sleep(script.settle); mark = cpu(); }
  await sleep(script.pace);
}
while (!existsSync(script.until)) await sleep(5);
const end = cpu();
console.log(JSON.stringify({ sent, whole_ms: end.total - before.total, steady_ms: end.total - mark.total, kids: end.kids }));
"""

# The floor: the least a module can do to report in-process, each report one fetch.
FLOOR = {
    "opencode": r"""
const post = (path, body) => fetch(`http://127.0.0.1:${process.env.LICH_PORT}${path}?token=${process.env.LICH_TOKEN}`, {
  method: "POST", headers: { "content-type": "application/json", "x-lich-plugin": "@RELEASE@" },
  body: JSON.stringify({ session_id: process.env.LICH_SESSION_ID, ...body }), signal: AbortSignal.timeout(1000),
}).catch(() => {});
export const Floor = async () => ({
  event: async ({ event }) => {
    if (event.type === "session.created") post("@START@", { provider_session_id: event.properties.info.id, provider: "opencode" });
  },
  "tool.execute.before": async (input, output) => post("@STATE@", { state: "busy", tool: input.tool, detail: output.args.command }),
  "tool.execute.after": async () => post("@STATE@", { state: "busy" }),
});
""",
    "omp": r"""
const post = (path, body) => fetch(`http://127.0.0.1:${process.env.LICH_PORT}${path}?token=${process.env.LICH_TOKEN}`, {
  method: "POST", headers: { "content-type": "application/json", "x-lich-plugin": "@RELEASE@" },
  body: JSON.stringify({ session_id: process.env.LICH_SESSION_ID, ...body }), signal: AbortSignal.timeout(1000),
}).catch(() => {});
export default function floor(pi) {
  pi.on("session_start", (_e, ctx) => { post("@START@", { provider_session_id: ctx.sessionManager.getSessionId(), provider: "omp" }); });
  pi.on("tool_call", (e) => { post("@STATE@", { state: "busy", tool: e.toolName, detail: e.input.command }); });
  pi.on("input", () => { post("@STATE@", { state: "busy" }); });
}
""",
}


def session(kind: str, count: int, folder: str) -> tuple:
    """(the events, the reports each makes in order: ``(contract, tool, detail)``)."""
    if kind == "opencode":
        sid = "ses_bench0000000000000000000"
        info = {"id": sid, "directory": folder, "title": "New session - 2026-01-01T00:00:00.000Z"}
        events = [{"hook": "event", "event": {"type": "session.created", "properties": {"sessionID": sid, "info": info}}}]
        expected = [("session-start", "", "")]
        for n in range(1, count):
            call = {"tool": "bash", "sessionID": sid, "callID": f"call_{n}"}
            if n % 2:
                events.append({"hook": "tool.execute.before", "input": call, "output": {"args": {"command": f"echo {n}"}}})
                expected.append(("session-state", "bash", f"echo {n}"))
            else:
                events.append({"hook": "tool.execute.after", "input": dict(call, args={}), "output": {"output": ""}})
                expected.append(("session-state", "", ""))
        return events, expected
    events = [{"on": "session_start", "event": {"type": "session_start"}}]
    expected = [("session-start", "", "")]
    for n in range(1, count):
        if n % 2:
            events.append({"on": "tool_call", "event": {"type": "tool_call", "toolName": "bash",
                                                        "input": {"command": f"echo {n}"}, "toolCallId": f"c{n}"}})
            expected.append(("session-state", "bash", f"echo {n}"))
        else:
            events.append({"on": "input", "event": {"type": "input", "text": "go on"}})
            expected.append(("session-state", "", ""))
    return events, expected


def run_once(node: str, kind: str, module: Path, work: Path, env: dict, events: list, expected: list,
             pace: float) -> dict:
    arrived: list = []
    lich = StandIn(token=TOKEN, session_id=LICH_SESSION, on_report=lambda r: arrived.append(time.time() * 1000))
    lich.start()
    until = work / "until"
    if until.exists():
        until.unlink()
    script = work / "script.json"
    script.write_text(json.dumps({"kind": kind, "module": str(module), "events": events, "pace": pace,
                                  "directory": str(work), "until": str(until), "tick": TICK, "settle": 500}))
    env = dict(env, LICH_PORT=str(lich.port), LICH_TOKEN=TOKEN, LICH_SESSION_ID=LICH_SESSION)
    proc = subprocess.Popen([node, str(work / "driver.mjs"), str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        reports = lich.wait_for(len(expected), timeout=30 + len(events) * pace / 1000)
        time.sleep(0.2)  # any report too many
        reports = list(lich.reports)
    finally:
        until.write_text("")
        out, err = proc.communicate(timeout=60)
        lich.stop()
    assert proc.returncode == 0, err.decode()
    done = json.loads(out.decode().splitlines()[-1])
    said = []
    for r in reports:
        a = r.accepted or {}
        said.append((r.contract, a.get("tool", ""), a.get("detail", "")) if r.status == 204 else ("refused", r.verdict, ""))
    latency = [a - s for s, a in zip(done["sent"], arrived)]
    return {"whole_ms": done["whole_ms"], "steady_ms": done["steady_ms"], "processes": done["kids"],
            "in_order": said == expected, "reports": len(said),
            "latency": latency, "said": said}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyz", default=str(ROOT / "dist" / "lichhook.pyz"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--node", default=shutil.which("node"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--pace-ms", type=float, default=20)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args(argv)
    if not args.node:
        print("node is not installed", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="lichhook-js-bench-"))
    try:
        home = work / "home"
        home.mkdir()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "XDG_STATE_HOME": str(home / ".state"), "PI_CODING_AGENT_DIR": str(home / "agent")}
        done = subprocess.run([args.python, args.pyz, "install", "opencode", "omp"], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        (work / "driver.mjs").write_text(DRIVER)
        modules = {("opencode", "lichhook"): home / ".config" / "opencode" / "plugin" / "lich.js",
                   ("omp", "lichhook"): home / "agent" / "extensions" / "lich.js"}
        for kind, source in FLOOR.items():
            path = work / f"floor-{kind}.mjs"
            path.write_text(source.replace("@RELEASE@", RELEASE).replace("@STATE@", session_state.PATH)
                            .replace("@START@", session_start.PATH))
            modules[(kind, "floor")] = path
        results: dict = {key: [] for key in modules}
        for _ in range(args.runs):
            for (kind, which), module in modules.items():
                events, expected = session(kind, args.events, str(work))
                results[(kind, which)].append(run_once(args.node, kind, module, work, env, events, expected,
                                                       args.pace_ms))
        rows = []
        for (kind, which), runs in results.items():
            whole = statistics.median(r["whole_ms"] for r in runs) / args.events
            steady = statistics.median(r["steady_ms"] for r in runs) / (args.events - 1)
            latencies = [x for r in runs for x in r["latency"]]
            rows.append({"harness": kind, "module": which, "cpu_ms_per_event": round(whole, 3),
                         "steady_cpu_ms_per_event": round(steady, 3),
                         "latency_ms_median": round(statistics.median(latencies), 2),
                         "latency_ms_p90": round(statistics.quantiles(latencies, n=10)[-1], 2),
                         "processes": max(r["processes"] for r in runs),
                         "all_in_order": all(r["in_order"] for r in runs),
                         "reports": [r["reports"] for r in runs]})
        for row in rows:
            floor = next(r for r in rows if r["harness"] == row["harness"] and r["module"] == "floor")
            row["cpu_vs_floor"] = round(row["cpu_ms_per_event"] / floor["cpu_ms_per_event"], 2)
            row["steady_vs_floor"] = round(row["steady_cpu_ms_per_event"] / floor["steady_cpu_ms_per_event"], 2)
        print(f"{args.events} events, one every {args.pace_ms:g} ms, {args.runs} runs, {Path(args.node).name} {node_version(args.node)}, "
              f"load {[round(x, 2) for x in os.getloadavg()]}")
        print(f"{'harness':9} {'module':9} {'CPU/event':>10} {'x floor':>8} {'after 1st':>10} {'x floor':>8} "
              f"{'to lich':>8} {'p90':>7} {'procs':>6} in order")
        for r in rows:
            print(f"{r['harness']:9} {r['module']:9} {r['cpu_ms_per_event']:>8.3f}ms {r['cpu_vs_floor']:>8.2f} "
                  f"{r['steady_cpu_ms_per_event']:>8.3f}ms {r['steady_vs_floor']:>8.2f} "
                  f"{r['latency_ms_median']:>6.2f}ms {r['latency_ms_p90']:>5.1f}ms {r['processes']:>6} "
                  f"{r['all_in_order']}")
        if args.json:
            Path(args.json).write_text(json.dumps({"events": args.events, "pace_ms": args.pace_ms, "rows": rows}, indent=1))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def node_version(node: str) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
