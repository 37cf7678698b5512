// The session runs one of its own built-in slash commands when its model asks for one
// (the person said "run /compact"). The model reaches for one of two tools, and both
// refuse: the Skill tool answers that a built-in is not a skill, and lich's
// control_session answers that a session cannot control itself. The mod takes either
// refusal, when it is for a built-in command of this very session, and queues the
// command with $.command.run, which runs it once the turn has ended. Nothing is sent
// to lich.
//
// /model and /effort are refused: run from inside the session, Claude Code saves what
// they set as the default for every new session, where lich's own model and effort
// controls change this session only.
//
// English only: the notes are read by the model; a toast after a queued command failed
// is the one line the person sees.
import { reason } from "./client.js";

export const SKILL = "Skill";
export const CONTROL = "mcp__lich__control_session"; // lich's MCP tool as Claude Code names it
const SAVES_A_DEFAULT = ["model", "effort"];
const LIST_WAIT = 2000; // ms for $.command.list, which answers from memory
const WHOAMI_WAIT = 2000; // ms for `lich whoami --json`
const WHOAMI_LIMIT = 65536; // characters of its output read

const notes = {
  skill: "In this lich session a built-in slash command of Claude Code (compact, clear, ...) can be named here too, when the user asks for it to be run: it is queued and runs once your turn has ended, so end your turn after the call. /model and /effort are not run this way.",
  control: (id) => `This session's lich id is ${id}. Aimed at it, action command runs one of this session's own built-in slash commands (compact, clear, ...): it is queued and runs once your turn has ended, so end your turn after the call. /model and /effort are not run this way.`,
  queued: (line) => `${line} is queued on this session and runs once your turn has ended. End your turn now; do not run it again.`,
  savesDefault: (name) => `/${name} is not run from inside the session: Claude Code would save it as the default for every new session. Ask the user to set the ${name} from lich, which changes this session only.`,
  failed: (name, why) => `/${name} did not run: ${why}`,
};

// Four hooks; each gives Claude Code its own answer back on anything it does not take.
export function selfCommand(on, s) {
  on("tool.describe", { tool: SKILL }, ($, e, next) => described($, e, next, s, () => notes.skill)).catch(passOn);
  on("tool.describe", { tool: CONTROL }, ($, e, next) => described($, e, next, s, () => notes.control(s.env.session))).catch(passOn);
  on("tool.call", { tool: SKILL }, ($, e, next) => skillCalled($, e, next, s)).catch(passOn);
  on("tool.call", { tool: CONTROL }, ($, e, next) => controlCalled($, e, next, s)).catch(passOn);
}

function passOn($, e, next) {
  return next(e);
}

// The tools were described before the session knew it was in lich: describe them again.
export function announce($) {
  try {
    Promise.resolve($.ui.invalidate("tool.describe")).catch(() => undefined);
  } catch {
    // a Claude Code without it describes them at the next thread
  }
}

async function described($, e, next, s, note) {
  const answer = await next(e);
  if (!s.live || !answer || typeof answer.description !== "string") return answer;
  return { ...answer, description: `${answer.description}\n\n${note()}` };
}

// Only a refusal on the main loop is taken: a sub-agent's tool call is not the person asking.
const refused = (answer, e, s) => s.live && !s.ended && !!answer && answer.isError === true && e.agentId === undefined;

async function skillCalled($, e, next, s) {
  const answer = await next(e);
  if (!refused(answer, e, s)) return answer;
  const wanted = parse(e.skill, e.args);
  if (!wanted) return answer;
  const taken = await take($, s, wanted);
  if (!taken) return answer;
  return taken.deny !== undefined ? taken : { result: { success: true, commandName: taken.name }, context: [taken.note] };
}

async function controlCalled($, e, next, s) {
  const answer = await next(e);
  if (!refused(answer, e, s) || e.action !== "command") return answer;
  const wanted = parse(e.value, e.args);
  if (!wanted || !(await isThisSession($, s, e.session))) return answer;
  const taken = await take($, s, wanted);
  if (!taken) return answer;
  return taken.deny !== undefined ? taken : { result: taken.note };
}

// {name, args} of "/compact", "compact keep the plan" or ("compact", "keep the plan");
// null for anything that is no command name.
export function parse(value, args) {
  if (typeof value !== "string") return null;
  const [first, ...rest] = value.trim().replace(/^\//, "").split(/\s+/);
  if (!/^[A-Za-z0-9][A-Za-z0-9_:.-]{0,63}$/.test(first)) return null;
  const more = typeof args === "string" ? args.trim() : "";
  return { name: first, args: [rest.join(" "), more].filter(Boolean).join(" ") };
}

// {name, note} once queued, {deny} for /model and /effort, null for no built-in command.
async function take($, s, wanted) {
  const name = await builtin($, s, wanted.name);
  if (!name) return null;
  if (SAVES_A_DEFAULT.includes(name.toLowerCase())) return { deny: notes.savesDefault(name.toLowerCase()) };
  queue($, s, name, wanted.args);
  return { name, note: notes.queued(`/${[name, wanted.args].filter(Boolean).join(" ")}`) };
}

// The built-in command's own name for `name` (matched regardless of case), or "".
async function builtin($, s, name) {
  const list = await bounded($, s, () => $.command.list(), LIST_WAIT);
  const wanted = name.toLowerCase();
  const found = Array.isArray(list) && list.find((c) => c && c.source === "builtin" && typeof c.name === "string" && c.name.toLowerCase() === wanted);
  return found ? found.name : "";
}

// $.command.run rejects inside a hook the turn waits on: it is called from a timer, and
// queued by Claude Code until the session is idle. A failure then has no turn to answer.
function queue($, s, name, args) {
  const timer = $.clock.after(0, () => {
    s.timers.delete(timer);
    run($, s, name, args);
  });
  s.timers.add(timer);
}

async function run($, s, name, args) {
  if (s.ended) return;
  try {
    await $.command.run({ command: name, args });
  } catch (error) {
    try {
      $.ui.toast(notes.failed(name, reason(error)));
    } catch {
      // no toast: the command simply did not run
    }
  }
}

// Whether `target` names this session: its lich id, or (case aside, as lich matches) the
// label or name `$LICH_BIN whoami --json` prints (lich 0.64 and later); only the id
// counts when that cannot be asked.
async function isThisSession($, s, target) {
  if (typeof target !== "string" || !target.trim()) return false;
  if (target.trim() === s.env.session) return true;
  const lich = await $.env.get("LICH_BIN");
  if (!lich) return false;
  const r = await bounded($, s, () => $.process.run([lich, "whoami", "--json"], { timeoutMs: WHOAMI_WAIT }), WHOAMI_WAIT + 500);
  if (!r || r.exitCode !== 0 || typeof r.stdout !== "string" || r.stdout.length > WHOAMI_LIMIT) return false;
  let me;
  try {
    me = JSON.parse(r.stdout);
  } catch {
    return false;
  }
  const wanted = target.trim().toLowerCase();
  return !!me && typeof me === "object" && [me.label, me.name].some((v) => typeof v === "string" && v.trim() && v.toLowerCase() === wanted);
}

// What `work()` resolves to within `ms`, else undefined; never throws.
async function bounded($, s, work, ms) {
  let timer = null;
  try {
    const late = new Promise((resolve) => {
      timer = $.clock.after(ms, () => resolve(undefined));
      s.timers.add(timer);
    });
    return await Promise.race([Promise.resolve().then(work), late]);
  } catch {
    return undefined;
  } finally {
    if (timer) {
      timer.cancel();
      s.timers.delete(timer);
    }
  }
}
