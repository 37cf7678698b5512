// lichhook's sub-agent cards (lichhook/js/claude/cards.js) under node's test runner: the
// mods on the fake engine and clock (tests/js/claude-fake.mjs), running the stand-in for
// lich's command line (testkit/lichcli.py) as real processes, which records every call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PYTHON, ROOT } from "./checkout.mjs";
import { LICH, fakeClaude, fakeLich, flush, json, loadMods, never } from "./claude-fake.mjs";

const mods = await loadMods();
const ENGINE = { plugin: "engine", tier: "core" };
const TASK = "Port the parser to the new AST; it's \"quoted\" $(x) ü 東";

// The stand-in lich in a folder of its own (a git checkout on `main`, the session's cwd):
// `script` is what its commands answer otherwise (testkit/lichcli.py).
function standin(script = {}) {
  const dir = mkdtempSync(join(tmpdir(), "lichhook-cards-"));
  const record = join(dir, "calls.jsonl");
  const plan = join(dir, "script.json");
  writeFileSync(plan, JSON.stringify(script));
  const install = "import sys; from pathlib import Path; from testkit import lichcli; "
    + "print(lichcli.install(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))";
  const bin = execFileSync(PYTHON, ["-c", install, join(dir, "lich bin"), record, plan], { cwd: ROOT }).toString().trim();
  execFileSync("git", ["init", "-q", "-b", "main", dir]);
  const calls = () => (existsSync(record) ? readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
  return { dir, bin, calls, argvs: () => calls().map((c) => c.argv), script: (s) => writeFileSync(plan, JSON.stringify(s)) };
}

// An interactive Claude Code session inside lich whose `$.process.run` runs real processes
// (killed, and rejected, past `timeoutMs` or `cap`), with `env` over lich's variables.
async function session({ env = {}, script = {}, interactive = true, cap, lichEnv = LICH } = {}) {
  const lich = standin(script);
  const vars = lichEnv ? { ...lichEnv, LICH_BIN: lich.bin, ...env } : { ...env };
  const claude = fakeClaude({ env: vars, lich: fakeLich({ "/mod/commands": never, "/mod/status": json({ owed: [], open: [], ready: [] }) }) });
  const pending = new Set();
  claude.toasts = [];
  claude.runs = [];
  claude.$.ui.toast = (text) => { claude.toasts.push(text); };
  claude.$.fs.exists = async (path) => existsSync(path);
  claude.$.process.run = (argv, init = {}) => {
    claude.runs.push({ argv, init });
    const ran = new Promise((resolve, reject) => {
      const options = { env: { ...process.env, ...vars }, cwd: init.cwd || lich.dir, timeout: Math.min(init.timeoutMs || 30000, cap || Infinity), encoding: "utf8" };
      execFile(argv[0], argv.slice(1), options, (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") reject(new Error(`${argv[0]} did not finish: ${error.signal || error.code}`));
        else resolve({ exitCode: error ? error.code : 0, stdout, stderr });
      });
    });
    pending.add(ran);
    ran.finally(() => pending.delete(ran)).catch(() => undefined);
    return ran;
  };
  claude.settle = async () => {
    while (pending.size) await Promise.allSettled([...pending]);
    await flush();
  };
  claude.register(mods);
  await claude.fire("session.start", { cwd: lich.dir, surface: interactive ? "terminal" : null, isInteractive: interactive });
  return { claude, lich };
}

// The model calls `tool` as Claude Code raises it at `tool.call`: this plugin's hook with
// `next` (Claude Code's own tool, recorded), then its `.catch` if the hook threw.
async function call(claude, tool, input, { origin = ENGINE, signal = new AbortController().signal, id = "toolu_01ABcd9f" } = {}) {
  const e = { tool, tool_use_id: id, ...input };
  const native = [];
  const next = async (x) => { native.push(x); return { result: { native: true }, text: "native" }; };
  next.origin = origin;
  next.signal = signal;
  const hook = claude.hooks.find((h) => h.event === "tool.call" && h.matcher.tool === tool);
  let answer;
  try {
    answer = await hook.hook(claude.$, e, next);
  } catch (error) {
    answer = hook.caught ? await hook.caught(claude.$, e, next) : Promise.reject(error);
  }
  await claude.settle();
  return { answer, native };
}

const agent = (extra = {}) => ({ description: "port the parser", prompt: TASK, subagent_type: "general-purpose", ...extra });
const opens = (lich) => lich.argvs().filter((a) => a[0] === "open");

test("an Agent call becomes a lich sub-agent session, answered at once as launched", async () => {
  const { claude, lich } = await session();
  const { answer, native } = await call(claude, "Agent", agent());
  assert.deepEqual(lich.argvs(), [["open", "--kind", "claude", "--subagent", "--prompt", TASK, "--json"]]);
  assert.equal(lich.calls()[0].env.LICH_SESSION_ID, LICH.LICH_SESSION_ID);
  assert.equal(native.length, 0);
  assert.deepEqual(answer.result, { status: "async_launched", agentId: "w1", description: "port the parser", prompt: TASK,
    outputFile: "", canReadOutputFile: false, canContinueAgent: false });
  assert.match(answer.context[0], /lich session "Session 4" \(it also answers to "session-4-w1"\)/);
  assert.match(answer.context[0], /wait_for_answer/);
  assert.equal(await claude.footer(), "lich: 1 worker");
  assert.equal(claude.runs[0].init.timeoutMs, 120000);
});

test("isolation asks a worktree off the current branch; model and effort go along", async () => {
  const { claude, lich } = await session();
  const { answer } = await call(claude, "Agent", agent({ isolation: "worktree", model: "opus", effort: "high", description: "Port the parser, now!" }));
  assert.deepEqual(opens(lich), [["open", "--kind", "claude", "--subagent", "--worktree", "subagent/port-the-parser-now-cd9f",
    "--base", "main", "--model", "opus", "--effort", "high", "--prompt", TASK, "--json"]]);
  assert.deepEqual(claude.runs[0].argv, ["git", "branch", "--show-current"]);
  assert.equal(claude.runs[0].init.timeoutMs, 10000);
  assert.equal(answer.result.status, "async_launched");
});

test("a worker whose turn ended unanswered (paused on a background command) comes back backgrounded, not finished (lich-plugin 0.15.1)", async () => {
  const { claude } = await session({ script: { open: { status: "unanswered" } } });
  const { answer, native } = await call(claude, "Agent", agent());
  assert.equal(native.length, 0);
  assert.equal(answer.result.status, "async_launched");
  assert.match(answer.context[0], /Its report comes back to this prompt on its own/);
  assert.equal(await claude.footer(), "lich: 1 worker", "it is still counted as running");
});

test("a report lich already has answers as the completed agent", async () => {
  const { claude } = await session({ script: { open: { status: "answered", answer: "Parser ported; 41 tests pass." } } });
  const { answer, native } = await call(claude, "Agent", agent({ isolation: "worktree" }));
  assert.equal(native.length, 0);
  assert.equal(answer.result.status, "completed");
  assert.deepEqual(answer.result.content, [{ type: "text", text: "Parser ported; 41 tests pass." }]);
  assert.equal(answer.result.worktreeBranch, "subagent/port-the-parser-cd9f");
  assert.equal(answer.result.worktreePath, "/wt/subagent/port-the-parser-cd9f");
  assert.equal(claude.redraws(), 0, "nothing runs, so the footer counts nothing");
});

test("TaskStop closes a worker in this checkout and stops the turn of one on its own worktree, which keeps its card; another id is Claude Code's", async () => {
  const { claude, lich } = await session();
  const timers = claude.liveTimers();
  const shared = (await call(claude, "Agent", agent(), { id: "toolu_1" })).answer.result.agentId;
  const isolated = (await call(claude, "Agent", agent({ isolation: "worktree" }), { id: "toolu_2" })).answer.result.agentId;
  assert.equal(await claude.footer(), "lich: 2 workers");
  const other = await call(claude, "TaskStop", { task_id: "b7x1" });
  assert.equal(other.native.length, 1);
  const stopped = await call(claude, "TaskStop", { task_id: shared });
  assert.deepEqual(stopped.answer.result, { message: 'Closed the lich session "Session 4".', task_id: "w1", task_type: "local_agent", command: "port the parser" });
  assert.equal(stopped.native.length, 0);
  const kept = await call(claude, "TaskStop", { shell_id: isolated });
  assert.equal(kept.native.length, 0);
  assert.deepEqual(kept.answer.result, { message: 'Stopped the turn of the lich session "subagent/port-the-parser-olu2"; its card and worktree stay.', task_id: "w2", task_type: "local_agent", command: "port the parser" });
  assert.deepEqual(lich.argvs().filter((a) => a[0] === "close" || a[0] === "control"), [["close", "--", "session-4-w1"], ["control", "--", "subagent-port-the-parser-olu2-w2", "abort"]]);
  assert.equal(await claude.footer(), undefined);
  assert.equal(claude.liveTimers(), timers, "the workers' count stopped");
  assert.equal(claude.runs.at(-1).init.timeoutMs, 10000);
});

test("while lich lists errands the footer leaves the worker count out: they count the workers (lich-plugin 0.18.0)", async () => {
  const { claude } = await session();
  await call(claude, "Agent", agent());
  assert.equal(await claude.footer(), "lich: 1 worker");
  claude.lich.routes["/mod/status"] = json({ owed: [], open: [{ ticket: "t", target: "Session 4", state: "busy" }], ready: [] });
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), "lich: 1 task out");
  claude.lich.routes["/mod/status"] = json({ owed: [], open: [], ready: [] });
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), "lich: 1 worker");
});

test("a TaskStop lich refuses is an error answer, and the worker stays counted", async () => {
  const { claude, lich } = await session();
  const id = (await call(claude, "Agent", agent())).answer.result.agentId;
  lich.script({ close: { stderr: "lich: no lich is running\n", exit: 1 } });
  const { answer, native } = await call(claude, "TaskStop", { task_id: id });
  assert.deepEqual(answer, { deny: 'lich could not close the session "Session 4": lich: no lich is running' });
  assert.equal(native.length, 0);
  assert.equal(await claude.footer(), "lich: 1 worker");
});

test("the footer counts workers until lich no longer lists them, then stops reading", async () => {
  const { claude, lich } = await session();
  await call(claude, "Agent", agent(), { id: "toolu_1" });
  await call(claude, "Agent", agent({ isolation: "worktree" }), { id: "toolu_2" });
  const timers = claude.liveTimers();
  await claude.advance(5000);
  await claude.settle();
  assert.deepEqual(lich.argvs().at(-1), ["sessions", "--json"]);
  assert.equal(await claude.footer(), "lich: 2 workers");
  execFileSync(lich.bin, ["close", "session-4-w1"], { env: { ...process.env, ...LICH } }); // the shared one closed itself
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), "lich: 1 worker");
  execFileSync(lich.bin, ["close", "--worktree", "keep", "subagent-port-the-parser-olu2-w2"], { env: { ...process.env, ...LICH } });
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), undefined);
  assert.equal(claude.liveTimers(), timers - 1);
  const reads = lich.argvs().filter((a) => a[0] === "sessions").length;
  await claude.advance(60000);
  await claude.settle();
  assert.equal(lich.argvs().filter((a) => a[0] === "sessions").length, reads);
});

test("a count lich cannot answer, or answers with no list, changes nothing", async () => {
  const { claude, lich } = await session();
  await call(claude, "Agent", agent());
  for (const sessions of [{ stderr: "lich: no lich is running\n", exit: 1 }, { stdout: "not json\n" }, { stdout: "{}\n" }]) {
    lich.script({ sessions });
    await claude.advance(5000);
    await claude.settle();
    assert.equal(await claude.footer(), "lich: 1 worker", JSON.stringify(sessions));
  }
  lich.script({});
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), "lich: 1 worker", "still listed by lich");
});

test("a worker on its own worktree is over once listed done at two reads in a row", async () => {
  const { claude, lich } = await session();
  await call(claude, "Agent", agent({ isolation: "worktree" }));
  const state = `${join(lich.dir, "calls.jsonl")}.sessions`;
  const opened = JSON.parse(readFileSync(state, "utf8"));
  writeFileSync(state, JSON.stringify([{ ...opened[0], state: "done" }]));
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), "lich: 1 worker");
  await claude.advance(5000);
  await claude.settle();
  assert.equal(await claude.footer(), undefined);
});

test("every case lich's contract leaves to Claude Code runs its own sub-agent, without a call to lich", async () => {
  const cases = [
    ["a typed sub-agent", {}, agent({ subagent_type: "Explore" }), {}],
    ["a teammate", {}, agent({ team_name: "core", name: "scout" }), {}],
    ["remote isolation", {}, agent({ isolation: "remote" }), {}],
    ["cards off (lich's setting)", { LICH_SUBAGENT_CARDS: "off" }, agent(), {}],
    ["lich's depth limit", { LICH_SUBAGENT_DEPTH: "2" }, agent(), {}],
    ["a depth lich never writes", { LICH_SUBAGENT_DEPTH: "1; x" }, agent(), {}],
    ["a depth-1 worker whose lich keeps its sub-agents native", { LICH_SUBAGENT_DEPTH: "1", LICH_SUBAGENT_CARDS: "off" }, agent(), {}],
    ["no LICH_BIN", { LICH_BIN: "" }, agent(), {}],
    ["a LICH_BIN that is not there", { LICH_BIN: "/nonexistent/lich" }, agent(), {}],
    ["a sub-agent's own call", {}, agent({ agentId: "a-1" }), {}],
    ["another plugin's call", {}, agent(), { origin: { plugin: "other", tier: "user" } }],
  ];
  for (const [why, env, input, how] of cases) {
    const { claude, lich } = await session({ env });
    const { answer, native } = await call(claude, "Agent", input, how);
    assert.equal(native.length, 1, why);
    assert.deepEqual(native[0], { tool: "Agent", tool_use_id: "toolu_01ABcd9f", ...input }, why);
    assert.equal(answer.text, "native", why);
    assert.deepEqual(lich.calls(), [], why);
    assert.deepEqual(claude.toasts, [], why);
  }
});

test("headless, and outside lich, nothing of lich runs and TaskStop is Claude Code's", async () => {
  for (const options of [{ interactive: false }, { lichEnv: null, env: {} }]) {
    const { claude, lich } = await session(options);
    const { native } = await call(claude, "Agent", agent());
    assert.equal(native.length, 1);
    assert.equal((await call(claude, "TaskStop", { task_id: "w1" })).native.length, 1);
    assert.deepEqual(lich.calls(), []);
    assert.equal(claude.liveTimers(), 0);
  }
});

test("the catch-all sub-agent, by either of Claude Code's names or by none, becomes a card", async () => {
  for (const type of ["general-purpose", "claude", undefined, ""]) {
    const { claude, lich } = await session();
    const { answer } = await call(claude, "Agent", agent({ subagent_type: type }));
    assert.equal(answer.result.status, "async_launched", String(type));
    assert.equal(opens(lich).length, 1);
  }
});

test("a worker one level down opens cards of its own (nesting by depth, lich-plugin 0.19.0)", async () => {
  const { claude, lich } = await session({ env: { LICH_SUBAGENT_DEPTH: "1" } });
  const { answer } = await call(claude, "Agent", agent());
  assert.equal(answer.result.status, "async_launched");
  assert.equal(opens(lich).length, 1);
});

test("a task over lich's 8192 bytes runs natively and says so; one at the limit is a card", async () => {
  const { claude, lich } = await session();
  const over = "é".repeat(4096) + "x"; // 8193 bytes in 4097 characters
  const { native } = await call(claude, "Agent", agent({ prompt: over }));
  assert.equal(native.length, 1);
  assert.deepEqual(lich.calls(), []);
  assert.deepEqual(claude.toasts, ['lich: "port the parser" runs as a Claude Code sub-agent: its task is 8193 bytes, over lich\'s 8192']);
  const { answer } = await call(claude, "Agent", agent({ prompt: "é".repeat(4096) }));
  assert.equal(answer.result.status, "async_launched");
});

test("lich's command line failing before it took the task runs the native agent, with a toast", async () => {
  const { claude, lich } = await session({ script: { open: { fail: "before" } } });
  const { native } = await call(claude, "Agent", agent());
  assert.equal(native.length, 1);
  assert.equal(opens(lich).length, 1);
  assert.deepEqual(claude.toasts, ['lich: "port the parser" runs as a Claude Code sub-agent: lich: reach lich: connection refused']);
  assert.equal(claude.redraws(), 0, "no worker is counted");
});

test("a lich without open --subagent runs the native agent, and is not asked again", async () => {
  const { claude, lich } = await session({ script: { open: { stderr: "lich: flag provided but not defined: -subagent\n", exit: 1 } } });
  assert.equal((await call(claude, "Agent", agent())).native.length, 1);
  assert.equal((await call(claude, "Agent", agent(), { id: "toolu_2" })).native.length, 1);
  assert.equal(opens(lich).length, 1);
  assert.equal(claude.toasts.length, 1);
});

test("every failure after lich took the task is refused, never run twice", async () => {
  const cases = [
    [{ open: { fail: "after" } }, /lich may already hold its task in the session "Session 4" \(lich: the task did not reach "Session 4"/],
    [{ open: { status: "unread" } }, /in the session "Session 4" \(delivery unread\)/],
    [{ open: { status: "undelivered" } }, /\(delivery undelivered\)/],
    [{ open: { stdout: "not json\n" } }, /lich's answer could not be read/],
    [{ open: { stdout: '{"id":"w1","label":"x"}\n' } }, /lich's answer could not be read/],
  ];
  for (const [script, why] of cases) {
    const { claude, lich } = await session({ script });
    const { answer, native } = await call(claude, "Agent", agent());
    assert.equal(native.length, 0, JSON.stringify(script));
    assert.match(answer.deny, why);
    assert.match(answer.deny, /could do the work twice/);
    assert.equal(opens(lich).length, 1);
  }
});

test("an open that outlasts its bound is refused, never run natively", async () => {
  const { claude, lich } = await session({ script: { open: { sleep: 5 } }, cap: 300 });
  const { answer, native } = await call(claude, "Agent", agent());
  assert.equal(native.length, 0);
  assert.match(answer.deny, /lich may already hold its task \(.*lich did not finish: SIGTERM\)/);
  assert.equal(claude.runs[0].init.timeoutMs, 120000);
  assert.equal(opens(lich).length, 1);
});

test("a failure before lich took the task, once the person stopped the turn, starts nothing", async () => {
  const { claude } = await session({ script: { open: { fail: "before" } } });
  const stop = new AbortController();
  stop.abort();
  const { answer, native } = await call(claude, "Agent", agent(), { signal: stop.signal });
  assert.equal(native.length, 0);
  assert.match(answer.deny, /turn was stopped/);
});

test("the mod failing after the open began refuses the call instead of the native agent", async () => {
  const { claude, lich } = await session();
  claude.$.ui.invalidate = (event) => { if (event === "ui.render") throw new Error("the footer broke"); };
  const { answer, native } = await call(claude, "Agent", agent());
  assert.equal(native.length, 0);
  assert.match(answer.deny, /could do the work twice/);
  assert.equal(opens(lich).length, 1);
});

test("at the session's end the count stops: no timer left, nothing more run", async () => {
  const { claude, lich } = await session();
  await call(claude, "Agent", agent());
  await claude.fire("session.end", { reason: "prompt_input_exit" });
  const before = lich.calls().length;
  await claude.advance(60000);
  await claude.settle();
  assert.equal(claude.liveTimers(), 0);
  assert.equal(lich.calls().length, before);
});

test("a session that ends and starts again counts its new workers", async () => {
  const { claude, lich } = await session();
  await call(claude, "Agent", agent(), { id: "toolu_1" });
  await claude.fire("session.end", { reason: "other" });
  await claude.fire("session.start", { cwd: lich.dir, surface: "terminal", isInteractive: true });
  await call(claude, "Agent", agent(), { id: "toolu_2" });
  const reads = lich.argvs().filter((a) => a[0] === "sessions").length;
  await claude.advance(5000);
  await claude.settle();
  assert.equal(lich.argvs().filter((a) => a[0] === "sessions").length, reads + 1);
});

test("the launch note and the footer read in the prompt language", async () => {
  const { claude } = await session({ env: { LICH_PROMPT_LANG: "pt-BR" } });
  const { answer } = await call(claude, "Agent", agent());
  assert.match(answer.context[0], /^Este agente roda como a sessão do lich "Session 4"/);
  assert.equal(await claude.footer(), "lich: 1 subagente");
});
