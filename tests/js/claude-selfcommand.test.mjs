// The self command (lichhook/js/claude/selfcommand.js) under node's test runner, on the
// fake Claude Code of claude-fake.mjs: a refusal of the Skill tool or of lich's
// control_session aimed at this session queues one of its own built-in slash commands.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LICH, fakeClaude, fakeLich, flush, json, loadMods, never } from "./claude-fake.mjs";

const mods = await loadMods();
const CONTROL = "mcp__lich__control_session";
const COMMANDS = [
  { name: "compact", description: "Compacts.", source: "builtin" },
  { name: "clear", description: "Clears.", source: "builtin" },
  { name: "model", description: "Sets the model.", source: "builtin" },
  { name: "effort", description: "Sets the effort.", source: "builtin" },
  { name: "lint", description: "A plugin's.", source: "plugin" },
];
const SKILL_REFUSAL = { isError: true, result: "compact is a built-in CLI command, not a skill.", text: "compact is a built-in CLI command, not a skill." };
const SELF_REFUSAL = { isError: true, result: "\"docs\" is this session, and a session cannot control itself", text: "refused" };

// A Claude Code session in lich (interactive unless `interactive` is false); `list` answers
// $.command.list, `whoami` answers $.process.run.
async function session({ env, interactive = true, list = async () => COMMANDS, whoami, run } = {}) {
  const lich = fakeLich({ "/mod/commands": () => never(), "/mod/status": json({ owed: [], open: [], ready: [] }) });
  const claude = fakeClaude({ lich, env, git: whoami, command: run });
  claude.seen.toasts = [];
  claude.seen.invalidated = [];
  claude.seen.lists = 0;
  claude.$.command.list = () => { claude.seen.lists += 1; return list(); };
  claude.$.ui.toast = (text) => { claude.seen.toasts.push(text); };
  claude.$.ui.invalidate = (name) => { claude.seen.invalidated.push(name); };
  claude.register(mods);
  await claude.fire("session.start", { cwd: "/w", surface: interactive ? "terminal" : null, isInteractive: interactive });
  return claude;
}

const skill = (claude, input, answer = SKILL_REFUSAL) =>
  claude.fire("tool.call", { tool: "Skill", tool_use_id: "t1", ...input }, () => answer);
const control = (claude, input, answer = SELF_REFUSAL) =>
  claude.fire("tool.call", { tool: CONTROL, tool_use_id: "t2", action: "command", ...input }, () => answer);

test("the Skill tool's refusal of a built-in queues it, to run once the turn has ended", async () => {
  const claude = await session();
  const answer = await skill(claude, { skill: "compact" });
  assert.deepEqual(answer.result, { success: true, commandName: "compact" });
  assert.match(answer.context[0], /^\/compact is queued on this session and runs once your turn has ended\. End your turn now/);
  assert.equal(answer.isError, undefined);
  assert.deepEqual(claude.seen.commands, [], "never run inside the hook the turn waits on");
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, [{ command: "compact", args: "" }]);
  assert.equal(claude.lich.requests.filter((r) => r.path !== "/mod/commands" && r.path !== "/mod/status").length, 0, "nothing is sent to lich");
});

test("arguments ride along, given apart, after the name, with or without the slash", async () => {
  const claude = await session();
  await skill(claude, { skill: "/compact", args: " keep the plan " });
  await skill(claude, { skill: "Compact keep the tests" });
  await control(claude, { session: LICH.LICH_SESSION_ID, value: "/clear" });
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, [
    { command: "compact", args: "keep the plan" },
    { command: "compact", args: "keep the tests" },
    { command: "clear", args: "" },
  ]);
});

test("what the Skill tool answered itself, a plugin's command, or no command name stays the tool's answer", async () => {
  const claude = await session();
  const loaded = { result: { success: true, commandName: "lich:theme" }, text: "loaded" };
  assert.equal(await skill(claude, { skill: "lich:theme" }, loaded), loaded);
  for (const name of ["lint", "nope", "", "../../x", "compact;rm", 42, undefined]) {
    assert.equal(await skill(claude, { skill: name }), SKILL_REFUSAL, String(name));
  }
  await claude.advance(1000);
  assert.deepEqual(claude.seen.commands, []);
});

test("/model and /effort are refused, whatever their case, and never run", async () => {
  const claude = await session();
  for (const name of ["model", "Effort"]) {
    const answer = await skill(claude, { skill: name, args: "opus" });
    const low = name.toLowerCase();
    assert.deepEqual(answer, { deny: `/${low} is not run from inside the session: Claude Code would save it as the default for every new session. Ask the user to set the ${low} from lich, which changes this session only.` });
  }
  const viaControl = await control(claude, { session: LICH.LICH_SESSION_ID, value: "/model", args: "opus" });
  assert.match(viaControl.deny, /^\/model is not run from inside the session/);
  await claude.advance(1000);
  assert.deepEqual(claude.seen.commands, []);
});

test("outside lich, and in a claude -p inside lich, the tools keep their own answers and descriptions", async () => {
  for (const options of [{ env: {} }, { env: { ...LICH, LICH_SESSION_ID: "" } }, { interactive: false }]) {
    const claude = await session(options);
    assert.equal(await skill(claude, { skill: "compact" }), SKILL_REFUSAL);
    assert.equal(await control(claude, { session: LICH.LICH_SESSION_ID, value: "compact" }), SELF_REFUSAL);
    const described = { description: "Runs a skill." };
    assert.equal(await claude.fire("tool.describe", { tool: "Skill", description: "Runs a skill." }, () => described), described);
    await claude.advance(1000);
    assert.deepEqual(claude.seen.commands, []);
    assert.equal(claude.seen.lists, 0);
    assert.deepEqual(claude.seen.invalidated, []);
  }
});

test("a sub-agent's tool call is not the person asking: its refusal stands", async () => {
  const claude = await session();
  const answer = await claude.fire("tool.call", { tool: "Skill", tool_use_id: "t9", skill: "compact", agentId: "a1" }, () => SKILL_REFUSAL);
  assert.equal(answer, SKILL_REFUSAL);
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, []);
});

test("both tools are described with the way in, the control tool with this session's lich id", async () => {
  const claude = await session();
  assert.deepEqual(claude.seen.invalidated, ["tool.describe"], "described again once the session knows it is in lich");
  const skillNote = await claude.fire("tool.describe", { tool: "Skill", description: "Runs a skill." }, (e) => ({ description: e.description, isDeferred: true }));
  assert.match(skillNote.description, /^Runs a skill\.\n\nIn this lich session a built-in slash command of Claude Code/);
  assert.equal(skillNote.isDeferred, true);
  const controlNote = await claude.fire("tool.describe", { tool: CONTROL, description: "Drive another session." }, (e) => ({ description: e.description }));
  assert.match(controlNote.description, /^Drive another session\.\n\nThis session's lich id is card\/1\. Aimed at it, action command runs/);
});

test("control_session aimed at this session by its id is queued and answered as done", async () => {
  const claude = await session();
  const answer = await control(claude, { session: "card/1", value: "compact", args: "keep the plan" });
  assert.deepEqual(answer, { result: "/compact keep the plan is queued on this session and runs once your turn has ended. End your turn now; do not run it again." });
  assert.deepEqual(claude.seen.runs, [], "the id needs no lich whoami");
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, [{ command: "compact", args: "keep the plan" }]);
});

test("by its label or name, as lich whoami prints them (case aside), it is this session too", async () => {
  const whoami = () => ({ exitCode: 0, stdout: JSON.stringify({ label: "Docs", name: "brave-owl", project: "p", kind: "claude", state: "busy", id: "card/1" }), stderr: "" });
  const claude = await session({ env: { ...LICH, LICH_BIN: "/opt/lich" }, whoami });
  assert.deepEqual((await control(claude, { session: "docs", value: "compact" })).result.slice(0, 9), "/compact ");
  assert.deepEqual((await control(claude, { session: "BRAVE-OWL", value: "clear" })).result.slice(0, 7), "/clear ");
  assert.deepEqual(claude.seen.runs[0], { argv: ["/opt/lich", "whoami", "--json"], init: { timeoutMs: 2000 } });
  const other = { isError: true, result: "no session named \"tests\"" };
  assert.equal(await control(claude, { session: "tests", value: "compact" }, other), other);
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands.map((c) => c.command), ["compact", "clear"]);
});

test("when lich whoami fails, lies, or is not there, only the id counts", async () => {
  const answers = [
    () => ({ exitCode: 2, stdout: "", stderr: "lich: unknown command whoami" }),
    () => ({ exitCode: 0, stdout: "not json", stderr: "" }),
    () => ({ exitCode: 0, stdout: JSON.stringify(["docs"]), stderr: "" }),
    () => ({ exitCode: 0, stdout: JSON.stringify({ label: "", name: null }), stderr: "" }),
    () => ({ exitCode: 0, stdout: " ".repeat(70000) + JSON.stringify({ label: "docs" }), stderr: "" }),
    () => { throw new Error("spawn failed"); },
  ];
  for (const whoami of answers) {
    const claude = await session({ env: { ...LICH, LICH_BIN: "/opt/lich" }, whoami });
    assert.equal(await control(claude, { session: "docs", value: "compact" }), SELF_REFUSAL);
    assert.equal(await control(claude, { session: "", value: "compact" }), SELF_REFUSAL);
  }
  const noBin = await session({ whoami: () => assert.fail("no LICH_BIN: nothing is run") });
  assert.equal(await control(noBin, { session: "docs", value: "compact" }), SELF_REFUSAL);
  assert.deepEqual(noBin.seen.runs, []);
});

test("a lich whoami that never answers is given up after 2.5 s", async () => {
  const claude = await session({ env: { ...LICH, LICH_BIN: "/opt/lich" }, whoami: () => never() });
  let answer;
  control(claude, { session: "docs", value: "compact" }).then((a) => { answer = a; });
  await claude.advance(2400);
  assert.equal(answer, undefined);
  await claude.advance(200);
  assert.equal(answer, SELF_REFUSAL);
});

test("what lich answered itself, or another action, stays lich's answer (no whoami asked)", async () => {
  const claude = await session({ env: { ...LICH, LICH_BIN: "/opt/lich" }, whoami: () => assert.fail("not asked") });
  const delivered = { result: "delivered m4 to tests", text: "delivered" };
  assert.equal(await control(claude, { session: "tests", value: "compact" }, delivered), delivered);
  for (const action of ["prompt", "model", "abort", undefined]) {
    assert.equal(await claude.fire("tool.call", { tool: CONTROL, session: "card/1", action, value: "compact" }, () => SELF_REFUSAL), SELF_REFUSAL);
  }
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, []);
  assert.deepEqual(claude.seen.runs, []);
});

test("a command list that fails or never answers leaves the refusal as it was, bounded", async () => {
  const failing = await session({ list: async () => { throw new Error("no list"); } });
  assert.equal(await skill(failing, { skill: "compact" }), SKILL_REFUSAL);
  const odd = await session({ list: async () => ({ compact: true }) });
  assert.equal(await skill(odd, { skill: "compact" }), SKILL_REFUSAL);
  const hanging = await session({ list: () => never() });
  let answer;
  skill(hanging, { skill: "compact" }).then((a) => { answer = a; });
  await hanging.advance(1900);
  assert.equal(answer, undefined);
  await hanging.advance(200);
  assert.equal(answer, SKILL_REFUSAL);
  assert.deepEqual(hanging.seen.commands, []);
});

test("a queued command that fails is told in a toast; nothing escapes into Claude Code", async () => {
  const claude = await session({ run: () => { throw new Error("inside a hook\nthe turn waits on"); } });
  await skill(claude, { skill: "clear" });
  await claude.advance(0);
  assert.deepEqual(claude.seen.toasts, ["/clear did not run: inside a hook the turn waits on"]);
  claude.$.ui.toast = () => { throw new Error("no toast"); };
  await skill(claude, { skill: "clear" });
  await claude.advance(0);
  await flush();
});

test("a session that ends before the queued command's turn is over runs nothing and keeps no timer", async () => {
  const claude = await session();
  await skill(claude, { skill: "compact" });
  await claude.fire("session.end", { reason: "prompt_input_exit" });
  await claude.advance(1000);
  assert.deepEqual(claude.seen.commands, []);
  assert.equal(claude.liveTimers(), 0);
});

test("a /clear keeps the session in lich: a command asked after it is still queued", async () => {
  const claude = await session();
  await claude.fire("session.end", { reason: "clear" });
  await skill(claude, { skill: "compact" });
  await claude.advance(0);
  assert.deepEqual(claude.seen.commands, [{ command: "compact", args: "" }]);
});

test("an engine answer of nothing is handed back as it came", async () => {
  const claude = await session();
  assert.equal(await claude.fire("tool.call", { tool: "Skill", skill: "compact" }, () => undefined), undefined);
  assert.equal(await control(claude, { session: "card/1", value: "compact" }, null), null);
  assert.equal(await claude.fire("tool.describe", { tool: "Skill", description: "x" }, () => undefined), undefined);
});
