// How the opencode and omp modules hand events to lichhook: one `lichhook <kind> --serve` per
// harness process. Install writes it, and what it imports, into each module (docs/architecture.md).
import { spawn } from "node:child_process";
import { lichTarget } from "./lich.js";
import { clipped } from "./text.js";

// Written by install: the interpreter, the archive, the interpreter's options (-I keeps the
// project's PYTHONPATH and folder out, -S skips site, -c runs the archive through the launcher
// every hook registration has, sparing runpy's imports) and, for each event to forward, the
// command words after the archive (from the harness's descriptor in lichhook): the
// provider and the event; a `*suffix` key stands for every event ending so.
const PYTHON = "@PYTHON@";
const ARCHIVE = "@ARCHIVE@";
const FLAGS = "@FLAGS@";
export const EVENTS = "@EVENTS@";

// Bytes written to lichhook and not yet taken in: past this (a lichhook that stopped
// reading), an event is dropped rather than held in the harness's memory.
const BACKLOG_LIMIT = 1 << 20;
// A tool's arguments can hold a whole file; the card shows 120 characters of them.
const TEXT_LIMIT = 4096;

// The command words of `type`, or undefined for an event not forwarded.
function wordsOf(type) {
  if (typeof type !== "string") return undefined;
  if (Object.prototype.hasOwnProperty.call(EVENTS, type)) return EVENTS[type];
  for (const [key, words] of Object.entries(EVENTS)) {
    if (key.startsWith("*") && type.endsWith(key.slice(1))) return words;
  }
  return undefined;
}

export function forwards(type) {
  return Array.isArray(wordsOf(type));
}

export function insideLich() {
  const env = process.env;
  return lichTarget(env.LICH_PORT, env.LICH_TOKEN, env.LICH_SESSION_ID) !== null;
}

// A copy of a tool's arguments with every long string cut.
export function shortened(args) {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const copy = {};
  for (const [key, value] of Object.entries(args)) {
    copy[key] = typeof value === "string" ? clipped(value, TEXT_LIMIT) : value;
  }
  return copy;
}

// One lichhook (`<provider> --serve`) takes every event of this harness process, a line of
// JSON each, and reports them in the order they came. It starts at the first event and
// ends when its stdin closes, which the harness's exit does; if it dies, the next event
// starts another. The harness never waits: forward() only writes to a pipe, and nothing
// here keeps the harness's process alive. If Python cannot be started, `say` tells the
// harness's log once and nothing more is tried.
let server;
let broken = false;
let say = () => {};

export function saying(log) {
  say = (message) => {
    try {
      Promise.resolve(log(message)).catch(() => {});
    } catch {
      // the harness's log is best effort too
    }
  };
}

export function forward(type, message) {
  try {
    const words = wordsOf(type);
    if (!Array.isArray(words) || broken) return;
    const line = JSON.stringify({ event: words.length > 1 ? type : null, payload: message }) + "\n";
    server ??= serve(words[0]);
    const stdin = server?.stdin;
    if (!stdin || stdin.writableLength > BACKLOG_LIMIT) return;
    stdin.write(line);
  } catch {
    // reporting is best effort
  }
}

function serve(provider) {
  const child = spawn(PYTHON, [...FLAGS, ARCHIVE, provider, "--serve"], {
    stdio: ["pipe", "ignore", "ignore"],
    windowsHide: true,
    detached: true, // its own process group: a Ctrl-C meant for the harness is not for it
  });
  const gone = () => {
    if (server === child) server = undefined;
  };
  child.on("exit", gone);
  child.on("error", (error) => {
    gone();
    if (broken) return;
    broken = true;
    say(`lichhook: ${PYTHON} could not be started (${error?.message}); this session is not reported to lich. ` +
      "Run `lichhook install` again with a Python that exists.");
  });
  child.stdin?.on("error", () => {}); // it died: the next event starts another
  child.unref();
  child.stdin?.unref?.();
  return child;
}
