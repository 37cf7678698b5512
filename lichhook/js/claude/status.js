// The errands line (lich docs/hooks/mod-status.md): GET /mod/status every 5 s into the
// footer's "errands" part. Reading never collects; a failed read shows nothing from lich
// until the next one works; a 404 stops reading.
import { parsed, request } from "./client.js";
import { setPart } from "./footer.js";

const EVERY = 5000;

export function newStatus() {
  return { timer: null, reading: false, stopped: false };
}

export function startStatus($, s) {
  read($, s);
  s.status.timer = $.clock.every(EVERY, () => read($, s));
  s.timers.add(s.status.timer);
}

async function read($, s) {
  const status = s.status;
  if (status.reading || s.ended || status.stopped) return;
  status.reading = true;
  const r = await request($, s, "GET", "/mod/status");
  status.reading = false;
  if (s.ended) return;
  if (r.status === 404) {
    status.stopped = true;
    if (status.timer) {
      status.timer.cancel();
      s.timers.delete(status.timer);
      status.timer = null;
    }
    setPart($, s.footer, "errands", "");
    return;
  }
  setPart($, s.footer, "errands", r.status === 200 ? errands(parsed(r.text), s.texts) : "");
}

// The errands as one short line, or "" when there are none (or the answer is not lich's).
export function errands(answer, texts) {
  if (!answer || typeof answer !== "object") return "";
  const list = (name) => (Array.isArray(answer[name]) ? answer[name].filter((x) => x && typeof x === "object") : []);
  const owed = list("owed");
  const open = list("open");
  const ready = list("ready");
  const parts = [];
  if (owed.length) parts.push(texts.owed(owed.length, typeof owed[0].from === "string" ? oneLine(owed[0].from) : ""));
  if (open.length) parts.push(texts.open(open.length, open.filter((x) => x.state === "waiting").length));
  if (ready.length) parts.push(texts.ready(ready.length));
  return parts.join(", ");
}

const oneLine = (text) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
};
