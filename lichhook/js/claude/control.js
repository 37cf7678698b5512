// lich drives the session (lich docs/hooks/mod-control.md): a long poll of /mod/commands
// and an ack to /mod/acks for every command, applied in lich's order.
import { cut, fitted, parsed, reason, request } from "./client.js";

const POLL_WAIT = 30000; // Claude Code cuts a mod's fetch here; lich answers an empty poll at 25 s
const FIRST_BACKOFF = 1000;
const LAST_BACKOFF = 10000;
const QUICK = 1000; // an empty answer sooner than this waits out the rest: never a spinning poll
const EFFORTS = ["low", "medium", "high", "xhigh", "max"];
const KINDS = ["prompt", "abort", "model", "effort", "command", "ask"];

export function newControl() {
  return { stopped: false, backoff: 0, turnId: null, model: undefined, effort: undefined, order: Promise.resolve(), loop: null };
}

// One poll loop at a time: a loop whose session ended (or started again) stops at its next step.
export function startControl($, s) {
  const loop = {};
  s.control.loop = loop;
  s.control.backoff = 0;
  later($, s, 0, loop);
}

// The request a turn is about to send, with the model and effort lich set (main loop only:
// a sub-agent keeps the model its definition chose).
export function overridden(e, control) {
  if (e.agentId !== undefined || (control.model === undefined && control.effort === undefined)) return e;
  const out = { ...e };
  if (control.model !== undefined) out.model = control.model;
  if (control.effort !== undefined) out.effort = control.effort;
  return out;
}

export function turnStarted(e, control) {
  if (e.agentId === undefined && typeof e.turnId === "string") control.turnId = e.turnId;
}

export function turnEnded(e, control) {
  if (e.agentId === undefined && e.turnId === control.turnId) control.turnId = null;
}

function later($, s, ms, loop) {
  if (s.control.loop !== loop || s.control.stopped) return;
  const timer = $.clock.after(ms, () => {
    s.timers.delete(timer);
    poll($, s, loop);
  });
  s.timers.add(timer);
}

async function poll($, s, loop) {
  const control = s.control;
  const began = await $.clock.now();
  const r = await request($, s, "GET", "/mod/commands", undefined, POLL_WAIT);
  if (control.loop !== loop) return; // what this poll took is lost with the session, as lich's at-most-once allows
  if (r.status === 404) {
    control.stopped = true; // a lich older than the contract
    return;
  }
  const commands = r.status === 200 ? parsed(r.text) : undefined;
  if (!Array.isArray(commands)) {
    control.backoff = Math.min(control.backoff ? control.backoff * 2 : FIRST_BACKOFF, LAST_BACKOFF);
    later($, s, control.backoff, loop);
    return;
  }
  control.backoff = 0;
  for (const command of commands) take($, s, command);
  const took = (await $.clock.now()) - began;
  later($, s, commands.length > 0 || took >= QUICK ? 0 : QUICK - took, loop);
}

function take($, s, command) {
  if (!command || typeof command !== "object" || typeof command.id !== "string" || !command.id) return;
  if (command.kind === "ask") {
    ask($, s, command); // outside the order: it can take a minute and nothing waits on it
    return;
  }
  s.control.order = s.control.order.then(() => apply($, s, command)).catch(() => undefined);
}

async function apply($, s, command) {
  if (s.ended) return;
  switch (command.kind) {
    case "prompt":
    case "command":
      settle($, s, command); // settles once the session is idle: an abort behind it must not wait
      return;
    case "abort":
      return ack($, s, command, await abort($, s));
    case "model":
      return ack($, s, command, setModel(command, s.control));
    case "effort":
      return ack($, s, command, setEffort(command, s.control));
    default:
      return ack($, s, command, { ok: false, error: "unknown kind" });
  }
}

async function settle($, s, command) {
  let outcome;
  try {
    outcome = command.kind === "prompt" ? await submit($, command) : await run($, command);
  } catch (error) {
    outcome = { ok: false, error: reason(error) };
  }
  await ack($, s, command, outcome);
}

async function submit($, command) {
  if (typeof command.text !== "string" || !command.text.trim()) return { ok: false, error: "prompt has no text" };
  const n = command.notification;
  const asNews = n && typeof n === "object" && typeof n.status === "string" && typeof n.summary === "string" && n.summary.trim();
  const result = asNews
    ? await $.prompt.submit({ text: notification(n, command.text), asUser: true })
    : await $.prompt.submit({ text: command.text });
  return result && result.drop ? { ok: false, error: reason(result.drop) } : { ok: true };
}

// The shape Claude Code gives its own background agents' completions: one dim line for
// the person, the whole text for the model (escaped where Claude Code decodes, not in it).
export function notification(n, text) {
  const escape = (v) => v.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return `<task-notification>\n<status>${escape(n.status)}</status>\n<summary>${escape(n.summary)}</summary>\n<result>${text}</result>\n</task-notification>`;
}

async function run($, command) {
  const name = typeof command.name === "string" ? command.name.replace(/^\//, "").trim() : "";
  if (!name) return { ok: false, error: "command has no name" };
  // run through a mod these save a default for every new session; lich refuses them too
  if (/^(model|effort)$/i.test(name)) return { ok: false, error: `use the ${name.toLowerCase()} kind, not /${name}` };
  await $.command.run({ command: name, args: typeof command.args === "string" ? command.args : "" });
  return { ok: true };
}

async function abort($, s) {
  const turnId = s.control.turnId;
  if (!turnId) return { ok: false, error: "no turn is running" };
  try {
    await $.turn.abort({ turnId });
    return { ok: true };
  } catch (error) {
    return { ok: false, error: reason(error) };
  }
}

export function setModel(command, control) {
  if (command.model === undefined || command.model === null) control.model = undefined;
  else if (typeof command.model === "string" && command.model.trim()) control.model = command.model.trim();
  else return { ok: false, error: "model must be a model name" };
  return { ok: true };
}

export function setEffort(command, control) {
  if (command.effort === undefined || command.effort === null) control.effort = undefined;
  else if (EFFORTS.includes(command.effort)) control.effort = command.effort;
  else return { ok: false, error: `effort must be one of ${EFFORTS.join(", ")}` };
  return { ok: true };
}

async function ask($, s, command) {
  if (typeof command.question !== "string" || !command.question.trim()) {
    await ack($, s, command, { ok: false, error: "ask has no question" });
    return;
  }
  let outcome;
  try {
    const r = await $.model.fork({ prompt: `${s.texts.ask}\n\n${command.question}` });
    if (r && r.isAnswered && typeof r.text === "string") outcome = { ok: true, answer: cut(r.text) };
    else if (r && r.reason === "api-error") outcome = { ok: false, error: reason(`api-error ${r.status} ${r.error}`) };
    else outcome = { ok: false, error: reason((r && r.reason) || "empty-reply") };
  } catch (error) {
    outcome = { ok: false, error: reason(error) };
  }
  await ack($, s, command, outcome);
}

// An ack that cannot be sent is dropped: lich never resends, and the turn never waits on it.
async function ack($, s, command, outcome) {
  if (s.ended) return;
  const kind = KINDS.includes(command.kind) ? command.kind : String(command.kind).slice(0, 40);
  let body = { id: command.id, kind, ok: outcome.ok };
  if (outcome.error) body.error = outcome.error;
  if (outcome.answer !== undefined) body = fitted({ ...body, answer: outcome.answer }, "answer");
  await request($, s, "POST", "/mod/acks", body);
}
