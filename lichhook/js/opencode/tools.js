// lich's 14 tools, for opencode: lich reads its plugin as installed with them
// (docs/lich-tools.md). Names, parameters and descriptions are those of lich's MCP server,
// `lich mcp` (omartelo/lich internal/cli/mcp.go @1f421ec, control.go @3fe97dc2, ask.go
// @19101f7f, folders.go @3465dc89); `private` (send_to_session, open_session) as lich's
// internal/cli/private_test.go @84e814f8 calls it, described in lichhook's words (lich's own
// text for it was not read). Each tool runs lich's own command line ($LICH_BIN, else `lich`)
// with the matching command's argv as an array: no shell ever reads an argument.
import { spawn } from "node:child_process";

const LICH_TOOLS = {
  "list_sessions": {
    "description": "List the other lich sessions that are live right now and can be given work. Returns each session's label (how it is addressed), its project, which agent runs in it, and the state it last reported: `busy` is mid-turn, `done` finished its turn and is free, and `waiting` is blocked on a human — a permission prompt nobody has answered, so that session can take nothing on until someone does. Tell the user a session is waiting instead of sending work into it. An empty state is not reported: only some providers report at all, so it says nothing about whether that session is free.",
    "params": {},
    "required": []
  },
  "send_to_session": {
    "description": "Give another lich session a task. The task is put at that session's prompt as if typed there, or held and delivered when it gets to one — a session on a fresh worktree runs the project's setup script before its agent, and the task waits that out rather than being lost. Returns the answer when it comes back quickly; for anything slower you get a ticket and carry on — when the result is ready, a short note arrives at your own prompt and wait_for_answer collects it, so you never poll. Sessions are addressed by the label on their lich card — call list_sessions for the labels. If you were given a name like `myrepo-a1b2`, that is a peer-roster name from your own cross-session messaging, not a lich label: reach it with your own messaging tool instead of this one.",
    "params": {
      "session": [
        "string",
        "Label of the target session, exactly as list_sessions returns it. Not a peer-roster name."
      ],
      "prompt": [
        "string",
        "What to ask that session's agent to do. Capped at 8 KB: it is typed at a terminal prompt, so name the paths, branches and commits to read rather than pasting a diff or a file — the target has the repository."
      ],
      "project": [
        "string",
        "Project name, needed only when two live sessions share a label."
      ],
      "timeout_seconds": [
        "number",
        "Seconds to hold the line for a quick answer, at most 90 — longer is capped, because a call running past 120s is detached by the client and stops being a wait at all. Running out costs nothing: the answer arrives at your prompt."
      ],
      "private": [
        "boolean",
        "Keep the answer to yourself: no note announces it at this session's prompt, and only wait_for_answer with its ticket returns it. For a sub-agent working inside this session, whose errands are not the session's own."
      ]
    },
    "required": [
      "session",
      "prompt"
    ]
  },
  "wait_for_answer": {
    "description": "Collect the results of tasks you sent with send_to_session. Without a ticket it returns every result that is ready — the one call to make when a [lich] note says results are waiting — and, when none is, holds the line for the next one. With a ticket it waits on that one errand. Use it to pick results up, or when you have nothing to do but wait; results announce themselves at your prompt either way, so there is never a reason to poll.",
    "params": {
      "ticket": [
        "string",
        "A ticket send_to_session returned. Omit to collect everything that is ready."
      ],
      "timeout_seconds": [
        "number",
        "Seconds to hold the line when nothing is ready yet, at most 90. Call again for longer."
      ]
    },
    "required": []
  },
  "reply_to_session": {
    "description": "Answer a task another session gave you. Call this when a message at your prompt came from lich and carried a ticket; whoever asked is blocked until you do. It is the only route back — a peer message does not reach them, because they are waiting on the ticket and reading nothing else.",
    "params": {
      "ticket": [
        "string",
        "The ticket from the message you were given."
      ],
      "answer": [
        "string",
        "Your answer, in full — nothing else is sent back."
      ]
    },
    "required": [
      "ticket",
      "answer"
    ]
  },
  "open_session": {
    "description": "Open a new lich session and start it. Optionally creates a git worktree first and roots the new session in it, which is how you give a task its own checkout instead of sharing yours — and optionally hands it the task in the same call, so fanning work out costs one call per worker instead of two. Returns the names the new session is addressed by, and, when a task came with it, that task's outcome: the answer if it was quick, otherwise a ticket to carry on from, exactly as send_to_session returns one.",
    "params": {
      "project": [
        "string",
        "Project to open the session in, by name. Defaults to your own project."
      ],
      "kind": [
        "string",
        "What the session runs: claude, codex, opencode, omp, crush, or shell. Defaults to the same agent you are."
      ],
      "worktree": [
        "string",
        "Branch name for a git worktree to root the session in. A branch that already exists is checked out as it stands; one that does not is created. Omit to open the session in the project's own directory, beside yours."
      ],
      "base": [
        "string",
        "Branch a new worktree starts from. Defaults to the project's current branch, and is ignored when the worktree branch already exists."
      ],
      "model": [
        "string",
        "Model the new session's provider runs, spelled exactly as that provider's own --model flag takes it — the name or alias, never a lich name for it. Omit to leave the provider on its default. Crush and shell sessions cannot be given one."
      ],
      "prompt": [
        "string",
        "Task to hand the new session as soon as its agent is up. Omit to open it idle and send later. Capped at 8 KB, like send_to_session: name what to read, do not paste it."
      ],
      "private": [
        "boolean",
        "Hand the task over privately, as send_to_session's private does: its answer comes back only to wait_for_answer with the ticket. Needs a prompt."
      ]
    },
    "required": []
  },
  "close_session": {
    "description": "Close a session opened in lich. Closing the last session in a git worktree decides what happens to that checkout, so it needs the worktree argument: keep it on disk (the session is parked, and opening a session on that branch again resumes its conversation) or remove it. A checkout with uncommitted work is only removed with force, because what that discards is in no commit and on no remote. You cannot close the session you are running in.",
    "params": {
      "session": [
        "string",
        "The session to close, by the label on its card or the name it answers to."
      ],
      "project": [
        "string",
        "Project to narrow to, when the same label exists in more than one."
      ],
      "worktree": [
        "string",
        "Required when this is the last session in a worktree: \"keep\" leaves the checkout on disk, \"remove\" deletes it."
      ],
      "force": [
        "boolean",
        "Remove a checkout that still has uncommitted work. Ask the user first."
      ]
    },
    "required": [
      "session"
    ]
  },
  "rename_session": {
    "description": "Rename a lich session: the name on its card, which is also the name it is addressed by. Omit the session to rename your own — the way a card comes to say what the work in it is, rather than the number it was born with. A name another session in that project already holds is refused, because two sessions under one name is the one thing send_to_session cannot resolve. The name becomes the user's: the provider's own auto-title never overwrites it again.",
    "params": {
      "label": [
        "string",
        "The new name for the card."
      ],
      "session": [
        "string",
        "Session to rename, by the label on its card or the name it answers to. Omit to rename the session you are running in."
      ],
      "project": [
        "string",
        "Project to narrow to, when the same label exists in more than one."
      ]
    },
    "required": [
      "label"
    ]
  },
  "control_session": {
    "description": "Drive another running Claude Code session in lich: type a prompt into it, stop the turn it is running, set the model or reasoning effort its next requests use, or run one of its slash commands, such as compact or clear. It waits up to 10 seconds (60 for a slash command) for the session to confirm. A result saying delivered, with an id, is not a failure: the command still goes through. One the session never took fails, and nothing ran. Claude Code sessions only, and never your own. model and effort change that session only; the slash commands /model and /effort are refused because Claude Code would save them as the user's default for every new session.",
    "params": {
      "session": [
        "string",
        "The session to drive, by the label on its card, the name it answers to or its lich id."
      ],
      "action": [
        "string",
        "One of prompt, abort, model, effort, command."
      ],
      "value": [
        "string",
        "prompt: the text (required). model: the model name, or omit to go back to the session's own. effort: low, medium, high, xhigh or max, or omit likewise. command: the slash command's name, with or without the slash (required). abort: omit."
      ],
      "args": [
        "string",
        "command only: what follows the command's name, as typed."
      ],
      "project": [
        "string",
        "Project to narrow to, by name or by directory path, when the same label exists in more than one."
      ]
    },
    "required": [
      "session",
      "action"
    ]
  },
  "ask_session": {
    "description": "Ask another running Claude Code session in lich a side question and get its answer, without interrupting it: it answers from its own conversation while its turn goes on, and neither the question nor the answer enters that conversation. It sees the conversation as of its last finished reply, not the step it is taking right now, and cannot use tools to find out more. Waits up to 90 seconds; ask for a brief answer. Claude Code sessions only, and never your own. Experimental: may change outside semver.",
    "params": {
      "session": [
        "string",
        "The session to ask, by the label on its card, the name it answers to or its lich id."
      ],
      "question": [
        "string",
        "The question."
      ],
      "project": [
        "string",
        "Project to narrow to, by name or by directory path, when the same label exists in more than one."
      ]
    },
    "required": [
      "session",
      "question"
    ]
  },
  "list_worktrees": {
    "description": "The git worktrees of a project: what each is called, whether it has uncommitted work, and which sessions are open in it. Use it before opening a session on a branch (one that is already checked out is opened, not created) and before closing one (the last session in a checkout decides its fate).",
    "params": {
      "project": [
        "string",
        "Project to list. Defaults to your own."
      ]
    },
    "required": []
  },
  "list_folders": {
    "description": "The sidebar folders of a project: each folder's name and the sessions filed under it, by label. A folder groups sessions by the work they are on rather than the checkout they live in, and exists only while a session is filed under it. Use it before filing a session, to reuse a name exactly: names are matched as written, so \"apps\" beside \"Apps\" is a second folder.",
    "params": {
      "project": [
        "string",
        "Project to list, by name or by directory path. Defaults to your own."
      ]
    },
    "required": []
  },
  "file_session": {
    "description": "Move a lich session into a sidebar folder, the window's \"Move to folder\". Omit the session to file your own. A session is in at most one folder, so filing it moves it; a folder no session carries yet starts existing with this one in it, and an empty folder takes the session out of the one it is in.",
    "params": {
      "folder": [
        "string",
        "Folder to file the session under, exactly as list_folders names it, or a new name. An empty string takes the session out of its folder."
      ],
      "session": [
        "string",
        "Session to file, by the label on its card or the name it answers to. Omit to file the session you are running in."
      ],
      "project": [
        "string",
        "Project to narrow to, by name or by directory path, when the same label exists in more than one."
      ]
    },
    "required": [
      "folder"
    ]
  },
  "rename_folder": {
    "description": "Rename a sidebar folder across every session filed under it (the window's \"Rename folder\"), or, with an empty new name, take it apart: its sessions go back among their checkout's cards. Renaming onto a name the project already has merges the two folders. Returns every session that moved.",
    "params": {
      "folder": [
        "string",
        "The folder to rename, exactly as list_folders names it."
      ],
      "to": [
        "string",
        "Its new name. An empty string takes the folder apart."
      ],
      "project": [
        "string",
        "Project the folder is in, by name or by directory path. Defaults to your own."
      ]
    },
    "required": [
      "folder",
      "to"
    ]
  },
  "color_folder": {
    "description": "Paint every session filed under a sidebar folder with one color, the window's folder \"Color\", or with an empty color hand them back to the theme. A folder has no color of its own: it shows the one its cards share, so a card filed later keeps its own. Returns every session painted.",
    "params": {
      "folder": [
        "string",
        "The folder to paint, exactly as list_folders names it."
      ],
      "color": [
        "string",
        "One of red, orange, amber, green, teal, blue, violet, pink. An empty string clears it."
      ],
      "project": [
        "string",
        "Project the folder is in, by name or by directory path. Defaults to your own."
      ]
    },
    "required": [
      "folder",
      "color"
    ]
  }
};

const MAX_WAIT = 90; // seconds: lich's mcpMaxWait
const PROMPT_LIMIT = 8192; // bytes: lich's relay promptLimit
const SLACK = 15; // seconds past lich's own longest wait before a silent lich is cut
const OUTPUT_LIMIT = 1 << 20; // bytes of lich's answer kept
const RESULTS = new Set([0, 2, 3]); // exits that are answers: done, ended, still pending

// The arguments, read as leniently as lich's mcpArgs reads them.
function text(args, key) {
  const value = args?.[key];
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
}

function seconds(args, key) {
  const value = args?.[key];
  let asked = 0;
  if (typeof value === "number" && Number.isFinite(value)) asked = Math.trunc(value);
  else if (typeof value === "string") asked = parseInt(/^\s*[+-]?\d+/.exec(value)?.[0] ?? "0", 10);
  return asked <= 0 || asked > MAX_WAIT ? MAX_WAIT : asked;
}

// Only a boolean, or the string "true", is consent (it can discard uncommitted work).
function flag(args, key) {
  return args?.[key] === true || args?.[key] === "true";
}

function options(args, ...keys) {
  return keys.flatMap((key) => (text(args, key) ? ["--" + key, text(args, key)] : []));
}

// lich's own refusals, said before anything runs.
function tooLong(prompt) {
  const bytes = Buffer.byteLength(prompt, "utf8");
  if (bytes <= PROMPT_LIMIT) return undefined;
  return `prompt is ${bytes} bytes, over the ${PROMPT_LIMIT} limit: name the paths to read instead of pasting their contents`;
}

const UNNAMED = {
  folder: "name the folder to file the session under; an empty one takes the session out of the folder it is in",
  to: "name the folder's new name; an empty one takes the folder apart",
  color: "name the color to paint the folder; an empty one clears it",
};

function named(args, key) {
  return args && typeof args === "object" && key in args ? undefined : UNNAMED[key];
}

// lich send --private (lich-plugin 0.13.2; lich's MCP reads the flag as `flag` does here).
function privately(args) {
  return flag(args, "private") ? ["--private"] : [];
}

function maybe(value) {
  return value ? [value] : [];
}

// tool -> args -> [argv, seconds before lich is cut], or the text of lich's refusal.
const COMMANDS = {
  list_sessions: () => [["sessions", "--json"], 30],
  send_to_session: (a) => tooLong(text(a, "prompt")) ?? [["send", ...privately(a), ...options(a, "project"), "--timeout",
    String(seconds(a, "timeout_seconds")), "--", text(a, "session"), text(a, "prompt")], seconds(a, "timeout_seconds") + SLACK],
  wait_for_answer: (a) => [["wait", "--timeout", String(seconds(a, "timeout_seconds")),
    ...(text(a, "ticket") ? ["--", text(a, "ticket")] : [])], seconds(a, "timeout_seconds") + SLACK],
  reply_to_session: (a) => [["reply", "--", text(a, "ticket"), text(a, "answer")], 30],
  open_session: (a) => tooLong(text(a, "prompt")) ??
    [["open", ...options(a, "project", "kind", "worktree", "base", "model", "prompt"), ...privately(a)], 80 + SLACK],
  close_session: (a) => [["close", ...options(a, "project", "worktree"), ...(flag(a, "force") ? ["--force"] : []),
    "--", text(a, "session")], 60 + SLACK],
  rename_session: (a) => [["rename", ...options(a, "project"), "--", ...maybe(text(a, "session")), text(a, "label")], 30],
  control_session: (a) => {
    const rest = [text(a, "value"), text(a, "args")];
    while (rest.length && rest[rest.length - 1] === "") rest.pop();
    return [["control", ...options(a, "project"), "--", text(a, "session"), text(a, "action"), ...rest], 60 + SLACK];
  },
  ask_session: (a) => [["ask", ...options(a, "project"), "--", text(a, "session"), text(a, "question")], MAX_WAIT + SLACK],
  list_worktrees: (a) => [["worktrees", "--json", ...options(a, "project")], 30],
  list_folders: (a) => [["folders", "--json", ...options(a, "project")], 30],
  file_session: (a) => named(a, "folder") ??
    [["file", ...options(a, "project"), "--", ...maybe(text(a, "session")), text(a, "folder")], 30],
  rename_folder: (a) => named(a, "to") ?? [["rename-folder", ...options(a, "project"), "--", text(a, "folder"), text(a, "to")], 30],
  color_folder: (a) => named(a, "color") ??
    [["color-folder", ...options(a, "project"), "--", text(a, "folder"), text(a, "color")], 30],
};

// Runs lich and answers as its command line does: its output on an answer (exit 0, 2 or 3),
// else what it said on stderr (else stdout, else its exit). Always resolves; no process outlives
// the cap or an abort.
function runLich(argv, capSeconds, signal) {
  const program = process.env.LICH_BIN || "lich";
  return new Promise((resolve) => {
    let child;
    let settled = false;
    let cut = false;
    const out = [];
    const err = [];
    const sizes = [0, 0];
    const settle = (answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener?.("abort", stop);
      resolve(answer);
    };
    const stop = () => {
      cut = true;
      try {
        child?.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, capSeconds * 1000);
    try {
      child = spawn(program, argv, { stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
    } catch (error) {
      settle(`could not run ${program}: ${error?.message ?? error}`);
      return;
    }
    signal?.addEventListener?.("abort", stop, { once: true });
    const keep = (chunks, k) => (chunk) => {
      if (sizes[k] < OUTPUT_LIMIT) chunks.push(chunk.subarray(0, OUTPUT_LIMIT - sizes[k]));
      sizes[k] += chunk.length;
    };
    child.stdout.on("data", keep(out, 0));
    child.stderr.on("data", keep(err, 1));
    child.on("error", (error) => settle(`could not run ${program}: ${error?.message ?? error}`));
    child.on("close", (code) => {
      if (cut) return settle(`${program} did not answer within ${capSeconds} seconds and was stopped`);
      const stdout = Buffer.concat(out).toString("utf8").replace(/\n$/, "");
      const stderr = Buffer.concat(err).toString("utf8").replace(/\n$/, "");
      if (RESULTS.has(code)) return settle(stdout);
      settle(stderr || stdout || `${program} exited ${code}`);
    });
  });
}

async function callLich(name, args, signal) {
  try {
    const command = COMMANDS[name](args ?? {});
    if (typeof command === "string") return command;
    const answer = await runLich(command[0], command[1], signal);
    return name === "list_sessions" && answer.trim() === "[]" ? "No other live sessions." : answer;
  } catch (error) {
    return `lich's ${name} failed here: ${error?.message ?? error}`;
  }
}

// opencode's plugin tools, built with the zod opencode hands plugins (`tool.schema`); none
// when that package cannot be loaded.
export async function lichTools() {
  try {
    const schema = (await import("@opencode-ai/plugin"))?.tool?.schema;
    if (!schema) return undefined;
    const tools = {};
    for (const [name, spec] of Object.entries(LICH_TOOLS)) {
      const args = {};
      for (const [key, [type, description]] of Object.entries(spec.params)) {
        const field = (type === "number" ? schema.number() : type === "boolean" ? schema.boolean() : schema.string())
          .describe(description);
        args[key] = spec.required.includes(key) ? field : field.optional();
      }
      tools[name] = {
        description: spec.description,
        args,
        execute: (input, context) => callLich(name, input, context?.abort),
      };
    }
    return tools;
  } catch {
    return undefined;
  }
}
