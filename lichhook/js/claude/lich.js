// lichhook's Claude Code mods: lich drives the session, and hears from it what only the
// running Claude Code knows. Claude Code loads this one module (hooks/hooks.json
// "modules") and each event is registered here once, handed to the mods that need it.
//
// Every mod does nothing outside lich (LICH_PORT, LICH_TOKEN, LICH_SESSION_ID) and
// nothing in a non-interactive run: a `claude -p` started inside a lich session inherits
// its variables and would otherwise take its commands and report onto its card.
import { completed, isWorker, newAnswer, stopped } from "./answer.js";
import { agentCalled, agentFailed, newCards, stopCalled } from "./cards.js";
import { lichEnv, newQueue } from "./client.js";
import { newControl, overridden, startControl, turnEnded, turnStarted } from "./control.js";
import { edited, newEdits } from "./editguard.js";
import { drawn, newFooter } from "./footer.js";
import { announce, selfCommand } from "./selfcommand.js";
import { newStatus, startStatus } from "./status.js";
import { texts } from "./texts.js";
import { measured, newUsage } from "./usage.js";

export function newSession() {
  return {
    env: null, live: false, ended: false, texts: texts(""), timers: new Set(), footer: newFooter(),
    queues: { usage: newQueue(), answers: newQueue() },
    control: newControl(), usage: newUsage(), status: newStatus(), edits: newEdits(), answer: newAnswer(),
    cards: newCards(),
  };
}

export function register(on) {
  const s = newSession();
  on("session.start", { isInteractive: true }, ($, e, next) => start($, e, next, s));
  on("session.end", ($, e, next) => end($, e, next, s));
  on("turn.start", ($, e, next) => started($, e, next, s));
  on("turn.step", async function* ($, e, next) {
    yield* next(overridden(e, s.control));
  });
  on("turn.complete", ($, e, next) => finished($, e, next, s));
  on("classic.Stop", ($, e, next) => stop($, e, next, s)).catch(($, e, next) => next(e));
  on("session.measure", ($, e, next) => measure($, e, next, s));
  for (const tool of ["Edit", "Write", "NotebookEdit"]) {
    on("tool.call", { tool }, ($, e, next) => edited($, e, next, s)).catch(($, e, next) => next(e));
  }
  on("tool.call", { tool: "Agent" }, ($, e, next) => agentCalled($, e, next, s)).catch(($, e, next) => agentFailed($, e, next, s));
  on("tool.call", { tool: "TaskStop" }, ($, e, next) => stopCalled($, e, next, s)).catch(($, e, next) => next(e));
  on("ui.render", { component: "SessionMode" }, ($, e, next) => drawn($, e, next, s.footer)).catch(($, e, next) => next(e));
  selfCommand(on, s);
}

// A session that ends and starts again in the same process starts the mods afresh; what
// was in flight still goes.
async function start($, e, next, s) {
  if (!s.live) {
    const env = await lichEnv($);
    if (env && !s.live) {
      s.env = env;
      s.live = true;
      s.ended = false;
      s.texts = texts(await $.env.get("LICH_PROMPT_LANG"));
      s.answer.worker = isWorker(await $.env.get("LICH_SUBAGENT_DEPTH"), await $.env.get("LICH_SUBAGENT_CARDS"));
      startControl($, s);
      startStatus($, s);
      announce($);
    }
  }
  return next(e);
}

// The session is over: no timer of the mods fires again, and nothing more is sent. A /clear
// or /resume ends only the conversation (measured on 2.1.332: session.end fires with that
// reason, session.start does not fire again): the process, and its lich card, go on.
function end($, e, next, s) {
  if (e.reason === "clear" || e.reason === "resume") return next(e);
  s.ended = true;
  s.live = false;
  s.control.loop = null;
  for (const timer of s.timers) timer.cancel();
  s.timers.clear();
  return next(e);
}

function started($, e, next, s) {
  turnStarted(e, s.control);
  return next(e);
}

function finished($, e, next, s) {
  turnEnded(e, s.control);
  completed($, e, s);
  return next(e);
}

function stop($, e, next, s) {
  stopped(e, s);
  return next(e);
}

function measure($, e, next, s) {
  measured($, e, s);
  return next(e);
}
