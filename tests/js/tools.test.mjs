// lich's tools in the opencode module, under node's test runner: the module bundled as install
// bundles it (tests/js/checkout.mjs), opencode's `@opencode-ai/plugin` stood in by a package giving
// a schema builder that keeps what it is told, and lich's command line by a script that records
// its argv.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rendered } from "./checkout.mjs";

const POSIX = process.platform !== "win32"; // the stand-in lich is a script with a #! line

const PLUGIN = `
const field = (type) => ({ type, describe(d) { return { ...this, description: d }; }, optional() { return { ...this, isOptional: true }; } });
export const tool = Object.assign((input) => input, { schema: { string: () => field("string"), number: () => field("number"), boolean: () => field("boolean") } });
`;

// lich's command line: records its argv and pid, then answers as FAKE_LICH says.
const LICH = `#!${process.execPath}
const { appendFileSync } = require("node:fs");
appendFileSync(process.env.FAKE_LICH_RECORD, JSON.stringify({ argv: process.argv.slice(2), pid: process.pid }) + "\\n");
const how = JSON.parse(process.env.FAKE_LICH || "{}");
if (how.hang) setInterval(() => {}, 1000);
else {
  process.stdout.write(how.stdout ?? "answer\\n");
  process.stderr.write(how.stderr ?? "");
  process.exitCode = how.exit ?? 0;
}
`;

async function tools(env = { LICH_PORT: "1", LICH_TOKEN: "tok", LICH_SESSION_ID: "card" }) {
  const folder = mkdtempSync(join(tmpdir(), "lichhook-tools-"));
  const pkg = join(folder, "node_modules", "@opencode-ai", "plugin");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "@opencode-ai/plugin", type: "module", main: "index.js" }));
  writeFileSync(join(pkg, "index.js"), PLUGIN);
  writeFileSync(join(folder, "lich.cjs"), LICH);
  chmodSync(join(folder, "lich.cjs"), 0o755);
  for (const key of ["LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"]) delete process.env[key];
  Object.assign(process.env, env, { LICH_BIN: join(folder, "lich.cjs"), FAKE_LICH_RECORD: join(folder, "calls.jsonl") });
  delete process.env.FAKE_LICH;
  const hooks = await (await rendered("opencode", { folder })).LichhookPlugin({ directory: folder });
  const calls = () => existsSync(process.env.FAKE_LICH_RECORD)
    ? readFileSync(process.env.FAKE_LICH_RECORD, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
  return { tool: hooks.tool, calls };
}

test("lich's fourteen tools, with lich's parameters; the required ones required", async () => {
  const { tool } = await tools();
  assert.deepEqual(Object.keys(tool), ["list_sessions", "send_to_session", "wait_for_answer", "reply_to_session",
    "open_session", "close_session", "rename_session", "control_session", "ask_session", "list_worktrees",
    "list_folders", "file_session", "rename_folder", "color_folder"]);
  const send = tool.send_to_session;
  assert.match(send.description, /^Give another lich session a task\./);
  assert.deepEqual(Object.keys(send.args), ["session", "prompt", "project", "timeout_seconds", "private"]);
  assert.equal(send.args.private.type, "boolean");
  assert.equal(send.args.private.isOptional, true);
  assert.equal(tool.open_session.args.private.type, "boolean");
  assert.equal(send.args.prompt.isOptional, undefined);
  assert.equal(send.args.project.isOptional, true);
  assert.equal(send.args.timeout_seconds.type, "number");
  assert.equal(tool.close_session.args.force.type, "boolean");
});

test("outside lich there is no tool", async () => {
  const { tool } = await tools({});
  assert.equal(tool, undefined);
});

test("a prompt reaches lich as one argument, whatever it holds; the wait is lich's, capped at 90", { skip: !POSIX }, async () => {
  const { tool, calls } = await tools();
  const prompt = `it's "quoted" $(touch /tmp/x) \`id\` ; | & \n second line ü 東 -- --timeout 5`;
  const answer = await tool.send_to_session.execute({ session: "-docs", prompt, timeout_seconds: 500 });
  assert.equal(answer, "answer");
  assert.deepEqual(calls().map((c) => c.argv), [["send", "--timeout", "90", "--", "-docs", prompt]]);
  await tool.wait_for_answer.execute({ ticket: "t-1", timeout_seconds: "7" });
  await tool.wait_for_answer.execute({});
  await tool.control_session.execute({ session: "w", action: "command", args: "now", project: "p" });
  await tool.file_session.execute({ folder: "" });
  await tool.close_session.execute({ session: "w", force: "yes" });
  await tool.open_session.execute({ kind: "claude", worktree: "feat", prompt: "go" });
  assert.deepEqual(calls().slice(1).map((c) => c.argv), [
    ["wait", "--timeout", "7", "--", "t-1"],
    ["wait", "--timeout", "90"],
    ["control", "--project", "p", "--", "w", "command", "", "now"],
    ["file", "--", ""],
    ["close", "--", "w"],
    ["open", "--kind", "claude", "--worktree", "feat", "--prompt", "go"],
  ]);
});

test("private delegation reaches lich as send --private (lich-plugin 0.13.2); only true is consent", { skip: !POSIX }, async () => {
  const { tool, calls } = await tools();
  await tool.send_to_session.execute({ session: "docs", prompt: "p", private: true });
  await tool.send_to_session.execute({ session: "docs", prompt: "p", private: "yes" });
  await tool.open_session.execute({ worktree: "feat", prompt: "go", private: "true" });
  assert.deepEqual(calls().map((c) => c.argv), [
    ["send", "--private", "--timeout", "90", "--", "docs", "p"],
    ["send", "--timeout", "90", "--", "docs", "p"],
    ["open", "--worktree", "feat", "--prompt", "go", "--private"],
  ]);
});

test("lich's refusals come before anything runs, in lich's words", { skip: !POSIX }, async () => {
  const { tool, calls } = await tools();
  const long = "é".repeat(4097);
  assert.equal(await tool.send_to_session.execute({ session: "docs", prompt: long }),
    "prompt is 8194 bytes, over the 8192 limit: name the paths to read instead of pasting their contents");
  assert.match(await tool.file_session.execute({ session: "docs" }), /^name the folder to file the session under/);
  assert.match(await tool.color_folder.execute({ folder: "apps" }), /^name the color to paint the folder/);
  assert.deepEqual(calls(), []);
});

test("answers and errors as lich's command line gives them", { skip: !POSIX }, async () => {
  const { tool } = await tools();
  process.env.FAKE_LICH = JSON.stringify({ stdout: "", stderr: "lich: no session \"x\"\n", exit: 1 });
  assert.equal(await tool.send_to_session.execute({ session: "x", prompt: "p" }), 'lich: no session "x"');
  process.env.FAKE_LICH = JSON.stringify({ stdout: '"w" took the command (abort, id c).\n', exit: 3 });
  assert.equal(await tool.control_session.execute({ session: "w", action: "abort" }), '"w" took the command (abort, id c).');
  process.env.FAKE_LICH = JSON.stringify({ stdout: "[]\n" });
  assert.equal(await tool.list_sessions.execute({}), "No other live sessions.");
  process.env.LICH_BIN = join(tmpdir(), "no-such-lich");
  assert.match(await tool.list_sessions.execute({}), /^could not run .*no-such-lich/);
});

test("a lich that hangs is cut at the tool's cap and leaves no process", { skip: !POSIX }, async () => {
  const { tool, calls } = await tools();
  process.env.FAKE_LICH = JSON.stringify({ hang: true });
  const answer = await tool.wait_for_answer.execute({ ticket: "t", timeout_seconds: 1 });
  assert.match(answer, /did not answer within 16 seconds and was stopped$/);
  const { pid } = calls()[0];
  assert.throws(() => process.kill(pid, 0), { code: "ESRCH" });
});

test("an abort from opencode stops lich at once", { skip: !POSIX }, async () => {
  const { tool } = await tools();
  process.env.FAKE_LICH = JSON.stringify({ hang: true });
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 300);
  const started = Date.now();
  await tool.ask_session.execute({ session: "w", question: "q" }, { abort: abort.signal });
  assert.ok(Date.now() - started < 10000);
});
