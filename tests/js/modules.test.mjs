// The opencode and omp modules under node's test runner, bundled as install bundles them
// (tests/js/checkout.mjs), with node itself as the "Python" and a small script standing in for
// `lichhook <provider> --serve`. Run by `node --test tests/js/` (.ci/run runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rendered as bundled } from "./checkout.mjs";

const LICH = { LICH_PORT: "1", LICH_TOKEN: "tok", LICH_SESSION_ID: "card" };

// Stands in for `lichhook <provider> --serve`: keeps its words, its pid and each line.
const SERVE = `
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
for await (const line of createInterface({ input: process.stdin })) {
  appendFileSync(process.env.RECORD_TO, JSON.stringify({ words: process.argv.slice(2), pid: process.pid, line: JSON.parse(line) }) + "\\n");
}
`;

async function rendered(kind, events, python = process.execPath) {
  const folder = mkdtempSync(join(tmpdir(), "lichhook-js-"));
  writeFileSync(join(folder, "serve.mjs"), SERVE);
  const module = await bundled(kind, { python, archive: "serve.mjs", events: Object.fromEntries(events.map((e) => [e, [kind, e]])), folder });
  process.env.RECORD_TO = join(folder, "record.jsonl");
  Object.assign(process.env, LICH);
  return { module, record: process.env.RECORD_TO };
}

async function lines(record, count) {
  for (let i = 0; i < 200 && !(existsSync(record) && readFileSync(record, "utf8").trim().split("\n").length >= count); i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  return existsSync(record) ? readFileSync(record, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
}

test("opencode: each event goes, in order, to one lichhook; any *.asked too", async () => {
  const { module, record } = await rendered("opencode", ["session.status", "*.asked"]);
  const hooks = await module.LichhookPlugin({ directory: "/p" });
  const said = [];
  for (const type of ["session.status", "permission.v2.asked", "question.asked", "message.updated", "session.status"]) {
    const status = said.length === 4 ? "idle" : "busy";
    said.push(await hooks.event({ event: { type, properties: { sessionID: "s", status: { type: status } } } }));
  }
  assert.deepEqual(said, [undefined, undefined, undefined, undefined, undefined]);
  const got = await lines(record, 4);
  assert.deepEqual(got.map((r) => r.line.event), ["session.status", "permission.v2.asked", "question.asked", "session.status"]);
  assert.deepEqual(new Set(got.map((r) => `${r.words.join(" ")} ${r.pid}`)).size, 1);
  assert.deepEqual(got[0].words.slice(-2), ["opencode", "--serve"]);
  assert.equal(got[1].line.payload.directory, "/p");
});

test("omp: an event with no ctx still goes, without an id; the handler returns nothing", async () => {
  const { module, record } = await rendered("omp", ["input", "tool_call"]);
  const handlers = {};
  module.default({ on: (name, fn) => { handlers[name] = fn; } });
  assert.deepEqual(Object.keys(handlers), ["input", "tool_call"]);
  assert.equal(handlers.input({ type: "input" }, undefined), undefined);
  assert.equal(handlers.tool_call({ toolName: "write", input: { path: "a", content: "x".repeat(5000) } },
    { cwd: "/p", sessionManager: { getSessionId: () => "id1" } }), undefined);
  const got = (await lines(record, 2)).map((r) => r.line);
  assert.deepEqual(got[0], { event: "input", payload: { type: "input", session_id: null, session_file: null, parent_session: null } });
  assert.equal(got[1].payload.session_id, "id1");
  assert.equal(got[1].payload.input.content.length, 4096);
});

test("a Python that cannot start is said once in the harness's log, and nothing throws", async () => {
  const { module } = await rendered("omp", ["input"], join(tmpdir(), "no-such-python-here"));
  const handlers = {};
  const logged = [];
  module.default({ on: (name, fn) => { handlers[name] = fn; }, logger: { warn: (m) => logged.push(m) } });
  for (let i = 0; i < 3; i++) {
    assert.equal(handlers.input({ type: "input" }, {}), undefined);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(logged.length, 1);
  assert.match(logged[0], /could not be started/);
});

test("outside lich nothing is subscribed: a variable missing or blank, or a LICH_PORT that is not a port", async () => {
  const { module } = await rendered("omp", ["input"]);
  const hooks = (await rendered("opencode", ["session.status"])).module;
  for (const [name, value] of [["LICH_TOKEN", undefined], ["LICH_SESSION_ID", " \t"], ["LICH_PORT", "0"],
    ["LICH_PORT", "65536"], ["LICH_PORT", "80; rm"], ["LICH_PORT", "+80"], ["LICH_PORT", "\u0663"]]) {
    Object.assign(process.env, LICH);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    const names = [];
    module.default({ on: (event) => names.push(event) });
    assert.deepEqual(names, [], `${name}=${value}`);
    assert.deepEqual(await hooks.LichhookPlugin({ directory: "/p" }), {}, `${name}=${value}`);
  }
  Object.assign(process.env, LICH);
});

test("a long argument is cut to 4096 UTF-16 units, never through a character", async () => {
  const { module, record } = await rendered("omp", ["tool_call"]);
  const handlers = {};
  module.default({ on: (name, fn) => { handlers[name] = fn; } });
  const content = "x".repeat(4095) + "\u{1F600}" + "y";
  handlers.tool_call({ toolName: "write", input: { content, path: "short" } }, {});
  const [got] = (await lines(record, 1)).map((r) => r.line.payload.input);
  assert.deepEqual(got, { content: "x".repeat(4095), path: "short" });
});
