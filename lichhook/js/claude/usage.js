// Claude Code's own figures to lich (lich docs/hooks/mod-usage.md): every session.measure
// becomes one POST /mod/usage, in order, with the figures Claude Code has and no others.
import { queued, request } from "./client.js";

export function newUsage() {
  return { stopped: false };
}

const whole = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0;

// The report's figures from a session.measure event, or null when it has no window
// (lich requires one). Whole numbers where lich takes only those; absent left out.
export function figures(e) {
  const context = (e && e.context) || {};
  if (!whole(context.window) || Math.round(context.window) <= 0) return null;
  const out = { context: { window: Math.round(context.window) } };
  if (whole(context.tokens)) out.context.tokens = Math.round(context.tokens);
  if (whole(context.percent)) out.context.percent = Math.min(100, Math.round(context.percent));
  if (Array.isArray(e.rateLimits)) {
    out.rate_limits = e.rateLimits
      .filter((r) => r && typeof r.kind === "string" && r.kind && whole(r.percentUsed))
      .map((r) => (typeof r.resetsAt === "string" && r.resetsAt
        ? { kind: r.kind, percent_used: r.percentUsed, resets_at: r.resetsAt }
        : { kind: r.kind, percent_used: r.percentUsed }));
  }
  if (e.cost && whole(e.cost.usd)) out.cost_usd = e.cost.usd;
  return out;
}

export function measured($, e, s) {
  if (!s.live || s.usage.stopped) return;
  const report = figures(e);
  if (report) queued(s.queues.usage, () => send($, s, report));
}

async function send($, s, report) {
  if (s.ended || s.usage.stopped) return;
  const conversation = await $.session.id();
  if (typeof conversation !== "string" || !conversation) return;
  const r = await request($, s, "POST", "/mod/usage", { conversation_id: conversation, ...report });
  if (r.status === 404) s.usage.stopped = true; // a lich older than the contract
}
