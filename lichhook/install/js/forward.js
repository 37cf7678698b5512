// How both modules run lichhook: written into each by install, in place of its @FORWARD@ line.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Written by install: the interpreter, the archive, the interpreter's options (-I keeps the
// project's PYTHONPATH and folder out, -S skips site) and, for each event to forward, the
// command words after the archive (from the harness's descriptor in lichhook).
const PYTHON = "@PYTHON@";
const ARCHIVE = "@ARCHIVE@";
const FLAGS = "@FLAGS@";
const EVENTS = "@EVENTS@";

// How long one lichhook may hold the next back: it gives up well within this.
const TURN_MS = 5000;
// Events waiting for their turn; past this many, the oldest goes (lich shows only the last).
const QUEUE_LIMIT = 200;
// A tool's arguments can hold a whole file; the card shows 120 characters of them.
const TEXT_LIMIT = 4096;

function forwards(type) {
  return Object.prototype.hasOwnProperty.call(EVENTS, type);
}

function insideLich() {
  const env = process.env;
  return ["LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"].every(
    (name) => typeof env[name] === "string" && env[name].trim() !== "",
  );
}

// A copy of a tool's arguments with every long string cut.
function shortened(args) {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const copy = {};
  for (const [key, value] of Object.entries(args)) {
    copy[key] = typeof value === "string" && value.length > TEXT_LIMIT ? value.slice(0, TEXT_LIMIT) : value;
  }
  return copy;
}

// One lichhook runs at a time, in the order the events came, so lich gets one session's
// reports in that order (it shows the last one it got). The next starts when the previous
// exited, or after TURN_MS. The harness never waits: forward() only queues, and nothing
// here keeps the harness's process alive. When the harness exits, what is still queued
// starts at once, in order.
const queue = [];
let running = false;
let hooked = false;

function forward(type, message) {
  try {
    const words = forwards(type) ? EVENTS[type] : undefined;
    if (!Array.isArray(words)) return;
    queue.push([words, JSON.stringify(message)]);
    if (queue.length > QUEUE_LIMIT) queue.shift();
    if (!hooked) {
      hooked = true;
      process.on("exit", () => {
        for (const item of queue.splice(0)) start(item, () => {});
      });
    }
    if (!running) next();
  } catch {
    // reporting is best effort
  }
}

function next() {
  const item = queue.shift();
  running = item !== undefined;
  if (!running) return;
  let moved = false;
  const timer = setTimeout(() => go(), TURN_MS);
  timer.unref?.();
  const go = () => {
    if (moved) return;
    moved = true;
    clearTimeout(timer);
    next();
  };
  start(item, go);
}

// Starts one lichhook with `body` on its stdin; `done` runs once it exited or could not
// start. No failure (a missing Python, a full disk, a closed pipe) reaches the harness.
function start([words, body], done) {
  // The body goes in a file of its own, written before lichhook starts: a pipe is written
  // later, and not at all once the harness exits (under Bun, which runs opencode and omp).
  let file;
  try {
    file = bodyFile(body);
  } catch {
    file = undefined;
  }
  let finish = done;
  try {
    const child = spawn(PYTHON, [...FLAGS, ARCHIVE, ...words], {
      stdio: [file ? file.fd : "pipe", "ignore", "ignore"],
      windowsHide: true,
      detached: true,
    });
    if (file) finish = () => { remove(file.path); done(); };
    child.on("error", finish);
    child.on("exit", finish);
    if (child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(body);
    }
    child.unref();
  } catch {
    finish();
  } finally {
    if (file) {
      try { closeSync(file.fd); } catch {}
      remove(file.path); // lichhook holds it open; where it cannot go yet, it goes when lichhook exits
    }
  }
}

function remove(path) {
  try { unlinkSync(path); } catch {}
}

// A new file only this user can read, holding `body`, opened for reading.
function bodyFile(body) {
  const path = join(tmpdir(), `lichhook-${process.pid}-${randomUUID()}.json`);
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, body);
  } finally {
    closeSync(fd);
  }
  try {
    return { path, fd: openSync(path, "r") };
  } catch (error) {
    remove(path);
    throw error;
  }
}
