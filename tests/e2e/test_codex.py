"""Codex with lichhook installed: the SessionStart hooks run once trusted, doctor says which
are, Codex sees lichhook's MCP server, the model is told its session id for the waits tool, and
a session's whole life as lich sees it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from lichhook.adapters import DESCRIPTORS
from testkit.archive import installed_copy
from testkit.constants import LICH_SESSION
from testkit.harnesses import START
from testkit.harnesses import TITLE as TITLE_ROUTE
from testkit.models import hold, text, tool_call

pytestmark = pytest.mark.e2e


@pytest.fixture
def codex(sandbox):
    return sandbox("codex", installed=True)


def test_an_untrusted_hook_is_skipped_and_a_trusted_one_reports(codex):
    # Codex skips a hook nobody has trusted yet without a word; the session still runs.
    untrusted = codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert codex.harness.session_id(untrusted)
    assert codex.reports(0) == []
    trusted = codex.run(codex.harness.headless("Say hello."))
    assert codex.accepted(1) == [("codex", codex.harness.session_id(trusted))]


def test_the_report_arrives_while_the_model_still_holds_its_answer(codex):
    codex.model.script(hold(10, text("Finally.")))
    proc = codex.start(codex.harness.headless("Say hello."))
    assert codex.model.wait_for(lambda requests: any(r.reply for r in requests), timeout=60), codex.model.log()
    # SessionStart ran before the first model call: lich knows the id before any answer.
    early = [seen for seen in codex.arrived(1, START, timeout=5) if seen.route == START]
    assert proc.poll() is None, "codex ended while the model was still holding its answer"
    done = codex.finish(proc)
    assert [(seen.status, seen.provider_session_id) for seen in early] == [(204, codex.harness.session_id(done))]
    assert codex.accepted(1) == [("codex", codex.harness.session_id(done))]


def test_codex_lists_the_lichhook_mcp_server(codex):
    done = codex.run(["codex", "mcp", "list", "--json"], lich=False)
    servers = {s["name"]: s for s in json.loads(done.stdout)}
    transport = servers["lichhook"]["transport"]
    assert servers["lichhook"]["enabled"] is True
    archive = installed_copy(codex.home)
    assert (transport["type"], transport["args"]) == ("stdio", ["-I", "-S", str(archive), "mcp"])
    plain = codex.run(["codex", "mcp", "list"], lich=False).stdout.decode()
    assert "lichhook" in plain and "enabled" in plain


# -- trust ---------------------------------------------------------------------------------

CODEX = next(d for d in DESCRIPTORS if d.provider == "codex")
# lichhook's Codex hooks, by the words each runs: every row of Codex's descriptor.
OURS = {" ".join(words): event for event, words, _, _ in CODEX.registrations}


def trust_lines(box) -> dict:
    """lichhook doctor's trust line for each of lichhook's Codex hooks, by subcommand."""
    out = box.lichhook("doctor", "--verbose").stdout.decode()
    lines = [line.strip() for line in out.split("Codex CLI (codex)")[1].split("\n\n")[0].splitlines()
             if line.strip().startswith("trust:")]
    return {sub: next(line for line in lines if f"'{sub}'" in line) for sub in OURS}


def codex_problems(box) -> list:
    out = box.lichhook("doctor", "--verbose").stdout.decode()
    return [line for line in out.splitlines() if line.startswith("problem: codex:")]


def test_doctor_tells_an_untrusted_hook_apart_from_a_trusted_one(codex):
    for sub, line in trust_lines(codex).items():
        assert "not trusted yet, so Codex skips it without a word" in line, line
    problems = codex_problems(codex)
    assert len(problems) == len(OURS) and all("Trust all and continue" in p for p in problems), problems
    codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert codex.reports(0) == []  # what doctor said: Codex skipped the hook

    records = codex.harness.trust_in_tui(codex)
    listed = {h["key"]: h for h in codex.harness.hooks_list(codex)}
    # One record per hook lichhook registers: every row of Codex's descriptor.
    assert sorted(records) == sorted(listed) and len(records) == len(OURS)
    for key, trusted in records.items():
        # lichhook's hash is the one Codex wrote when the user trusted the hook
        assert listed[key]["trustStatus"] == "trusted" and listed[key]["currentHash"] == trusted
    for sub, line in trust_lines(codex).items():
        assert line.startswith(f"trust: {OURS[sub]} hook '{sub}': trusted by Codex"), line
    assert codex_problems(codex) == []
    # Trusted, the hook runs without --dangerously-bypass-hook-trust.
    done = codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert codex.accepted(1) == [("codex", codex.harness.session_id(done))]


def test_a_reinstall_keeps_the_trust_and_a_changed_entry_loses_it(codex, tmp_path):
    codex.harness.trust_in_tui(codex)
    folder = codex.home / ".codex"
    before = {name: (folder / name).read_bytes() for name in ("hooks.json", "config.toml")}
    again = codex.install().stdout.decode()
    assert {name: (folder / name).read_bytes() for name in before} == before  # not a byte changed
    assert "Trust all and continue" not in again  # nothing to trust
    assert all("trusted by Codex" in line for line in trust_lines(codex).values())
    done = codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert codex.accepted(1) == [("codex", codex.harness.session_id(done))]

    # Another Python changes what the hooks run: Codex wants them reviewed again.
    other = tmp_path / "other" / "python3"
    other.parent.mkdir()
    other.symlink_to(sys.executable)
    moved = subprocess.run([str(other), str(codex.pyz), "install", "codex"], env=codex.environ(lich=False),
                           capture_output=True, timeout=60)
    assert moved.returncode == 0, moved.stderr
    assert "hooks changed since you trusted them" in moved.stdout.decode()  # one line for all of them
    assert "Trust all and continue" in moved.stdout.decode()
    for line in trust_lines(codex).values():
        assert "changed since you trusted it" in line, line
    assert {h["trustStatus"] for h in codex.harness.hooks_list(codex)} == {"modified"}
    sent = len(codex.reports(1))
    codex.run(codex.harness.headless("Say hello.", trusted=False))
    assert len(codex.reports(1)) == sent  # nothing more: Codex skipped every changed hook


ENTRY_SHAPES = {
    "as installed": {},
    "a longer timeout": {"timeout": 30},
    "no timeout": {"timeout": None},
    "a status message": {"statusMessage": "Telling lich…"},
    "async": {"async": True},
    "a context limit": {"additionalContextLimit": 100},
    "a Windows line": {"commandWindows": "C:\\Python\\python.exe lichhook.pyz codex"},
    "a key Codex does not know": {"note": "mine"},
}


def test_lichhooks_hash_is_the_one_codex_computes(codex):
    from lichhook.install.harnesses import codextrust

    path = codex.home / ".codex" / "hooks.json"
    installed = json.loads(path.read_text())
    for shape, change in ENTRY_SHAPES.items():
        document = json.loads(json.dumps(installed))
        group = document["hooks"]["SessionStart"][0]
        for key, value in change.items():
            if value is None:
                group["hooks"][0].pop(key, None)
            else:
                group["hooks"][0][key] = value
        if shape == "async":
            group["matcher"] = "startup|resume"
        path.write_text(json.dumps(document))
        listed = {h["key"]: h["currentHash"] for h in codex.harness.hooks_list(codex)}
        for i, handler in enumerate(group["hooks"]):
            key = codextrust.key(str(path), "SessionStart", 0, i)
            assert listed[key] == codextrust.hook_hash("SessionStart", group, handler, windows=False), shape


# -- waits ---------------------------------------------------------------------------------

TOLD = re.compile(r"Your Codex session id is ([^ ]+)\. No tool tells you this id")
# `codex exec` asks no one, so an MCP tool call needs the user's standing approval; install
# leaves that decision to the user (docs/install.md), the test gives it on the command line.
APPROVED = ("-c", 'mcp_servers.lichhook.tools.claude_code_wait.approval_mode="approve"')


def told(request) -> str:
    """The session id the SessionStart hook gave the model, as the model reads it."""
    found = TOLD.search(request.text())
    assert found, request.text()[:3000]
    return found.group(1)


def wait_op(op: str, **fields):
    return tool_call("claude_code_wait", lambda request: dict(op=op, by="reviewer", session=told(request), **fields))


def test_the_model_is_told_its_session_id_and_keeps_waits_with_the_mcp_tool(codex):
    codex.model.script(wait_op("add", what="CI run 4512", family="ci.build"), wait_op("list"))
    done = codex.run(codex.harness.headless("Record the CI run you wait for.", *APPROVED))
    sid = codex.harness.session_id(done)
    first, *later = codex.model.model_requests()
    assert "mcp__lichhook" in first.tool_names()  # Codex offers the server's tools as one namespace
    context = [m for m in first.body["input"] if m.get("role") == "developer" and TOLD.search(json.dumps(m))]
    assert len(context) == 1 and told(first) == sid, codex.model.log()
    added = json.loads(later[0].tool_results()[-1].split("Output:\n", 1)[-1])
    assert added["ok"] is True and added["session"] == sid and added["wait"]["what"] == "CI run 4512", added
    listed = json.loads(later[1].tool_results()[-1].split("Output:\n", 1)[-1])
    assert [w["id"] for w in listed["waits"]] == [added["wait"]["id"]], listed
    assert "mcp: lichhook/claude_code_wait (completed)" in done.stderr.decode() + done.stdout.decode()
    assert not codex.model.pending()


# -- the session's life as lich sees it ----------------------------------------------------

PROMPT = "Write the two files."
COMMAND = "echo hi > f.txt"
PATCH = ("*** Begin Patch\n*** Add File: notes/todo.txt\n+call the reviewer\n"
         "*** Update File: f.txt\n@@\n-hi\n+hello\n*** End Patch\n")
# A model Codex knows, so it offers its own apply_patch tool (a freeform one); the sandbox
# `codex exec` would pick refuses writes on this machine.
WRITER = ("-m", "gpt-5.5", "-s", "danger-full-access")


def writes():
    """The model's turn: a shell command, then a patch adding one file and changing another, then its answer."""
    return (tool_call("exec_command", {"cmd": COMMAND}), tool_call("apply_patch", {"input": PATCH}),
            text("Both written."))


def shorts(seen) -> list:
    return [s.short() for s in seen]


def test_a_turn_with_a_command_and_a_patch_reports_each_step_and_outside_lich_nothing_changes(codex):
    codex.model.script(*writes())
    done = codex.run(codex.harness.headless(PROMPT, *WRITER))
    sid = codex.harness.session_id(done)
    seen = codex.timeline(until=lambda seen: ("idle",) in shorts(seen))
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}
    # The title, the thread's first user message, is read from the rollout after the first
    # tool (or at the turn's end); it is sent once.
    titles = [i for i, s in enumerate(seen) if s.route == TITLE_ROUTE]
    assert [seen[i].short() for i in titles] == [("title", PROMPT)], shorts(seen)
    assert titles[0] > shorts(seen).index(("busy", "Bash", COMMAND))
    assert [s.short() for s in seen if s.route != TITLE_ROUTE] == [
        ("start",), ("busy",),
        ("busy", "Bash", COMMAND), ("busy",), ("touched",),
        ("busy", "apply_patch", "notes/todo.txt, f.txt"), ("busy",), ("touched",),
        ("done",), ("idle",),  # exec ends the thread with the turn: SessionEnd
    ], codex.describe(done)
    assert (codex.project / "f.txt").read_text() == "hello\n"

    # The same run outside lich: nothing sent, and the harness shows and does the same.
    (codex.project / "f.txt").unlink()
    shutil.rmtree(codex.project / "notes")
    codex.model.script(*writes())
    again = codex.run(codex.harness.headless(PROMPT, *WRITER), lich=False)
    assert len(codex.timeline()) == len(seen)
    assert again.stdout == done.stdout == b"Both written.\n"
    assert shown(again, codex.harness.session_id(again)) == shown(done, sid)
    assert (codex.project / "notes" / "todo.txt").read_text() == "call the reviewer\n"


def shown(done, sid: str) -> list:
    """What codex exec told the user on stderr, without what differs from run to run."""
    lines = done.stderr.decode().replace(sid, "<id>").splitlines()
    return [re.sub(r"\b\d+ms\b", "<ms>", line) for line in lines]


def in_the_thread(request) -> bool:
    """A request of the user's thread, not of the side thread Codex's TUI starts to review
    an approval (which offers apply_patch alone)."""
    return "exec_command" in request.tool_names()


def test_an_approval_in_the_tui_reports_waiting_with_the_command(codex):
    """Codex asks for approvals only in its TUI (``codex exec`` never asks): a command the
    model wants run outside the sandbox waits for the user, and the card says what for."""
    codex.model.script(tool_call("exec_command", {"cmd": "touch asked.txt", "sandbox_permissions": "require_escalated",
                                                  "justification": "May I create asked.txt?"}, when=in_the_thread),
                       text("Asked and done.", when=in_the_thread))
    argv = ["codex", "--no-daemon", "-a", "on-request", "-s", "read-only", "-m", "gpt-5.5", codex.harness.bypass_trust]
    with codex.tui(argv) as tui:
        tui.wait_for(r"Use existing model")  # Codex offers a newer model to a known one first
        tui.send("2")
        tui.wait_for(r"Ask Codex to do anything")
        tui.type_line("Touch a file.")
        tui.wait_for(r"Would you like to run the following command\?")
        asked = codex.timeline(until=lambda seen: any(s.short()[0] == "waiting" for s in seen), settle=0)
        tui.send("y")  # "1. Yes, proceed (y)"
        tui.wait_for(r"Asked and done\.")
        tui.type_line("/quit")
        assert tui.proc.wait(30) == 0, tui.text()
    seen = codex.timeline(until=lambda seen: ("idle",) in shorts(seen))
    # Codex names the thread in a header of each of its turn's model requests.
    turns = [r for r in codex.model.model_requests() if in_the_thread(r)]
    (sid,) = {v for r in turns for k, v in r.headers.items() if k.lower() == "session-id"}
    assert codex.harness.session_files(codex, sid)
    assert {(s.status, s.provider_session_id) for s in seen} == {(204, sid)}
    assert shorts(asked)[-1] == ("waiting", "Bash: touch asked.txt"), shorts(asked)
    after = shorts(seen)[len(asked):]
    assert after[:2] == [("busy",), ("touched",)] and after[-2:] == [("done",), ("idle",)], shorts(seen)
    assert (codex.project / "asked.txt").exists()
