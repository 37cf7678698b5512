// lichhook for opencode. Added by `lichhook install opencode`; `lichhook uninstall opencode` removes it.
// Inside lich, this hands each event lich's card needs to one `lichhook opencode --serve`, a line
// each (docs/harness-events.md says what and why), and gives the session lich's own tools.
// Outside lich it does nothing.
import { forward, forwards, insideLich, saying, shortened } from "../common/forward.js";
import { lichTools } from "./tools.js";

// Sessions of opencode's sub-agents (a task's child): their parent's card shows them.
const children = new Map();
// Per session: the title it was last reported with, and the last event forwarded for it.
const titles = new Map();
const last = new Map();
const SESSION_LIMIT = 1000;

function remember(map, key, value) {
  if (map.size >= SESSION_LIMIT && !map.has(key)) map.clear();
  map.set(key, value);
}

function sessionOf(event) {
  const props = event.properties;
  if (!props || typeof props !== "object") return undefined;
  return typeof props.sessionID === "string" ? props.sessionID : props.info?.id;
}

// Whether `event` (bus event or hook) is one to forward; learns sub-sessions and titles.
function wanted(type, session, event) {
  if (typeof session === "string" && children.has(session)) return false;
  if (type === "session.created" || type === "session.updated") {
    const info = event.properties?.info;
    if (!info || typeof info !== "object") return false;
    if (typeof info.parentID === "string" && info.parentID !== "") {
      if (typeof info.id === "string") remember(children, info.id, true);
      return false;
    }
    const title = typeof info.title === "string" ? info.title : undefined;
    if (type === "session.updated" && (title === undefined || title === titles.get(session))) return false;
    if (title !== undefined && typeof session === "string") remember(titles, session, title);
    return true;
  }
  if (type === "session.status") {
    // opencode repeats `busy` many times a turn: the same state again changes no card.
    const seen = "session.status " + String(event.properties?.status?.type);
    if (typeof session === "string" && last.get(session) === seen) return false;
    if (typeof session === "string") remember(last, session, seen);
    return true;
  }
  if (typeof session === "string") remember(last, session, type);
  return true;
}

// opencode calls every export of a plugin module, so this is the only one.
export const LichhookPlugin = async ({ directory, client } = {}) => {
  if (!insideLich()) return {};
  saying((message) => client?.app?.log?.({ body: { service: "lichhook", level: "warn", message } }));
  const hooks = {
    event: async ({ event } = {}) => {
      try {
        if (!event || typeof event.type !== "string" || !forwards(event.type)) return;
        const session = sessionOf(event);
        if (wanted(event.type, session, event)) {
          forward(event.type, { type: event.type, properties: event.properties, directory });
        }
      } catch {
        // never disturb opencode
      }
    },
  };
  // The tool hooks only read: opencode runs the tool with whatever `output` holds after them.
  for (const type of ["tool.execute.before", "tool.execute.after"]) {
    if (!forwards(type)) continue;
    hooks[type] = async (input, output) => {
      try {
        if (!input || typeof input !== "object") return;
        const { args, ...rest } = input;
        if (!wanted(type, rest.sessionID, {})) return;
        const message = { type, input: rest, directory };
        if (type === "tool.execute.before") message.output = { ...output, args: shortened(output?.args) };
        forward(type, message);
      } catch {
        // never disturb opencode
      }
    };
  }
  const tool = await lichTools();
  if (tool) hooks.tool = tool;
  return hooks;
};
