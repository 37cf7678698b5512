// Sub-agent cards: the model's Agent call on the main loop of an interactive lich session
// becomes a lich session of its own, opened by lich's command line as the caller's
// sub-agent (lich docs/cli.md, `lich open --subagent`). The call answers at once that the
// agent was launched; lich brings the worker's report back later as a note at this prompt.
// TaskStop on such a worker stops it, and the footer counts the workers still running.
//
// Every case lich's contract leaves to Claude Code keeps Claude Code's own sub-agent; once
// lich may hold the task, a failure refuses the call instead, so a task never runs twice.
import { parsed } from "./client.js";
import { setPart } from "./footer.js";

export const PROMPT_LIMIT = 8192; // bytes of a task lich takes (it checks only after opening the card)
export const MAX_DEPTH = 2; // lich's maxSubagentDepth: a card this deep keeps its sub-agents native
export const OPEN_WAIT = 120000; // ms: lich opens (up to 60 s) and hands the task over (20 s)
const SHORT_WAIT = 10000; // ms for `sessions`, `close` and git
const EVERY = 5000; // ms between two counts of the running workers
const DONE_READS = 2; // reads in a row a worker on its own worktree must be `done` to count as finished
const LAUNCHED = ["pending", "unanswered"]; // delivery states of a task the worker is on
// The catch-all sub-agent, every tool, as Claude Code names it: `general-purpose` (absent means
// it), and `claude`, which 2.1.332 lists in its place ("Catch-all for any task").
const GENERAL = ["general-purpose", "claude"];

export function newCards() {
  return { workers: new Map(), started: new Set(), timer: null, reading: false, unsupported: false };
}

// What lich put in this session's environment about cards: its command line, how deep the
// session runs as a sub-agent (0 when nobody opened it as one, or under a lich older than the
// variable) and whether its cards are off (the user's setting, or a depth they stop at).
export async function cardEnv($) {
  return {
    bin: (await $.env.get("LICH_BIN")) || "",
    depth: depthOf(await $.env.get("LICH_SUBAGENT_DEPTH")),
    off: (await $.env.get("LICH_SUBAGENT_CARDS")) === "off",
  };
}

// A depth that is not a whole number is treated as the limit: never nest on a guess.
export function depthOf(value) {
  if (value === undefined || value === null || value === "") return 0;
  return /^\d{1,4}$/.test(value) ? Number(value) : MAX_DEPTH;
}

export const bytes = (text) => new TextEncoder().encode(text).length;

// Why an Agent call stays Claude Code's own sub-agent, or "" when it becomes a card.
export function nativeReason(e, origin, env) {
  if (e.agentId !== undefined || !origin || origin.plugin !== "engine") return "not the model's main loop";
  if (typeof e.prompt !== "string" || typeof e.description !== "string") return "not an Agent call lich can take";
  if (e.subagent_type && !GENERAL.includes(e.subagent_type)) return "a typed sub-agent";
  if (e.team_name) return "a teammate";
  if (e.isolation === "remote") return "remote isolation";
  if (!env.bin) return "no lich command line";
  if (env.off) return "cards are off";
  if (env.depth >= MAX_DEPTH) return "lich's depth limit";
  if (bytes(e.prompt) > PROMPT_LIMIT) return "over lich's prompt limit";
  return "";
}

// The argv of the open: lich's own flags, the worktree only when the call asks isolation.
export function openArgv(bin, e, base) {
  const argv = [bin, "open", "--kind", "claude", "--subagent"];
  if (e.isolation === "worktree") {
    argv.push("--worktree", branchOf(e.description, e.tool_use_id));
    if (base) argv.push("--base", base);
  }
  if (typeof e.model === "string" && e.model) argv.push("--model", e.model);
  if (typeof e.effort === "string" && e.effort) argv.push("--effort", e.effort);
  argv.push("--prompt", e.prompt, "--json");
  return argv;
}

// A branch git takes, named for the task: `subagent/<2-5 words>-<4 characters of the call id>`.
export function branchOf(description, callId) {
  const words = String(description || "").toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).slice(0, 5);
  let slug = "";
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > 40) break;
    slug = next;
  }
  const tail = String(callId || "").replace(/[^A-Za-z0-9]/g, "").slice(-4).toLowerCase() || "0000";
  return `subagent/${slug || "agent"}-${tail}`;
}

export async function agentCalled($, e, next, s) {
  if (!s.live) return next(e);
  const env = await cardEnv($);
  const why = nativeReason(e, next.origin, env);
  if (why) {
    if (why === "over lich's prompt limit") toast($, s, e, s.texts.cardTooLong(bytes(e.prompt), PROMPT_LIMIT));
    return next(e);
  }
  if (s.cards.unsupported || !(await exists($, env.bin))) return next(e);
  s.cards.started.add(e.tool_use_id);
  const outcome = await open($, e, env);
  if (outcome.native !== undefined) {
    s.cards.started.delete(e.tool_use_id);
    s.cards.unsupported = outcome.unsupported; // a lich without `open --subagent`: native from now on
    if (next.signal && next.signal.aborted) return { deny: s.texts.cardNotOpened(outcome.native) };
    toast($, s, e, outcome.native);
    return next(e);
  }
  return answered($, e, outcome, s);
}

// A hook of this mod that failed: the engine would run the native agent in its place, so a
// call whose open had started is refused instead.
export function agentFailed($, e, next, s) {
  return s.cards.started.has(e.tool_use_id) ? { deny: s.texts.cardRefused("the mod failed") } : next(e);
}

// {opened, delivery} once lich took the task, {native: reason} when it did not, or
// {refused: reason} when it may have.
async function open($, e, env) {
  const isolated = e.isolation === "worktree";
  const base = isolated ? await currentBranch($) : "";
  let r;
  try {
    r = await $.process.run(openArgv(env.bin, e, base), { timeoutMs: OPEN_WAIT });
  } catch (error) {
    return { refused: firstLine(error && error.message) || "lich's command line did not finish" };
  }
  const out = parsed(String(r.stdout || "").trim());
  const opened = out && typeof out === "object" && !Array.isArray(out) && (out.id || out.name) ? out : null;
  if (r.exitCode !== 0) {
    // a session printed means lich opened the card before the hand-off failed
    if (opened) return { refused: firstLine(r.stderr) || `lich exited ${r.exitCode}`, label: String(opened.label || opened.name) };
    return { native: firstLine(r.stderr) || `lich exited ${r.exitCode}`, unsupported: /not defined: -+subagent\b/.test(String(r.stderr)) };
  }
  if (!opened || !opened.delivery || typeof opened.delivery !== "object") return { refused: "lich's answer could not be read" };
  return { opened, delivery: opened.delivery, isolated };
}

function answered($, e, outcome, s) {
  if (outcome.refused !== undefined) return { deny: s.texts.cardRefused(outcome.refused, outcome.label) };
  const { opened, delivery, isolated } = outcome;
  const id = String(opened.id || opened.name);
  const label = String(opened.label || opened.name || id);
  const name = String(opened.name || label);
  if (delivery.status === "answered") {
    const result = {
      status: "completed", agentId: id, prompt: e.prompt, canContinueAgent: false,
      content: [{ type: "text", text: typeof delivery.answer === "string" && delivery.answer ? delivery.answer : s.texts.cardNoReport(label) }],
      totalToolUseCount: 0, totalDurationMs: 0, totalTokens: 0,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null, server_tool_use: null, service_tier: null, cache_creation: null },
    };
    if (isolated && typeof opened.path === "string" && opened.path) {
      result.worktreePath = opened.path;
      result.worktreeBranch = branchOf(e.description, e.tool_use_id);
    }
    return { result };
  }
  if (!LAUNCHED.includes(delivery.status)) return { deny: s.texts.cardRefused(`delivery ${String(delivery.status)}`, label) };
  track($, s, { id, name, label, description: e.description, isolated, doneReads: 0 });
  return {
    result: { status: "async_launched", agentId: id, description: e.description, prompt: e.prompt, outputFile: "", canReadOutputFile: false, canContinueAgent: false },
    context: [s.texts.cardLaunched(label, name, id)],
  };
}

// TaskStop on a worker this session opened (lich-plugin 0.15.0): one in this checkout is
// closed, having nothing of its own to keep; one on its own worktree has its turn stopped
// (`lich control <name> abort`) and keeps its card and worktree for the person. Any other
// id is Claude Code's.
export async function stopCalled($, e, next, s) {
  if (!s.live) return next(e);
  const asked = typeof e.task_id === "string" && e.task_id ? e.task_id : e.shell_id;
  const worker = [...s.cards.workers.values()].find((w) => asked && (w.id === asked || w.name === asked));
  if (!worker) return next(e);
  const env = await cardEnv($);
  const argv = worker.isolated ? [env.bin, "control", "--", worker.name, "abort"] : [env.bin, "close", "--", worker.name];
  let r;
  try {
    r = await $.process.run(argv, { timeoutMs: SHORT_WAIT });
  } catch (error) {
    return { deny: s.texts.cardNotStopped(worker.label, firstLine(error && error.message) || "no answer") };
  }
  if (r.exitCode !== 0) return { deny: s.texts.cardNotStopped(worker.label, firstLine(r.stderr) || `exit ${r.exitCode}`) };
  forget($, s, worker);
  const message = worker.isolated ? s.texts.cardAborted(worker.label) : s.texts.cardStopped(worker.label);
  return { result: { message, task_id: worker.id, task_type: "local_agent", command: worker.description } };
}

// -- the count of running workers, in the footer ------------------------------------------

function track($, s, worker) {
  s.cards.workers.set(worker.id, worker);
  show($, s);
  if ((s.cards.timer && s.timers.has(s.cards.timer)) || s.ended) return; // a session's end cancels s.timers
  s.cards.timer = $.clock.every(EVERY, () => count($, s));
  s.timers.add(s.cards.timer);
}

function forget($, s, worker) {
  s.cards.workers.delete(worker.id);
  show($, s);
  if (s.cards.workers.size > 0 || !s.cards.timer) return;
  s.cards.timer.cancel();
  s.timers.delete(s.cards.timer);
  s.cards.timer = null;
}

function show($, s) {
  setPart($, s.footer, "workers", s.cards.workers.size ? s.texts.cardWorkers(s.cards.workers.size) : "");
}

// A worker in the caller's checkout is over once lich no longer lists it (it closes itself
// after answering); one on its own worktree stays open, so it is over once lich lists it
// `done` at two reads in a row (one read could fall before it took the task). A failed read
// changes nothing.
async function count($, s) {
  const cards = s.cards;
  if (cards.reading || s.ended || cards.workers.size === 0) return;
  cards.reading = true;
  try {
    const env = await cardEnv($);
    const r = await $.process.run([env.bin, "sessions", "--json"], { timeoutMs: SHORT_WAIT });
    const peers = r && r.exitCode === 0 ? parsed(String(r.stdout).trim()) : undefined;
    if (!Array.isArray(peers) || s.ended) return;
    for (const worker of [...cards.workers.values()]) {
      const peer = peers.find((p) => p && typeof p === "object" && (p.id === worker.id || p.name === worker.name));
      worker.doneReads = peer && worker.isolated && peer.state === "done" ? worker.doneReads + 1 : 0;
      if (!peer || worker.doneReads >= DONE_READS) forget($, s, worker);
    }
  } catch {
    // a count that fails is tried again at the next tick
  } finally {
    cards.reading = false;
  }
}

// -- edges ----------------------------------------------------------------------------------

async function exists($, path) {
  try {
    return !!path && (await $.fs.exists(path));
  } catch {
    return false;
  }
}

async function currentBranch($) {
  try {
    const r = await $.process.run(["git", "branch", "--show-current"], { timeoutMs: SHORT_WAIT });
    return r && r.exitCode === 0 ? String(r.stdout).trim() : "";
  } catch {
    return "";
  }
}

function toast($, s, e, why) {
  try {
    $.ui.toast(s.texts.cardNative(e.description, why));
  } catch {
    // a toast is a courtesy
  }
}

function firstLine(text) {
  const line = String(text || "").split(/\r?\n/).map((l) => l.trim()).find(Boolean) || "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
