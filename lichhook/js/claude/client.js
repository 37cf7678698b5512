// What every mod shares: the session's lich address, one bounded request that never
// throws, and the cuts lich's limits ask for.
import { lichTarget } from "../common/lich.js";
import { clipped } from "../common/text.js";
import { RELEASE } from "./release.js";

export const ANSWER_LIMIT = 16000; // UTF-16 units of an ask's answer or a worker's answer
export const BODY_LIMIT = 65536; // bytes lich reads of an ack or an answer
export const ERROR_LIMIT = 120; // characters of an ack's error
const SHORT_WAIT = 5000; // ms a report may take before the mod stops waiting on it

// Where lich listens and as whom to report, or null outside lich (any variable missing or
// blank, or a port that is not a port): then no mod does anything.
export async function lichEnv($) {
  return lichTarget(await $.env.get("LICH_PORT"), await $.env.get("LICH_TOKEN"), await $.env.get("LICH_SESSION_ID"));
}

// {status, text}; status 0 when lich could not be reached or the mod stopped waiting
// (`wait` ms; Claude Code itself cuts a mod's fetch at 30 s).
export async function request($, s, method, path, body, wait = SHORT_WAIT) {
  const env = s.env;
  let url = `${env.base}${path}?token=${encodeURIComponent(env.token)}`;
  if (method === "GET") url += `&session_id=${encodeURIComponent(env.session)}`;
  const headers = { "X-Lich-Plugin": RELEASE };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify({ session_id: env.session, ...body });
  }
  let timer = null;
  try {
    const sent = $.http.fetch(url, init);
    const late = new Promise((resolve) => {
      timer = $.clock.after(wait, () => resolve({ status: 0, text: "" }));
      s.timers.add(timer);
    });
    const r = await Promise.race([sent, late]);
    return { status: Number(r && r.status) || 0, text: typeof (r && r.text) === "string" ? r.text : "" };
  } catch {
    return { status: 0, text: "" };
  } finally {
    if (timer) {
      timer.cancel();
      s.timers.delete(timer);
    }
  }
}

// The JSON value of `text`, or undefined for anything that is not JSON.
export function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// `text` cut at `limit` UTF-16 units, never between a surrogate pair, marked when cut.
export function cut(text, limit = ANSWER_LIMIT) {
  return text.length <= limit ? text : `${clipped(text, limit)}\n[truncated]`;
}

// An error for an ack: one line, trimmed, at most 120 characters.
export function reason(value) {
  const line = String(value && value.message ? value.message : value).replace(/\s+/g, " ").trim();
  return line.length > ERROR_LIMIT ? cut(line, ERROR_LIMIT).split("\n")[0] : line || "failed";
}

// `field` of `body` cut further until the whole JSON body fits lich's 64 KiB (text
// full of characters JSON escapes can outgrow it before the 16,000-unit cut).
export function fitted(body, field) {
  let value = body[field];
  const size = (v) => new TextEncoder().encode(JSON.stringify({ ...body, [field]: v, session_id: "x".repeat(64) })).length;
  while (size(value) > BODY_LIMIT && value.length > 0) value = cut(value, Math.floor(value.length * 0.75));
  return { ...body, [field]: value };
}

// Runs the reports put in `queue` one at a time, in order, so they reach lich in the order
// they happened. At most `limit` wait: a newer one past that drops the oldest waiting.
export function newQueue(limit = 8) {
  return { items: [], running: false, limit };
}

export function queued(queue, work) {
  if (queue.items.length >= queue.limit) queue.items.shift();
  queue.items.push(work);
  if (!queue.running) drain(queue);
}

async function drain(queue) {
  queue.running = true;
  while (queue.items.length > 0) {
    const work = queue.items.shift();
    try {
      await work();
    } catch {
      // a report that fails is dropped, never retried
    }
  }
  queue.running = false;
}
