// A stand-in for Claude Code's `$` and `on` and for lich, on a fake clock, to run
// lichhook's Claude Code mods (lichhook/js/claude) under node's test runner.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON, ROOT } from "./checkout.mjs";

export const RELEASE = "9.8.7";
export const LICH = { LICH_PORT: "4567", LICH_TOKEN: "t k", LICH_SESSION_ID: "card/1" };

// The mods as install writes them (lichhook.install.plugin.claudemods, run by Python from this
// checkout): every file the plugin carries, the release number in.
export async function loadMods() {
  const folder = mkdtempSync(join(tmpdir(), "lichhook-mods-"));
  const code = "import json, sys; from lichhook.install.plugin import claudemods; "
    + "json.dump({path: data.decode() for path, data in claudemods.files(sys.argv[1]).items()}, sys.stdout)";
  const files = JSON.parse(execFileSync(PYTHON, ["-c", code, RELEASE], { cwd: ROOT }).toString("utf8"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
  return import(pathToFileURL(join(folder, "hooks", "claude", "lich.js")).href);
}

export const flush = async () => {
  for (let i = 0; i < 30; i++) await new Promise((resolve) => setImmediate(resolve));
};

// A lich: `routes[path]` answers each request ({status, text}, a promise of one, or a
// function of the request); a path with no route answers 204. Every request is kept.
export function fakeLich(routes = {}) {
  const lich = { requests: [], routes };
  lich.fetch = (url, init = {}) => {
    const u = new URL(url);
    const request = {
      url, path: u.pathname, query: Object.fromEntries(u.searchParams), method: init.method || "GET",
      headers: init.headers || {}, body: init.body === undefined ? undefined : JSON.parse(init.body),
    };
    lich.requests.push(request);
    let route = routes[request.path];
    if (typeof route === "function") route = route(request);
    if (Array.isArray(route)) route = route.length > 1 ? route.shift() : route[0];
    if (route instanceof Error) return Promise.reject(route);
    return Promise.resolve(route === undefined ? { status: 204, ok: true, headers: {}, text: "" } : route);
  };
  lich.to = (path) => lich.requests.filter((r) => r.path === path);
  return lich;
}

export const json = (value, status = 200) => ({ status, ok: status < 300, headers: {}, text: JSON.stringify(value) });
export const never = () => new Promise(() => {});

export function fakeClaude(options = {}) {
  const env = options.env === undefined ? LICH : options.env;
  const lich = options.lich || fakeLich();
  const clock = { now: 1_000_000, timers: [] };
  const seen = { invalidates: [], submits: [], aborts: [], commands: [], forks: [], files: { ...(options.files || {}) }, runs: [] };
  const timer = (ms, fn, every) => {
    const t = { at: clock.now + ms, ms, fn, every, live: true };
    clock.timers.push(t);
    return { cancel: () => { t.live = false; } };
  };
  const $ = {
    env: { get: async (name) => env[name] }, // a promise, as in Claude Code
    http: { fetch: (url, init) => lich.fetch(url, init) },
    clock: { now: async () => clock.now, after: (ms, fn) => timer(ms, fn, false), every: (ms, fn) => timer(Math.max(1, ms), fn, true) },
    prompt: { submit: async (args) => { seen.submits.push(args); return options.submit ? options.submit(args) : { text: args.text }; } },
    turn: { abort: async (args) => { seen.aborts.push(args); } },
    command: { run: async (args) => { seen.commands.push(args); return options.command ? options.command(args) : { text: "" }; } },
    model: { fork: async (args) => { seen.forks.push(args); return options.fork ? options.fork(args) : { isAnswered: true, text: "fine", usage: {} }; } },
    session: { id: async () => "conv-1" },
    ui: { invalidate: (event) => { seen.invalidates.push(event); } },
    process: { run: async (argv, init) => { seen.runs.push({ argv, init }); return options.git ? options.git(argv) : { exitCode: 128, stdout: "", stderr: "" }; } },
    fs: {
      exists: async (path) => path in seen.files,
      read: async (path) => seen.files[path],
      write: async (path, text) => { seen.files[path] = text; },
    },
  };
  const hooks = [];
  const on = (event, matcher, hook) => {
    if (typeof matcher === "function") [matcher, hook] = [{}, matcher];
    const registration = { event, matcher, hook };
    hooks.push(registration);
    return { catch: (handler) => { registration.caught = handler; } };
  };
  const matches = (h, event, e) => h.event === event && Object.entries(h.matcher).every(([k, v]) => e[k] === v);
  const claude = {
    $, lich, seen, clock, hooks,
    register: (mods) => mods.register(on),
    // Raises `event` as Claude Code does: each matching hook, `next` the engine's answer.
    fire: async (event, e = {}, answer = (x) => x) => {
      let result;
      for (const h of hooks.filter((x) => matches(x, event, e))) {
        result = await h.hook($, e, async (x) => answer(x));
      }
      await flush();
      return result;
    },
    step: async (e) => {
      const h = hooks.find((x) => x.event === "turn.step");
      const sent = [];
      async function* engine(x) { sent.push(x); yield { type: "done" }; }
      for await (const _ of h.hook($, e, engine)); // eslint-disable-line no-unused-vars
      return sent[0];
    },
    // Moves the clock on by `ms`, running each timer when it falls due. A mod that keeps
    // setting timers with no time passing fails the test instead of hanging it.
    advance: async (ms) => {
      const end = clock.now + ms;
      for (let ran = 0; ; ran++) {
        if (ran > 10000) throw new Error(`over 10,000 timers by ${clock.now}: a loop that spins`);
        await flush();
        const due = clock.timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        clock.now = Math.max(clock.now, due.at);
        if (due.every) due.at += due.ms;
        else due.live = false;
        due.fn();
      }
      clock.now = end;
      await flush();
    },
    // Draws the footer's mode labels as Claude Code does, its own label "focus" first:
    // the labels handed on to the engine.
    modes: async (props = { modes: ["focus"] }) => {
      const e = { surface: "terminal", component: "SessionMode", requestId: "mode", props };
      let handed = e;
      await claude.fire("ui.render", e, (x) => ((handed = x), { type: "Text" }));
      return handed.props.modes;
    },
    // The label the mods add after Claude Code's own, or undefined.
    footer: async () => {
      const [own, ...added] = await claude.modes();
      assert.equal(own, "focus", "Claude Code's own label stays first");
      assert.ok(added.length <= 1, `one line at most: ${added}`);
      return added[0];
    },
    // How many times the mods asked Claude Code to draw their components again.
    redraws: () => seen.invalidates.filter((event) => event === "ui.render").length,
    liveTimers: () => clock.timers.filter((t) => t.live).length,
  };
  return claude;
}
