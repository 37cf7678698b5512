"""A stand-in for lich's command line (the ``lich`` binary), for tests and the e2e.

``install(folder, record)`` writes an executable ``lich`` into ``folder`` that runs this
file; every run appends one JSON line to ``record``: ``{"argv", "stdin", "env", "cwd"}``
(``env``: the ``LICH_*`` variables it was given; ``stdin``: null, except for ``mcp``, which
records one line a message it read, with that message).
``calls(record)`` reads them back. A script (``LICHCLI_SCRIPT`` in the environment, or the
``script`` given to ``install``) may make a command answer otherwise:
``{"<command>": {"stdout": "...", "stderr": "...", "exit": 3, "sleep": 5}}``.

Where each shape comes from, all in omartelo/lich:

- Argument parsing: Go's ``flag`` package with ``newFlagSet`` (``internal/cli/cli.go`` @1f421ec):
  flags before the first positional, ``--`` ends them, ``-name``/``--name``, ``=value`` or the
  next word; a wrong count is ``lich: usage: <line>`` on stderr, exit 1 (``usageError`` and the
  ``commands`` table of ``internal/cli/help.go`` @1f421ec); a failure is ``lich: <error>``, exit 1
  (``client.run``).
- ``sessions --json``: ``[relay.Peer]`` = ``{label, name, project, kind, state, id}``
  (``internal/relay/relay.go`` @1f421ec; ``id``, the session's ``LICH_SESSION_ID``, from lich
  0.60, ``docs/cli.md`` @54883649).
- ``send``/``wait <ticket>`` with ``--json``: ``relay.Result`` = ``{ticket, target, status,
  answer}``; plain: the answer alone (``client.report``). The prompt limit (8192 bytes) and its
  error text: ``relay.Service.Send``.
- ``reply``: ``Answer sent.`` (``client.reply``).
- ``open [--project] [--kind] [--worktree] [--base] [--model] [--effort] [--ultracode]
  [--folder] [--prompt [--private | --subagent]] [--json]``: ``spawn.Session`` fields at the
  top level and ``delivery`` (``relay.Result``) beside them (``opening`` in cli.go @1f421ec;
  the JSON example and the rules of ``--subagent`` in ``docs/cli.md`` @54883649; its argv and
  refusals in ``internal/cli/subagent_test.go`` @cbf23530): ``--subagent`` needs ``--prompt``
  and ``LICH_SESSION_ID`` and refuses ``--project``, ``--folder`` and ``--private`` before
  opening; a prompt over the limit, or a hand-off that failed, still prints the session it
  opened, without ``delivery``, and exits 1. A worker opened here is listed by ``sessions``
  (state ``busy``) until ``close`` closes it; the stand-in keeps them in ``<record>.sessions``.
  A script's ``open`` may say ``{"fail": "before"}`` (nothing opened, exit 1),
  ``{"fail": "after"}`` (opened, the task never reached it) or ``{"status": ..., "answer":
  ...}`` (the delivery's outcome; ``pending`` by default for a sub-agent).
- ``close`` (a session cannot close itself, ``docs/cli.md`` @54883649), ``rename``,
  ``worktrees --json`` (``[spawn.Checkout]`` = ``{name, path, dirty,
  sessions}``, ``internal/spawn/worktrees.go`` @1f421ec).
- ``control`` (2-4 positionals; exit 0 done, 2 ended, 3 pending) ``internal/cli/control.go``
  @3fe97dc2; ``--json``: ``{id, project, label, action, value?, command_id, state}``
  (``docs/cli.md`` @54883649); ``ask`` (2+ positionals, joined) ``internal/cli/ask.go`` @19101f7f; ``folders
  --json`` (``[{name, sessions}]``), ``file``, ``rename-folder``, ``color-folder``
  ``internal/cli/folders.go`` @3465dc89.
- ``whoami --json``: not in any lich source that could be read; lich-plugin's self-command mod
  calls it (``hooks/self-command.js`` @75a363a1). Answered here as ``{label, name, project,
  kind, state, id}`` of the calling session, the shape that mod reads.
- ``mcp``: JSON-RPC 2.0, one message a line (``internal/cli/mcp.go``): ``initialize`` echoes
  the client's protocol version, ``tools/list`` names lich's 14 tools, ``tools/call`` answers
  ``{content: [{type: text, text}], isError?}``; an unknown tool is error -32602.
  ``control_session`` aimed at the calling session (its id, or the label or name ``whoami``
  gives it) is refused as lich refuses it, ``"<session>" is this session, and a session cannot
  control itself`` (lich-plugin ``docs/self-command.md``, measured there on Claude Code 2.1.295).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

PROMPT_LIMIT = 8192
EXIT_NO_ANSWER = 2  # control: the session ended before confirming
EXIT_PENDING = 3  # control: taken, not yet confirmed

TOOLS = ("list_sessions", "send_to_session", "wait_for_answer", "reply_to_session", "open_session",
         "close_session", "rename_session", "control_session", "ask_session", "list_worktrees",
         "list_folders", "file_session", "rename_folder", "color_folder")

# name -> (string flags, bool flags, usage line, positionals (min, max))
COMMANDS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], str, Tuple[int, int]]] = {
    "sessions": ((), ("json",), "lich sessions [--json]", (0, 0)),
    "send": (("project", "timeout"), ("json", "private"),
             "lich send [--project <name>] [--timeout <seconds>] [--json] <session> <prompt>", (2, 2)),
    "wait": (("timeout",), ("json",), "lich wait [--timeout <seconds>] [--json] [<ticket>]", (0, 1)),
    "reply": ((), (), "lich reply <ticket> <answer>", (2, 2)),
    "open": (("project", "kind", "worktree", "base", "model", "effort", "folder", "prompt"),
             ("json", "subagent", "private", "ultracode"),
             "lich open [--project <name-or-path>] [--kind <provider>] [--worktree <branch>] [--base <branch>] "
             "[--model <model>] [--effort <level>] [--ultracode] [--folder <name>] "
             "[--prompt <task> [--private | --subagent]] [--json]", (0, 0)),
    "close": (("project", "worktree"), ("force", "json"),
              "lich close [--project <name>] [--worktree keep|remove] [--force] [--json] <session>", (1, 1)),
    "rename": (("project",), ("json",), "lich rename [--project <name>] [--json] [<session>] <label>", (1, 2)),
    "control": (("project",), ("json",),
                "lich control [--project <name>] [--json] <session> <action> [<value>] [<args>]", (2, 4)),
    "ask": (("project",), ("json",), "lich ask [--project <name>] [--json] <session> <question>", (2, 1 << 30)),
    "worktrees": (("project",), ("json",), "lich worktrees [--project <name>] [--json]", (0, 0)),
    "folders": (("project",), ("json",), "lich folders [--project <name>] [--json]", (0, 0)),
    "file": (("project",), ("json",), "lich file [--project <name>] [--json] [<session>] <folder>", (1, 2)),
    "rename-folder": (("project",), ("json",), "lich rename-folder [--project <name>] [--json] <folder> <to>",
                      (2, 2)),
    "color-folder": (("project",), ("json",), "lich color-folder [--project <name>] [--json] <folder> <color>",
                     (2, 2)),
    "whoami": ((), ("json",), "lich whoami [--json]", (0, 0)),
    "mcp": ((), (), "lich mcp", (0, 0)),
}

PEERS = [{"label": "docs", "name": "proj-a1b2", "project": "proj", "kind": "claude", "state": "done", "id": "a1b2"},
         {"label": "worker 2", "name": "proj-c3d4", "project": "proj", "kind": "opencode", "state": "busy",
          "id": "c3d4"}]


class Usage(Exception):
    pass


def parse(command: str, args: List[str]) -> Tuple[Dict[str, object], List[str]]:
    """(flags, positionals) as Go's flag package reads ``args``; raises Usage (the
    command's usage line) or ValueError (flag package's own error text)."""
    strings, bools, line, (least, most) = COMMANDS[command]
    flags: Dict[str, object] = {}
    rest = list(args)
    while rest:
        word = rest[0]
        if word == "--":
            rest.pop(0)
            break
        if len(word) < 2 or not word.startswith("-"):
            break
        rest.pop(0)
        name = word.lstrip("-") if word.startswith("--") and len(word) > 2 else word[1:]
        name, has_value, value = name.partition("=")
        if name in bools:
            flags[name] = (value != "false") if has_value else True
        elif name in strings:
            if not has_value:
                if not rest:
                    raise ValueError(f"flag needs an argument: -{name}")
                value = rest.pop(0)
            if name == "timeout" and not value.lstrip("-").isdigit():
                raise ValueError(f'invalid value "{value}" for flag -{name}: parse error')
            flags[name] = int(value) if name == "timeout" else value
        else:
            raise ValueError(f"flag provided but not defined: -{name}")
    if not least <= len(rest) <= most:
        raise Usage(line[len("lich "):])
    return flags, rest


def answer(command: str, flags: Dict[str, object], pos: List[str], env: Dict[str, str],
           opened: Optional[List[dict]] = None, plan: Optional[dict] = None) -> Tuple[str, int]:
    """(stdout, exit code) of a well-formed command, as lich words it; ``opened`` holds the
    sub-agent workers opened so far (updated in place), ``plan`` the script's entry."""
    as_json = bool(flags.get("json"))
    opened = [] if opened is None else opened
    if command == "sessions":
        peers = PEERS + [{k: w[k] for k in ("label", "name", "project", "kind", "state", "id")}
                         for w in opened if not w.get("closed")]
        return (json.dumps(peers) + "\n") if as_json else "".join(
            f"{p['label']}\t{p['project']}\t{p['kind']}\t{p['name']}\t{p['state']}\n" for p in peers), 0
    if command == "open" and flags.get("subagent"):
        return subagent(flags, env, opened, plan or {})
    if command in ("send", "wait") or (command == "open" and flags.get("prompt")):
        prompt = pos[1] if command == "send" else str(flags.get("prompt", ""))
        if command != "wait" and len(prompt.encode("utf-8")) > PROMPT_LIMIT:
            raise RuntimeError(f"prompt is {len(prompt.encode('utf-8'))} bytes, over the {PROMPT_LIMIT} limit: "
                               "name the paths to read instead of pasting their contents")
        target = pos[0] if command == "send" else "docs"
        result = {"ticket": "t-1", "target": target, "status": "answered", "answer": f"done: {prompt}"}
        if command == "open":
            session = {"id": "s-9", "project": "proj", "label": "worker", "name": "proj-w9", "kind": "claude",
                       "path": ""}
            if as_json:
                return json.dumps(dict(session, delivery=result)) + "\n", 0
            return f'Opened session "worker" (claude) in project "proj".\n{result["answer"]}\n', 0
        return (json.dumps(result) + "\n") if as_json else result["answer"] + "\n", 0
    if command == "reply":
        return "Answer sent.\n", 0
    if command == "open":
        session = {"id": "s-9", "project": "proj", "label": "worker", "name": "proj-w9", "kind": "claude", "path": ""}
        return (json.dumps(session) + "\n") if as_json else 'Opened session "worker" (claude) in project "proj".\n', 0
    if command == "close":
        if pos[0] == env.get("LICH_SESSION_ID"):
            raise RuntimeError("a session cannot close itself")
        worker = next((w for w in opened if not w.get("closed") and pos[0] in (w["id"], w["name"], w["label"])), None)
        if worker:
            worker["closed"] = True
        return f'Closed "{worker["label"] if worker else pos[0]}".\n', 0
    if command == "rename":
        return f'Renamed to "{pos[-1]}".\n', 0
    if command == "control":
        if as_json:
            taken = {"id": "c3d4", "project": "proj", "label": pos[0], "action": pos[1], "command_id": "c-1",
                     "state": "done"}
            return json.dumps(dict(taken, value=pos[2]) if len(pos) > 2 else taken) + "\n", 0
        return f'"{pos[0]}" took the command ({pos[1]}, id c-1).\n', 0
    if command == "ask":
        return f"answer to: {' '.join(pos[1:])}\n", 0
    if command == "worktrees":
        rows = [{"name": "feature", "path": "/work/proj-feature", "dirty": False, "sessions": ["worker 2"]}]
        return json.dumps(rows) + "\n", 0
    if command == "folders":
        return json.dumps([{"name": "apps", "sessions": ["docs"]}]) + "\n", 0
    if command == "file":
        return f'Filed "{pos[0] if len(pos) > 1 else "me"}" under "{pos[-1]}".\n', 0
    if command == "rename-folder":
        return f'Moved "docs" from folder "{pos[0]}" to "{pos[1]}".\n', 0
    if command == "color-folder":
        return f'Painted "docs" in folder "{pos[0]}" {pos[1]}.\n', 0
    if command == "whoami":
        me = {"label": "me", "name": "proj-me", "project": "proj", "kind": "opencode", "state": "busy",
              "id": env.get("LICH_SESSION_ID", "")}
        return json.dumps(me) + "\n", 0
    return "", 0


class Opened(Exception):
    """A failure after lich opened the session: it is printed all the same (stdout), exit 1."""

    def __init__(self, message: str, stdout: str) -> None:
        super().__init__(message)
        self.stdout = stdout


def subagent(flags: Dict[str, object], env: Dict[str, str], opened: List[dict], plan: dict) -> Tuple[str, int]:
    """``open --subagent``: refused before anything is opened, or a worker opened in the
    caller's checkout (or the worktree named) with the task handed over."""
    for flag in ("project", "folder", "private"):
        if flags.get(flag):
            raise ValueError(f"--subagent cannot be used with --{flag}: a subagent opens beside its caller")
    if not flags.get("prompt"):
        raise ValueError("--subagent needs --prompt: a subagent is opened for a task")
    if not env.get("LICH_SESSION_ID"):
        raise ValueError("--subagent needs a calling session (LICH_SESSION_ID): run it inside a lich session")
    if plan.get("fail") == "before":
        raise RuntimeError("reach lich: connection refused")
    n = len(opened) + 1
    worktree = str(flags.get("worktree") or "")
    label = worktree or f"Session {n + 3}"
    wid = f"w{n}"
    session = {"id": wid, "projectId": "p1", "project": "proj", "label": label,
               "name": f"{''.join(c if c.isalnum() else '-' for c in label.lower())}-{wid}", "kind": "claude",
               "path": f"/wt/{worktree}" if worktree else os.getcwd(), "nextSeq": 1,
               "originSessionId": env["LICH_SESSION_ID"], "originLabel": "me", "confined": False, "folder": "me",
               "run": False}
    opened.append(dict(session, state="busy"))
    size = len(str(flags["prompt"]).encode("utf-8"))
    if size > PROMPT_LIMIT:  # lich checks the task only once the session is open
        raise Opened(f"prompt is {size} bytes, over the {PROMPT_LIMIT} limit: name the paths to read instead of "
                     "pasting their contents", json.dumps(session) + "\n")
    if plan.get("fail") == "after":
        raise Opened(f'the task did not reach "{label}": run lich send "{session["name"]}" to try again',
                     json.dumps(session) + "\n")
    status = str(plan.get("status", "pending"))
    delivery = {"ticket": f"t-{n}", "target": label, "status": status,
                "answer": str(plan.get("answer", "")) if status == "answered" else ""}
    return json.dumps(dict(session, delivery=delivery)) + "\n", 0


def run(argv: List[str], env: Dict[str, str], script: Dict[str, dict],
        opened: Optional[List[dict]] = None) -> Tuple[str, str, int]:
    """(stdout, stderr, exit code) of ``lich <argv>``."""
    if not argv:
        return "", "lich: no command\n", 1
    command = argv[0]
    if command not in COMMANDS:
        return "", f'lich: unknown command "{command}"\nRun `lich help` for the list.\n', 1
    scripted = script.get(command)
    if scripted:
        time.sleep(float(scripted.get("sleep", 0)))
        if "exit" in scripted or "stdout" in scripted or "stderr" in scripted:
            return scripted.get("stdout", ""), scripted.get("stderr", ""), int(scripted.get("exit", 0))
    try:
        flags, pos = parse(command, argv[1:])
        out, code = answer(command, flags, pos, env, opened, scripted)
    except Usage as usage:
        return "", f"lich: usage: {usage}\n", 1
    except Opened as error:
        return error.stdout, f"lich: {error}\n", 1
    except (ValueError, RuntimeError) as error:
        return "", f"lich: {error}\n", 1
    return out, "", code


def serve_mcp(stdin, stdout, seen, me: str = "") -> None:
    """lich's ``mcp``: answers until stdin ends; a tool call answers with its name and
    arguments (what lich would run is not the stand-in's business). ``seen(line)`` is
    called with each line as it arrives (a client may kill the server rather than close
    its stdin). ``me``: the calling session's id."""
    for line in stdin:
        seen(line)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or message.get("id") is None:
            continue
        reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
        method = message.get("method")
        params: dict = message["params"] if isinstance(message.get("params"), dict) else {}
        if method == "initialize":
            reply["result"] = {"protocolVersion": params.get("protocolVersion") or "2025-06-18",
                               "capabilities": {"tools": {}}, "serverInfo": {"name": "lich", "version": "stand-in"}}
        elif method == "tools/list":
            reply["result"] = {"tools": [{"name": n, "description": n, "inputSchema": {
                "type": "object", "properties": {}, "required": []}} for n in TOOLS]}
        elif method == "tools/call" and params.get("name") in TOOLS:
            arguments = params.get("arguments") or {}
            text = json.dumps({"tool": params["name"], "arguments": arguments})
            reply["result"] = {"content": [{"type": "text", "text": text}]}
            named = str(arguments.get("session", "")).lower()  # lich matches a session regardless of case
            if params["name"] == "control_session" and named in {me.lower() or "me", "me", "proj-me"}:
                reply["result"] = {"content": [{"type": "text", "text": f'"{arguments["session"]}" is this session, '
                                                "and a session cannot control itself"}], "isError": True}
        elif method == "tools/call":
            reply["error"] = {"code": -32602, "message": f"unknown tool {params.get('name')}"}
        elif method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"unknown method {method}"}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def main(record: str, script_path: Optional[str]) -> int:
    argv = sys.argv[1:]
    env = {k: v for k, v in os.environ.items() if k.startswith("LICH_")}
    script_path = os.environ.get("LICHCLI_SCRIPT") or script_path
    script = json.loads(Path(script_path).read_text("utf-8")) if script_path else {}
    entry: dict = {"argv": argv, "stdin": None, "env": env, "cwd": os.getcwd()}
    if argv[:1] == ["mcp"]:
        serve_mcp(sys.stdin, sys.stdout, lambda line: _append(record, dict(entry, stdin=line)),
                  env.get("LICH_SESSION_ID", ""))
        return 0
    _append(record, entry)
    state = Path(record + ".sessions")
    opened = json.loads(state.read_text("utf-8")) if state.exists() else []
    out, err, code = run(argv, env, script, opened)
    state.write_text(json.dumps(opened), "utf-8")
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


def _append(record: str, entry: dict) -> None:
    with open(record, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def install(folder: Path, record: Path, script: Optional[Path] = None) -> Path:
    """Write an executable ``lich`` into ``folder`` recording into ``record``; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "lich"
    program.write_text(f"#!{sys.executable}\n" + program_text(str(record), str(script) if script else None), "utf-8")
    program.chmod(0o755)
    return program


def program_text(record: str, script: Optional[str] = None) -> str:
    """This file as a program recording into ``record``; it writes UTF-8 and bare newlines,
    as lich does (a Windows Python would write the code page and CRLF)."""
    tail = ("\nif __name__ == '__main__':\n    for stream in (sys.stdout, sys.stderr):\n"
            "        stream.reconfigure(encoding='utf-8', newline='\\n')  # type: ignore[attr-defined]\n"
            f"    sys.exit(main({record!r}, {script!r}))\n")
    return Path(__file__).read_text("utf-8") + tail


def calls(record: Path) -> List[dict]:
    """Every recorded run, oldest first (an ``mcp`` run once a message)."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text("utf-8").splitlines() if line.strip()]
