// The card reads "compacting" while Claude Code compacts (lich docs/hooks/session-state.md):
// POST /hook `compacting` before the compaction and, whether it worked or failed, the state
// after it: `done` for a /compact the person ran, `busy` for one inside a turn. A lich that
// refuses `compacting` (400) still takes the closing state.
import { queued, request } from "./client.js";

const CLOSING = { manual: "done", auto: "busy" };

export async function compacting($, e, next, s) {
  const closing = CLOSING[e.trigger];
  if (!s.live || !closing || e.agentId !== undefined) return next(e); // a sub-agent's own
  report($, s, "compacting");
  try {
    return await next(e);
  } finally {
    report($, s, closing);
  }
}

function report($, s, state) {
  queued(s.queues.hooks, () => send($, s, state));
}

async function send($, s, state) {
  if (s.ended) return;
  const conversation = await $.session.id();
  const body = typeof conversation === "string" && conversation ? { state, provider_session_id: conversation } : { state };
  await request($, s, "POST", "/hook", body);
}
