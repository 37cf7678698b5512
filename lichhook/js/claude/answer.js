// A worker's final answer (lich docs/hooks/mod-answer.md): a session lich opened as a
// sub-agent worker posts, once per main-loop turn that handed nothing to the background,
// its final text to /mod/answer, or that it has none.
import { cut, fitted, queued, request } from "./client.js";

export function newAnswer() {
  return { worker: false, stop: null };
}

// LICH_SUBAGENT_DEPTH above 0; under a lich older than that variable, LICH_SUBAGENT_CARDS=off.
export function isWorker(depth, cards) {
  if (depth !== undefined && depth !== null && depth !== "") return /^\d+$/.test(depth) && Number(depth) > 0;
  return cards === "off";
}

export function stopped(e, s) {
  if (!s.live || !s.answer.worker || e.agent_id) return; // a sub-agent's or a fork's Stop
  const running = Array.isArray(e.background_tasks) && e.background_tasks.length > 0;
  s.answer.stop = running ? null : { message: typeof e.last_assistant_message === "string" ? e.last_assistant_message : "" };
}

// What the turn that just completed tells lich, or null: its text, or `unanswered`.
export function outcome(e, stop) {
  if (!stop || e.isAborted || e.reason === "aborted") return null;
  if (e.reason === "refusal" || e.reason === "error") return { unanswered: e.reason };
  if (e.reason !== "answer") return null;
  if (!stop.message.trim()) return { unanswered: "blank" };
  if (typeof e.answer === "string" && e.answer !== stop.message) return null; // not this Stop's turn
  return fitted({ text: cut(stop.message) }, "text");
}

export function completed($, e, s) {
  if (!s.live || !s.answer.worker || e.agentId !== undefined) return;
  const body = outcome(e, s.answer.stop);
  s.answer.stop = null;
  if (body) queued(s.queues.answers, () => send($, s, body));
}

async function send($, s, body) {
  if (!s.ended) await request($, s, "POST", "/mod/answer", body);
}
