// lichhook's Claude Code mods (lichhook/js/claude) under node's test runner, on a fake
// clock against a fake lich (tests/js/claude-fake.mjs): lich's contracts, docs/hooks/
// mod-control.md, mod-usage.md, mod-status.md, mod-answer.md and session-state.md.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LICH, RELEASE, fakeClaude, fakeLich, flush, json, loadMods, never } from "./claude-fake.mjs";

const mods = await loadMods();

// A Claude Code session started interactively inside lich, whose lich hands `polls` to
// /mod/commands one answer at a time and then holds every later poll.
async function session({ polls = [], routes = {}, env, ...options } = {}) {
  const queue = [...polls];
  const lich = fakeLich({ "/mod/commands": () => (queue.length ? queue.shift() : never()), "/mod/status": json({ owed: [], open: [], ready: [] }), ...routes });
  const claude = fakeClaude({ lich, env, ...options });
  claude.register(mods);
  await claude.fire("session.start", { cwd: "/w", surface: "terminal", isInteractive: true });
  await claude.advance(0);
  return claude;
}

// The next poll (after the one lich holds, given up at 30 s, and 1 s of back-off) brings `list`.
async function deliver(claude, list) {
  let given = false;
  claude.lich.routes["/mod/commands"] = () => (given ? never() : ((given = true), json(list)));
  await claude.advance(32000);
}

const acks = (claude) => claude.lich.to("/mod/acks").map((r) => r.body);
const polls = (claude) => claude.lich.to("/mod/commands");

test("outside lich the mods send nothing and leave no timer", async () => {
  for (const env of [{}, { ...LICH, LICH_PORT: "" }, { ...LICH, LICH_TOKEN: undefined }, { ...LICH, LICH_PORT: "80; rm" },
    { ...LICH, LICH_PORT: "0" }, { ...LICH, LICH_TOKEN: "  " }, { ...LICH, LICH_SESSION_ID: "\t" }]) {
    const claude = await session({ env });
    await claude.fire("session.measure", { context: { window: 200000, tokens: 5, percent: 0 }, rateLimits: [], changed: ["context"] });
    await claude.advance(60000);
    assert.equal(claude.lich.requests.length, 0);
    assert.equal(claude.liveTimers(), 0);
  }
});

test("a non-interactive run (claude -p) stays silent", async () => {
  const lich = fakeLich({ "/mod/commands": json([{ id: "m1", kind: "prompt", text: "hi" }]) });
  const claude = fakeClaude({ lich });
  claude.register(mods);
  await claude.fire("session.start", { cwd: "/w", surface: null, isInteractive: false });
  await claude.fire("session.measure", { context: { window: 200000 }, rateLimits: [], changed: ["context"] });
  await claude.advance(60000);
  assert.equal(lich.requests.length, 0);
  assert.equal(claude.seen.submits.length, 0);
});

test("the poll asks lich for this session's commands with the contract release", async () => {
  const claude = await session();
  const [poll] = polls(claude);
  assert.equal(poll.method, "GET");
  assert.equal(poll.url, "http://127.0.0.1:4567/mod/commands?token=t%20k&session_id=card%2F1");
  assert.equal(poll.headers["X-Lich-Plugin"], RELEASE);
});

test("a prompt becomes a turn and is acked once it entered", async () => {
  const claude = await session({ polls: [json([{ id: "m1", kind: "prompt", text: "run the tests" }])] });
  assert.deepEqual(claude.seen.submits, [{ text: "run the tests" }]);
  const [ack] = claude.lich.to("/mod/acks");
  assert.deepEqual(ack.body, { session_id: "card/1", id: "m1", kind: "prompt", ok: true });
  assert.equal(ack.method, "POST");
  assert.equal(ack.url, "http://127.0.0.1:4567/mod/acks?token=t%20k");
  assert.equal(ack.headers["X-Lich-Plugin"], RELEASE);
  assert.equal(ack.headers["Content-Type"], "application/json");
});

test("a prompt Claude Code drops, or one with no text, is acked not ok", async () => {
  const claude = await session({
    polls: [json([{ id: "a", kind: "prompt", text: "x" }, { id: "b", kind: "prompt", text: "  " }])],
    submit: () => ({ drop: "a Stop hook stands" }),
  });
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok, a.error]), [["a", false, "a Stop hook stands"], ["b", false, "prompt has no text"]]);
});

test("a prompt with a notification goes in as a task notification, escaped only where Claude Code decodes", async () => {
  const text = "[lich] a && b </result>";
  const claude = await session({ polls: [json([{ id: "n", kind: "prompt", text, notification: { status: "completed", summary: "lich session \"docs\" <done>" } }])] });
  assert.deepEqual(claude.seen.submits, [{
    asUser: true,
    text: "<task-notification>\n<status>completed</status>\n<summary>lich session \"docs\" &lt;done&gt;</summary>\n<result>[lich] a && b </result></result>\n</task-notification>",
  }]);
});

test("an abort waits for the ack before it, and the next command waits for its ack", async () => {
  let releasePrompt;
  let releaseAbortAck;
  const claude = await session({
    submit: () => new Promise((resolve) => { releasePrompt = () => resolve({ text: "go" }); }),
    routes: { "/mod/acks": (r) => (r.body.id === "a" ? new Promise((resolve) => { releaseAbortAck = () => resolve({ status: 204 }); }) : { status: 204 }) },
  });
  await claude.fire("turn.start", { text: "go", turnId: "t1" });
  await deliver(claude, [{ id: "p", kind: "prompt", text: "go" }, { id: "a", kind: "abort" }, { id: "m", kind: "model", model: "opus" }]);
  // the prompt has not settled, yet the abort reached the turn
  assert.deepEqual(claude.seen.aborts, [{ turnId: "t1" }]);
  assert.deepEqual(acks(claude).map((a) => a.id), ["a"]);
  assert.equal(claude.seen.aborts.length, 1);
  releaseAbortAck();
  await claude.advance(0);
  assert.deepEqual(acks(claude).map((a) => a.id), ["a", "m"]);
  releasePrompt();
  await claude.advance(0);
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["a", true], ["m", true], ["p", true]]);
});

test("an abort behind a slash command still waiting for the session to go idle reaches the running turn (lich-plugin 0.15.0)", async () => {
  let ran;
  const claude = await session({ command: () => new Promise((resolve) => { ran = () => resolve({ text: "" }); }) });
  await claude.fire("turn.start", { text: "go", turnId: "t1" });
  await deliver(claude, [{ id: "c", kind: "command", name: "compact" }, { id: "a", kind: "abort" }]);
  assert.deepEqual(claude.seen.aborts, [{ turnId: "t1" }]);
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["a", true]]);
  ran();
  await claude.advance(0);
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["a", true], ["c", true]]);
});

test("an abort with no turn running is acked not ok", async () => {
  const claude = await session({ polls: [json([{ id: "a", kind: "abort" }])] });
  assert.equal(claude.seen.aborts.length, 0);
  assert.deepEqual(acks(claude)[0], { session_id: "card/1", id: "a", kind: "abort", ok: false, error: "no turn is running" });
});

test("a finished turn leaves nothing to abort; a sub-agent's turn is not the session's", async () => {
  const claude = await session();
  await claude.fire("turn.start", { text: "x", turnId: "t1" });
  await claude.fire("turn.start", { text: "y", turnId: "sub", agentId: "ag" });
  await claude.fire("turn.complete", { turnId: "sub", agentId: "ag", reason: "answer", answer: "", isAborted: false });
  await deliver(claude, [{ id: "a", kind: "abort" }]);
  assert.deepEqual(claude.seen.aborts, [{ turnId: "t1" }]);
  await claude.fire("turn.complete", { turnId: "t1", reason: "answer", answer: "", isAborted: false });
  await deliver(claude, [{ id: "b", kind: "abort" }]);
  assert.equal(acks(claude).find((a) => a.id === "b").ok, false);
});

test("model and effort override every main-loop request until dropped", async () => {
  const claude = await session({ polls: [json([{ id: "1", kind: "model", model: "claude-opus-4-1" }, { id: "2", kind: "effort", effort: "high" }])] });
  const e = { turnId: "t", index: 0, model: "claude-sonnet", effort: "medium", messageCount: 1 };
  assert.deepEqual(await claude.step(e), { ...e, model: "claude-opus-4-1", effort: "high" });
  assert.deepEqual(await claude.step({ ...e, agentId: "sub" }), { ...e, agentId: "sub" });
  await deliver(claude, [{ id: "3", kind: "model" }, { id: "4", kind: "effort" }]);
  assert.deepEqual(await claude.step(e), e);
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["1", true], ["2", true], ["3", true], ["4", true]]);
});

test("an effort outside lich's five levels is refused and changes nothing", async () => {
  const claude = await session({ polls: [json([{ id: "1", kind: "effort", effort: "max" }, { id: "2", kind: "effort", effort: "ultra" }, { id: "3", kind: "model", model: 7 }])] });
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok, a.error]), [
    ["1", true, undefined], ["2", false, "effort must be one of low, medium, high, xhigh, max"], ["3", false, "model must be a model name"]]);
  assert.equal((await claude.step({ turnId: "t", index: 0, model: "m", messageCount: 1 })).effort, "max");
});

test("a command runs Claude Code's slash command; /model and /effort are refused; an error is cut to 120 characters", async () => {
  const claude = await session({
    polls: [json([{ id: "1", kind: "command", name: "/compact", args: "keep the plan" }, { id: "2", kind: "command", name: "Model" }, { id: "3", kind: "command", name: "nope" }])],
    command: (args) => { if (args.command === "nope") throw new Error(`Unknown command: /nope ${"x".repeat(300)}\nmore`); return { text: "" }; },
  });
  assert.deepEqual(claude.seen.commands, [{ command: "compact", args: "keep the plan" }, { command: "nope", args: "" }]);
  const [one, two, three] = acks(claude);
  assert.deepEqual([one.ok, two.ok, three.ok], [true, false, false]);
  assert.match(two.error, /model/);
  assert.equal(three.error.length, 120);
  assert.ok(three.error.startsWith("Unknown command: /nope x"));
});

test("an unknown kind is acked not ok, so a newer lich is told", async () => {
  const claude = await session({ polls: [json([{ id: "z", kind: "teleport", where: "mars" }, { kind: "prompt", text: "no id" }, "junk", null])] });
  assert.deepEqual(acks(claude), [{ session_id: "card/1", id: "z", kind: "teleport", ok: false, error: "unknown kind" }]);
  assert.equal(claude.seen.submits.length, 0);
});

test("an ask is answered from a fork, outside the order, its answer cut at 16,000 units", async () => {
  let releaseAbortAck;
  const long = "é".repeat(15999) + "😀" + "tail";
  const claude = await session({
    polls: [json([{ id: "a", kind: "abort" }, { id: "q", kind: "ask", question: "what are you doing?" }])],
    fork: () => ({ isAnswered: true, text: long, usage: {} }),
    routes: { "/mod/acks": (r) => (r.body.id === "a" ? new Promise((resolve) => { releaseAbortAck = () => resolve({ status: 204 }); }) : { status: 204 }) },
  });
  const [ask] = acks(claude).filter((a) => a.id === "q");
  assert.ok(ask, "the ask was acked while the abort's ack was still out");
  assert.equal(ask.ok, true);
  assert.equal(ask.answer, "é".repeat(15999) + "\n[truncated]"); // never half a surrogate pair
  assert.match(claude.seen.forks[0].prompt, /side question[\s\S]*\n\nwhat are you doing\?$/);
  releaseAbortAck();
});

test("an ask with no answer carries the fork's reason", async () => {
  const results = [{ isAnswered: false, reason: "api-error", status: 529, error: "overloaded" }, { isAnswered: false, reason: "nothing-to-fork" }];
  const claude = await session({
    polls: [json([{ id: "1", kind: "ask", question: "a" }, { id: "2", kind: "ask", question: "b" }, { id: "3", kind: "ask", question: "" }])],
    fork: () => results.shift(),
  });
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok, a.error]).sort(), [
    ["1", false, "api-error 529 overloaded"], ["2", false, "nothing-to-fork"], ["3", false, "ask has no question"]]);
});

test("an ask's answer full of escaped characters still fits lich's 64 KiB", async () => {
  const claude = await session({ polls: [json([{ id: "q", kind: "ask", question: "a" }])], fork: () => ({ isAnswered: true, text: "\u0001".repeat(16000), usage: {} }) });
  const [ack] = acks(claude);
  assert.ok(new TextEncoder().encode(JSON.stringify(ack)).length <= 65536);
  assert.ok(ack.answer.length > 1000);
});

test("every command is applied and acked once", async () => {
  const list = [{ id: "1", kind: "prompt", text: "a" }, { id: "2", kind: "model", model: "m" }, { id: "3", kind: "prompt", text: "b" }];
  const claude = await session({ polls: [json(list)] });
  await claude.advance(120000);
  assert.deepEqual(claude.seen.submits.map((x) => x.text), ["a", "b"]);
  assert.deepEqual(acks(claude).map((a) => a.id).sort(), ["1", "2", "3"]);
});

test("lich down or failing: the poll backs off 1 s doubling to 10 s, and a 200 resets it", async () => {
  const answers = [new Error("ECONNREFUSED"), json({}, 500), json({}, 503), json({}, 401), { status: 200, text: "<html>" }, json({}, 502), json({}, 500), json([]), new Error("down")];
  const at = [];
  const lich = fakeLich({ "/mod/commands": () => { at.push(claude.clock.now); return answers.length ? answers.shift() : never(); } });
  const claude = fakeClaude({ lich });
  claude.register(mods);
  await claude.fire("session.start", { isInteractive: true });
  await claude.advance(60000);
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  assert.deepEqual(gaps.slice(0, 9), [1000, 2000, 4000, 8000, 10000, 10000, 10000, 1000, 1000]);
});

test("a 404 stops the poll for the rest of the session", async () => {
  const claude = await session({ polls: [json({}, 404)] });
  await claude.advance(600000);
  assert.equal(polls(claude).length, 1);
  assert.equal(claude.liveTimers(), 1); // the status read's own interval, no poll
});

test("a lich that answers at once with nothing is polled at most once a second", async () => {
  const claude = await session({ routes: { "/mod/commands": json([]) } });
  await claude.advance(10000);
  assert.ok(polls(claude).length <= 11, `${polls(claude).length} polls in 10 s`);
});

test("a lich that never answers is polled again after 30 s, never sooner", async () => {
  const claude = await session();
  await claude.advance(29000);
  assert.equal(polls(claude).length, 1);
  await claude.advance(90000);
  assert.ok(polls(claude).length <= 4);
});

test("at the session's end no timer is left and nothing more is sent", async () => {
  const claude = await session({ polls: [json([])] });
  await claude.fire("session.end", { reason: "prompt_input_exit" });
  const sent = claude.lich.requests.length;
  await claude.advance(600000);
  assert.equal(claude.liveTimers(), 0);
  assert.equal(claude.lich.requests.length, sent);
});

test("commands a poll brings after the session ended are not applied", async () => {
  let answer;
  const claude = await session({ routes: { "/mod/commands": () => new Promise((resolve) => { answer = resolve; }) } });
  await claude.fire("session.end", { reason: "other" });
  answer(json([{ id: "1", kind: "prompt", text: "late" }]));
  await claude.advance(1000);
  assert.equal(claude.seen.submits.length, 0);
  assert.equal(claude.liveTimers(), 0);
});

test("a /clear or /resume ends the conversation, not the session: the mods go on and the /clear is acked", async () => {
  for (const reason of ["clear", "resume"]) {
    let cleared;
    const claude = await session({ command: () => new Promise((resolve) => { cleared = resolve; }) });
    await deliver(claude, [{ id: "c", kind: "command", name: reason }]);
    await claude.fire("session.end", { reason });
    cleared({ text: "" });
    await deliver(claude, [{ id: "p", kind: "prompt", text: "after" }]);
    assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["c", true], ["p", true]]);
    assert.ok(claude.lich.to("/mod/status").length >= 7, "the status reads stopped");
  }
});

test("a session that ends and starts again runs one poll loop", async () => {
  let cleared;
  const claude = await session({ command: () => new Promise((resolve) => { cleared = resolve; }) });
  await deliver(claude, [{ id: "c", kind: "command", name: "clear" }]);
  await claude.fire("session.end", { reason: "other" });
  claude.lich.routes["/mod/commands"] = json([]);
  const before = polls(claude).length;
  await claude.fire("session.start", { isInteractive: true });
  cleared({ text: "" });
  await claude.advance(0);
  assert.deepEqual(acks(claude).map((a) => [a.id, a.ok]), [["c", true]]); // in flight at the end
  await claude.advance(10000);
  assert.ok(polls(claude).length - before <= 11, `${polls(claude).length - before} polls in 10 s: more than one loop`);
  assert.ok(polls(claude).length - before >= 9, "the loop did not start again");
});

// -- usage ---------------------------------------------------------------------------------

const measure = (extra = {}) => ({ context: { window: 200000, tokens: 43592, percent: 22 }, rateLimits: [], cost: { usd: 0.0977631 }, changed: ["context"], ...extra });

test("usage carries Claude Code's own figures, absent ones left out", async () => {
  const claude = await session();
  await claude.fire("session.measure", measure({ rateLimits: [{ kind: "five_hour", percentUsed: 14.5, resetsAt: "2026-10-05T00:30:00.000Z" }, { kind: "seven_day", percentUsed: 80 }] }));
  await claude.fire("session.measure", { context: { window: 1000000 }, rateLimits: [], changed: ["context"] });
  await claude.fire("session.measure", { context: { tokens: 5 }, rateLimits: [], changed: ["context"] });
  const sent = claude.lich.to("/mod/usage");
  assert.deepEqual(sent.map((r) => r.body), [
    { session_id: "card/1", conversation_id: "conv-1", context: { window: 200000, tokens: 43592, percent: 22 },
      rate_limits: [{ kind: "five_hour", percent_used: 14.5, resets_at: "2026-10-05T00:30:00.000Z" }, { kind: "seven_day", percent_used: 80 }], cost_usd: 0.0977631 },
    { session_id: "card/1", conversation_id: "conv-1", context: { window: 1000000 }, rate_limits: [] },
  ]);
  assert.equal(sent[0].headers["X-Lich-Plugin"], RELEASE);
  assert.equal(sent[0].url, "http://127.0.0.1:4567/mod/usage?token=t%20k");
});

test("usage reports go one at a time, in order, and a slow one is given up at 5 s", async () => {
  const claude = await session({ routes: { "/mod/usage": (r) => (r.body.context.tokens === 1 ? never() : { status: 204 }) } });
  for (const tokens of [1, 2, 3]) await claude.fire("session.measure", measure({ context: { window: 100, tokens } }));
  assert.deepEqual(claude.lich.to("/mod/usage").map((r) => r.body.context.tokens), [1]);
  await claude.advance(5000);
  assert.deepEqual(claude.lich.to("/mod/usage").map((r) => r.body.context.tokens), [1, 2, 3]);
});

test("a 404 stops usage reports; a 500 drops one and goes on", async () => {
  const answers = [json({}, 500), json({}, 404)];
  const claude = await session({ routes: { "/mod/usage": () => answers.shift() || { status: 204 } } });
  for (let i = 0; i < 4; i++) await claude.fire("session.measure", measure());
  await claude.advance(1000);
  assert.equal(claude.lich.to("/mod/usage").length, 2);
});

// -- status --------------------------------------------------------------------------------

test("the footer shows lich's errands every 5 s and nothing when a read fails", async () => {
  const answers = [
    json({ owed: [{ ticket: "b1", from: "Session 26", asked: "x" }], open: [{ ticket: "4", target: "docs", state: "busy" }, { ticket: "9", target: "t", state: "waiting" }], ready: [{ ticket: "c", target: "r", status: "answered" }] }),
    json({ owed: [], open: [], ready: [] }, 500),
    json({ owed: [], open: [{ ticket: "4", target: "docs", state: "busy" }], ready: [] }),
  ];
  const claude = await session({ routes: { "/mod/status": () => answers.shift() || json({ owed: [], open: [], ready: [] }) } });
  assert.equal(await claude.footer(), 'lich: owes "Session 26" an answer, 2 tasks out (1 waiting), 1 answer to collect');
  const [read] = claude.lich.to("/mod/status");
  assert.equal(read.url, "http://127.0.0.1:4567/mod/status?token=t%20k&session_id=card%2F1");
  assert.equal(read.headers["X-Lich-Plugin"], RELEASE);
  await claude.advance(5000);
  assert.equal(await claude.footer(), undefined);
  await claude.advance(5000);
  assert.equal(await claude.footer(), "lich: 1 task out");
  await claude.advance(5000);
  assert.equal(await claude.footer(), undefined);
  assert.equal(claude.lich.to("/mod/status").length, 4);
});

test("the footer's line goes after Claude Code's own mode labels, redrawn only when it changes", async () => {
  const busy = json({ owed: [], open: [{ ticket: "4", target: "docs", state: "busy" }], ready: [] });
  const answers = [busy, busy, json({ owed: [], open: [], ready: [] })];
  const claude = await session({ routes: { "/mod/status": () => answers.shift() || json({ owed: [], open: [], ready: [] }) } });
  assert.deepEqual(await claude.modes({ modes: ["focus", "memory paused"] }), ["focus", "memory paused", "lich: 1 task out"]);
  assert.deepEqual(await claude.modes({ modes: [] }), ["lich: 1 task out"]);
  assert.equal(claude.redraws(), 1);
  await claude.advance(5000); // the same errands: nothing to draw again
  assert.equal(claude.redraws(), 1);
  await claude.advance(5000);
  assert.equal(claude.redraws(), 2);
  assert.deepEqual(await claude.modes({ modes: ["focus"] }), ["focus"]);
});

test("outside lich the mode labels are Claude Code's alone, and labels it cannot read are passed on as they came", async () => {
  const outside = await session({ env: {} });
  assert.deepEqual(await outside.modes({ modes: ["focus"] }), ["focus"]);
  assert.equal(outside.redraws(), 0);
  const claude = await session({ routes: { "/mod/status": json({ owed: [], open: [{ state: "busy" }], ready: [] }) } });
  for (const props of [{}, { modes: "focus" }, { modes: null }]) {
    assert.deepEqual(await claude.modes(props), props.modes, JSON.stringify(props));
  }
  assert.equal(await claude.footer(), "lich: 1 task out");
});

test("a 404 stops the status reads", async () => {
  const claude = await session({ routes: { "/mod/status": json({}, 404) } });
  await claude.advance(60000);
  assert.equal(claude.lich.to("/mod/status").length, 1);
});

test("the errands read in the prompt language", async () => {
  const errands = json({ owed: [{ from: "" }, { from: "a" }], open: [{ state: "queued" }], ready: [] });
  const lines = [];
  for (const lang of ["pt-BR", "zh-CN", "es", "fr", undefined]) {
    const claude = await session({ env: { ...LICH, LICH_PROMPT_LANG: lang }, routes: { "/mod/status": errands } });
    lines.push(await claude.footer());
  }
  assert.deepEqual(lines, [
    "lich: deve 2 respostas, 1 tarefa em andamento", "lich: 欠 2 个回复, 1 个任务进行中", "lich: debe 2 respuestas, 1 tarea en curso",
    "lich: owes 2 answers, 1 task out", "lich: owes 2 answers, 1 task out"]);
});

// -- worker answer -------------------------------------------------------------------------

async function worker(env, routes) {
  const claude = await session({ env: { ...LICH, ...env }, routes });
  return claude;
}

const stop = (message, extra = {}) => ({ session_id: "s", last_assistant_message: message, background_tasks: [], stop_hook_active: false, ...extra });
const done = (answer, extra = {}) => ({ turnId: "t", reason: "answer", answer, isAborted: false, durationMs: 5, ...extra });

test("a worker posts its final answer once per turn, or that it has none", async () => {
  const claude = await worker({ LICH_SUBAGENT_DEPTH: "1" });
  await claude.fire("classic.Stop", stop("Rewrote docs/cli.md; the tests pass."));
  await claude.fire("turn.complete", done("Rewrote docs/cli.md; the tests pass."));
  await claude.fire("turn.complete", done("again"));
  await claude.fire("classic.Stop", stop("  "));
  await claude.fire("turn.complete", done("  "));
  const sent = claude.lich.to("/mod/answer");
  assert.deepEqual(sent.map((r) => r.body), [
    { session_id: "card/1", text: "Rewrote docs/cli.md; the tests pass." }, { session_id: "card/1", unanswered: "blank" }]);
  assert.equal(sent[0].headers["X-Lich-Plugin"], RELEASE);
});

test("a worker posts nothing for a turn that handed work to the background, was aborted, or a sub-agent's Stop", async () => {
  const claude = await worker({ LICH_SUBAGENT_DEPTH: "2" });
  await claude.fire("classic.Stop", stop("waiting", { background_tasks: [{ id: "b1" }] }));
  await claude.fire("turn.complete", done("waiting"));
  await claude.fire("classic.Stop", stop("half"));
  await claude.fire("turn.complete", done("half", { isAborted: true, reason: "aborted" }));
  await claude.fire("classic.Stop", stop("sub", { agent_id: "a1" }));
  await claude.fire("turn.complete", done("sub"));
  assert.equal(claude.lich.to("/mod/answer").length, 0);
});

test("only a worker answers; a long answer is cut and marked", async () => {
  for (const env of [{}, { LICH_SUBAGENT_DEPTH: "0" }, { LICH_SUBAGENT_DEPTH: "x", LICH_SUBAGENT_CARDS: "off" }, { LICH_SUBAGENT_CARDS: "on" }]) {
    const claude = await worker(env);
    await claude.fire("classic.Stop", stop("hi"));
    await claude.fire("turn.complete", done("hi"));
    assert.equal(claude.lich.to("/mod/answer").length, 0, JSON.stringify(env));
  }
  const claude = await worker({ LICH_SUBAGENT_CARDS: "off" });
  const long = "a".repeat(20000);
  await claude.fire("classic.Stop", stop(long));
  await claude.fire("turn.complete", done(long));
  assert.equal(claude.lich.to("/mod/answer")[0].body.text, "a".repeat(16000) + "\n[truncated]");
});

// -- edit guard ----------------------------------------------------------------------------

const PEERS = [{ id: "other-card", label: "quiet-comet", name: "proj-quiet", state: "busy" }];
// git knows /repo/src; lich's command line (LICH_BIN) lists `peers`, or fails with `peers` null.
const world = (peers = PEERS) => (argv) => {
  if (argv[1] === "sessions") return peers ? { exitCode: 0, stdout: JSON.stringify(peers) + "\n", stderr: "" } : { exitCode: 1, stdout: "", stderr: "lich: no lich is running" };
  return argv[2] === "/repo/src" ? { exitCode: 0, stdout: "/repo/.git\n", stderr: "" } : { exitCode: 128, stdout: "", stderr: "not a git repository" };
};
const GIT = world();
const BIN = { ...LICH, LICH_BIN: "/opt/lich/lich" };
const marker = (claude) => Object.keys(claude.seen.files).find((p) => p.startsWith("/repo/.git/lich-edits/"));

test("an edit leaves this session's marker, and another session's recent edit is told to the model and the footer by its card's label", async () => {
  const claude = await session({ env: BIN, git: GIT });
  const result = await claude.fire("tool.call", { tool: "Edit", tool_use_id: "u1", file_path: "/repo/src/a.js", old_string: "a", new_string: "b" }, () => ({ result: {}, text: "ok" }));
  assert.deepEqual(result, { result: {}, text: "ok" });
  const path = marker(claude);
  assert.match(path, /^\/repo\/\.git\/lich-edits\/[0-9a-f]{8}$/);
  assert.deepEqual(JSON.parse(claude.seen.files[path]), { path: "/repo/src/a.js", session: "card/1", at: claude.clock.now });
  claude.seen.files[path] = JSON.stringify({ path: "/repo/src/a.js", session: "other-card", at: claude.clock.now - 3 * 60000 });
  const told = await claude.fire("tool.call", { tool: "Write", tool_use_id: "u2", file_path: "/repo/src/a.js", content: "x" }, () => ({ result: {}, context: ["mine"] }));
  assert.equal(told.context[0], "mine");
  assert.match(told.context[1], /^The lich session "quiet-comet" also edited \/repo\/src\/a\.js in the last 3 min\./);
  assert.deepEqual(claude.seen.runs.at(-1), { argv: ["/opt/lich/lich", "sessions", "--json"], init: { timeoutMs: 2000 } });
  assert.equal(await claude.footer(), 'lich: a.js also edited by "quiet-comet"');
  await claude.advance(7 * 60000 - 1); // the other session's edit is news for ten minutes from when it was made
  assert.equal(await claude.footer(), 'lich: a.js also edited by "quiet-comet"');
  await claude.advance(1);
  assert.equal(await claude.footer(), undefined);
});

test("a session lich cannot name is told by its id, on one short line", async () => {
  for (const [env, git] of [[LICH, GIT], [BIN, world(null)], [BIN, world([{ id: "x", label: "other" }])], [BIN, world("not a list")]]) {
    const claude = await session({ env, git });
    await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
    claude.seen.files[marker(claude)] = JSON.stringify({ path: "/repo/src/a.js", session: "other-card", at: claude.clock.now });
    const told = await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
    assert.match(told.context[0], /^The lich session other-card also edited/);
    assert.equal(await claude.footer(), "lich: a.js also edited by other-card");
  }
  const claude = await session({ env: LICH, git: GIT });
  await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
  claude.seen.files[marker(claude)] = JSON.stringify({ path: "/repo/src/a.js", session: `a\n${"b".repeat(100)}`, at: claude.clock.now });
  const told = await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
  assert.equal(await claude.footer(), `lich: a.js also edited by a ${"b".repeat(61)}…`);
  assert.doesNotMatch(told.context[0], /\n/);
});

test("a marker is named as lich-plugin names it, FNV-1a over the path's UTF-16 units, so both see each other's", async () => {
  const claude = await session({ git: GIT });
  await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/é東😀.js" }, () => ({ result: {} }));
  assert.equal(marker(claude), "/repo/.git/lich-edits/c35df3e8");
});

test("an old marker, a file outside a checkout or a failed edit tells nothing", async () => {
  const claude = await session({ git: GIT });
  await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
  const path = marker(claude);
  claude.seen.files[path] = JSON.stringify({ path: "/repo/src/a.js", session: "other", at: claude.clock.now - 11 * 60000 });
  const old = await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ result: {} }));
  assert.equal(old.context, undefined);
  const outside = await claude.fire("tool.call", { tool: "Edit", file_path: "/tmp/x.js" }, () => ({ result: {} }));
  assert.equal(outside.context, undefined);
  claude.seen.files[path] = JSON.stringify({ path: "/repo/src/a.js", session: "other", at: claude.clock.now });
  const denied = await claude.fire("tool.call", { tool: "Edit", file_path: "/repo/src/a.js" }, () => ({ deny: "no" }));
  assert.deepEqual(denied, { deny: "no" });
  assert.equal(claude.lich.to("/hook").length, 0); // the guard never reports to lich
});

test("the ask preamble and the edit note read in the prompt language", async () => {
  const claude = await session({ env: { ...LICH, LICH_PROMPT_LANG: "pt-BR" }, polls: [json([{ id: "q", kind: "ask", question: "e aí?" }])] });
  assert.match(claude.seen.forks[0].prompt, /^Uma pergunta paralela/);
});
