"""lichhook as lich's companion plugin, with the real Claude Code and Codex: installed
through their plugin manager, it reports each event once and lich's own reading of the
harness's records finds it; with lich-plugin installed first (a stand-in in its layout,
written here, reporting to the stand-in lich), install refuses, or replaces it, and no
report ever arrives twice."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from lichhook.contracts import RELEASE
from lichhook.contracts import release as releases
from lichhook.contracts.release import compatible
from testkit import lichreading
from lichhook.install.plugin import layout, lichplugin
from testkit.constants import LICH_SESSION
from testkit.harnesses import TITLE as TITLE_ROUTE
from testkit.models import text, tool_call

pytestmark = pytest.mark.e2e

COMMAND = "echo hi > f.txt"
PATCH = ("*** Begin Patch\n*** Add File: notes/todo.txt\n+call the reviewer\n"
         "*** Update File: f.txt\n@@\n-hi\n+hello\n*** End Patch\n")
CODEX_WRITER = ("-m", "gpt-5.5", "-s", "danger-full-access")


def shorts(seen) -> list:
    return [s.short() for s in seen]


# -- lich's reading, as internal/agentplugin does it ---------------------------------------


def lich_reads_claude(box) -> tuple:
    """lich's parseInstalledVersion of Claude Code's record (testkit.lichreading)."""
    path = box.home / ".claude" / "plugins" / "installed_plugins.json"
    version = lichreading.parse_installed_version(path.read_bytes()) if path.exists() else None
    return (version, True) if version else ("", False)


def lich_reads_codex(box) -> tuple:
    """lich's parseCodexPluginList of the real `codex plugin list --json` (testkit.lichreading)."""
    done = box.run(["codex", "plugin", "list", "--json"], lich=False, timeout=10)
    version = lichreading.parse_codex_plugin_list(done.stdout.decode())
    return (version, True) if version else ("", False)


READS = {"claude": lich_reads_claude, "codex": lich_reads_codex}


# -- a stand-in for lich-plugin, installed the way lich installs it --------------------------


def standin_plugin(box) -> Path:
    """lich-plugin's layout, version 0.17.2, whose SessionStart hook reports the session
    start to the stand-in lich (it runs lichhook's reporter: what matters is that it is a
    second plugin reporting the same session), with no lichhook marker file."""
    folder = box.project.parent / "lich-plugin-standin"
    start = f"{sys.executable} -I -S {box.pyz} {box.harness.name}"
    hooks = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": start, "timeout": 10}]}]}}
    files = {
        ".claude-plugin/marketplace.json": {"name": "lich-plugin", "owner": {"name": "stand-in"},
                                            "plugins": [{"name": "lich", "source": "./"}]},
        ".claude-plugin/plugin.json": {"name": "lich", "version": "0.17.2"},
        ".agents/plugins/marketplace.json": {"name": "lich-plugin", "plugins": [
            {"name": "lich", "source": {"source": "local", "path": "./"}, "policy": {"installation": "AVAILABLE"}}]},
        ".codex-plugin/plugin.json": {"name": "lich", "version": "0.17.2", "hooks": "./hooks/codex-hooks.json"},
        "hooks/hooks.json": hooks,
        "hooks/codex-hooks.json": hooks,
    }
    for rel, doc in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    name = box.harness.name
    box.run([name, "plugin", "marketplace", "add", str(folder)], lich=False, timeout=120)
    box.run([name, "plugin", "install" if name == "claude" else "add", "lich@lich-plugin"], lich=False, timeout=120)
    assert READS[name](box) == ("0.17.2", True)
    return folder


def headless(box, prompt: str = "Say hello.") -> list:
    return box.harness.headless(prompt)


# -- the cases ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_installed_as_the_plugin_lich_reads_it_and_nothing_stays_in_the_config(sandbox, name):
    box = sandbox(name).plugin_route()
    assert READS[name](box) == ("", False)  # what lich shows for lichhook in its config
    done = box.install()
    out = done.stdout.decode()
    assert f"installed through `{name} plugin`" in out, out
    version, installed = READS[name](box)
    assert installed
    lich_version = version.split("+")[0]  # lich's semver drops build metadata
    assert lich_version == releases.claim(None, name)  # no lich here: the release every lich accepts
    assert compatible(lich_version)
    # no config entries an earlier route would also run
    config = (box.home / ".claude" / "settings.json") if name == "claude" else (box.home / ".codex" / "hooks.json")
    assert "hooks.pyz" not in (config.read_text() if config.exists() else "")
    doctor = box.lichhook("doctor", "--verbose").stdout.decode()
    assert f"lich reads: lichhook, where lich reads lich-plugin {version}" in doctor, doctor
    # uninstall takes it out through the same CLI
    gone = box.lichhook("uninstall", name)
    assert gone.returncode == 0, gone.stderr.decode()
    assert READS[name](box) == ("", False)


def test_claude_code_plugin_route_reports_each_step_once(sandbox):
    box = sandbox("claude").plugin_route()
    box.install()
    box.model.script(tool_call("Bash", {"command": COMMAND, "description": "Write hi into f.txt"}),
                     tool_call("Write", {"file_path": str(box.project / "notes" / "todo.txt"), "content": "x\n"}),
                     text("Both written."))
    done = box.run(box.harness.headless("Write the two files.", "--allowedTools", "Bash,Write"))
    sid = box.harness.session_id(done)
    seen = box.timeline(until=lambda seen: ("idle",) in shorts(seen))
    # exactly what the config route sends (tests/e2e/test_claude_code.py), once each
    assert shorts(seen) == [
        ("start",), ("busy",),
        ("busy", "Bash", COMMAND), ("busy",), ("touched",),
        ("busy", "Write", "notes/todo.txt"), ("busy",), ("touched",),
        ("done",), ("idle",),
    ], box.describe(done)
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}


def test_codex_plugin_route_reports_each_step_once(sandbox):
    box = sandbox("codex").plugin_route()
    box.install()
    box.model.script(tool_call("exec_command", {"cmd": COMMAND}), tool_call("apply_patch", {"input": PATCH}),
                     text("Both written."))
    done = box.run(box.harness.headless("Write the two files.", *CODEX_WRITER))
    sid = box.harness.session_id(done)
    seen = box.timeline(until=lambda seen: ("idle",) in shorts(seen))
    assert [s.short() for s in seen if s.route != TITLE_ROUTE] == [
        ("start",), ("busy",),
        ("busy", "Bash", COMMAND), ("busy",), ("touched",),
        ("busy", "apply_patch", "notes/todo.txt, f.txt"), ("busy",), ("touched",),
        ("done",), ("idle",),
    ], box.describe(done)
    assert len([s for s in seen if s.route == TITLE_ROUTE]) == 1
    assert {(s.status, s.accepted["session_id"], s.provider_session_id) for s in seen} == {(204, LICH_SESSION, sid)}


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_beside_lich_plugin_install_refuses_then_replaces_and_no_report_arrives_twice(sandbox, name):
    box = sandbox(name).plugin_route()
    standin = standin_plugin(box)

    refused = box.lichhook("install", name)
    err = refused.stderr.decode()
    assert refused.returncode == 1 and "every report would be sent twice" in err, err
    remove = f"{name} plugin uninstall lich@lich-plugin" if name == "claude" else "codex plugin remove lich@lich-plugin"
    assert remove in err
    assert READS[name](box) == ("0.17.2", True)  # left as it was
    first = box.harness.session_id(box.run(headless(box)))
    assert box.accepted(1) == [(name, first)]  # lich-plugin alone: once

    replaced = box.lichhook("install", name, "--replace")
    out = replaced.stdout.decode()
    assert replaced.returncode == 0, (out + replaced.stderr.decode())
    back = "claude plugin install" if name == "claude" else "codex plugin add"
    assert f"to put it back: {name} plugin marketplace add {standin} && {back} lich@lich-plugin" in out, out
    version, installed = READS[name](box)
    assert installed and version.split("+")[0] != "0.17.2" and "+lichhook." in version
    second = box.harness.session_id(box.run(headless(box)))
    assert box.accepted(2) == [(name, first), (name, second)]  # lichhook alone: once
    doctor = box.lichhook("doctor", "--verbose").stdout.decode()
    assert not [line for line in doctor.splitlines() if line.startswith(f"problem: {name}: lich-plugin")]
    assert lichplugin.OURS_FILE  # the marker that tells the two apart


# -- lich's "update" action on a lichhook install --------------------------------------------
# lich runs these commands (internal/agentplugin, claude.go and codex.go at lich 1f421ec) with
# omartelo/lich-plugin as the source; offline, a local folder in lich-plugin's layout stands
# in for that repository, as a newer lich-plugin release.


def test_lichs_update_in_claude_code_replaces_lichhook_with_lich_plugin(sandbox):
    box = sandbox("claude").plugin_route()
    box.install()
    remote = standin_folder(box)
    # claudeUpdate: marketplace add <repo> (on failure: marketplace update), then plugin update
    added = box.run(["claude", "plugin", "marketplace", "add", str(remote)], lich=False, timeout=120)
    assert "now points at" in (added.stdout + added.stderr).decode()  # Claude Code repoints the name
    box.run(["claude", "plugin", "update", "lich@lich-plugin"], lich=False, timeout=120)
    assert lich_reads_claude(box) == ("0.17.2", True)  # lich-plugin now, not lichhook
    doctor = box.lichhook("doctor", "--verbose").stdout.decode().split("Claude Code (claude)")[1].split("\n\n")[0]
    assert "registered: no" in doctor and "lich reads: lich-plugin 0.17.2" in doctor, doctor
    box.run(headless(box))
    # lichhook's hooks went with its plugin: only lich-plugin's run now (this stand-in's send nothing)
    assert box.reports(0) == []


def test_lichs_update_in_codex_fails_and_changes_nothing(sandbox):
    box = sandbox("codex").plugin_route()
    box.install()
    before = lich_reads_codex(box)
    remote = standin_folder(box)
    # codexUpdate: marketplace add <repo>, marketplace upgrade, plugin add; the first fails
    done = box.run_status(["codex", "plugin", "marketplace", "add", str(remote)])
    assert done.returncode != 0 and b"already added from a different source" in done.stdout + done.stderr
    assert lich_reads_codex(box) == before


def standin_folder(box) -> Path:
    """A stand-in for lich-plugin 0.17.2's repository, not installed."""
    folder = box.project.parent / "lich-plugin-remote"
    hooks = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "true", "timeout": 10}]}]}}
    files = {
        ".claude-plugin/marketplace.json": {"name": "lich-plugin", "owner": {"name": "stand-in"},
                                            "plugins": [{"name": "lich", "source": "./"}]},
        ".claude-plugin/plugin.json": {"name": "lich", "version": "0.17.2"},
        ".agents/plugins/marketplace.json": {"name": "lich-plugin", "plugins": [
            {"name": "lich", "source": {"source": "local", "path": "./"}, "policy": {"installation": "AVAILABLE"}}]},
        ".codex-plugin/plugin.json": {"name": "lich", "version": "0.17.2", "hooks": "./hooks/codex-hooks.json"},
        "hooks/hooks.json": hooks,
        "hooks/codex-hooks.json": hooks,
    }
    for rel, doc in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
    return folder


def test_a_newer_lichs_update_offline_leaves_claude_code_without_either_and_install_mends_it(sandbox):
    # claudePinMarketplace in newer lich: marketplace remove, then add <repo>#v<release>,
    # then plugin install; offline the add fails, after the remove took lichhook's plugin.
    box = sandbox("claude").plugin_route()
    box.install()
    box.run(["claude", "plugin", "marketplace", "remove", "lich-plugin"], lich=False, timeout=120)
    failed = box.run_status(["claude", "plugin", "marketplace", "add", str(box.project.parent / "unreachable")])
    assert failed.returncode != 0
    assert lich_reads_claude(box) == ("", False)
    doctor = box.lichhook("doctor", "--verbose")
    assert "problem: claude: detected but lichhook is not registered" in doctor.stdout.decode()
    box.install()
    assert lich_reads_claude(box)[1]


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_marketplace_name_held_by_another_source_is_named_and_nothing_changes(sandbox, name):
    box = sandbox(name).plugin_route()
    other = standin_folder(box)
    box.run([name, "plugin", "marketplace", "add", str(other)], lich=False, timeout=120)
    before = sorted(str(p) for p in box.home.rglob("*") if p.is_file())
    refused = box.lichhook("install", name)
    err = refused.stderr.decode()
    assert refused.returncode == 1 and f"already has a marketplace named lich-plugin, from {other}" in err, err
    assert f"{name} plugin marketplace remove lich-plugin" in err
    assert sorted(str(p) for p in box.home.rglob("*") if p.is_file()) == before
    replaced = box.lichhook("install", name, "--replace")
    out = replaced.stdout.decode()
    assert replaced.returncode == 0, out + replaced.stderr.decode()
    assert f"to put it back: {name} plugin marketplace add {other}" in out, out
    assert READS[name](box)[1]
    assert "plugin: lich@lich-plugin" in box.lichhook("doctor", "--verbose").stdout.decode()


# -- the release the build writes, taken by the harness's plugin manager as lich-plugin -------


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_the_release_installs_as_lich_plugin_and_each_session_reports_once(sandbox, name):
    box = sandbox(name)
    release = box.pyz.parent / "lich-plugin"  # written by the build beside the archive
    box.run([name, "plugin", "marketplace", "add", str(release)], lich=False, timeout=120)
    box.run([name, "plugin", "install" if name == "claude" else "add", "lich@lich-plugin"], lich=False, timeout=120)
    version, installed = READS[name](box)
    assert installed and version == json.loads(
        (release / (".claude-plugin" if name == "claude" else ".codex-plugin") / "plugin.json").read_text())["version"]
    sid = box.harness.session_id(box.run(headless(box)))
    assert box.accepted(1) == [(name, sid)]
    if name == "claude":  # its MCP server, from the plugin folder, connects
        listed = box.run(["claude", "mcp", "list"], lich=False, timeout=120).stdout.decode()
        assert "plugin:lich:lichhook" in listed and "Connected" in listed, listed
    else:  # Codex runs its server from the installed plugin's folder (the args are relative to it)
        listed = box.run(["codex", "mcp", "list"], lich=False, timeout=120).stdout.decode()
        row = next(line for line in listed.splitlines() if line.startswith("lichhook "))
        assert "./lichhook.pyz mcp" in row and "/plugins/cache/lich-plugin/lich/" in row and "enabled" in row, listed
    # lichhook's own install sees its release as lichhook, not as lich-plugin to refuse
    doctor = box.lichhook("doctor", "--verbose").stdout.decode()
    assert f"lich reads: lichhook, where lich reads lich-plugin {version}" in doctor, doctor
    assert "registered: yes, as the release plugin" in doctor
    assert not [line for line in doctor.splitlines() if line.startswith(f"problem: {name}:")], doctor
    # and install moves it to lichhook's own marketplace, still one report per session
    beside = box.lichhook("install", name)  # config entries beside it: both would run
    assert beside.returncode == 1 and "every report would be sent twice" in beside.stderr.decode()
    box.plugin_route()
    assert box.lichhook("install", name).returncode == 1  # the marketplace name is the release's
    moved = box.lichhook("install", name, "--replace")
    assert moved.returncode == 0, (moved.stdout + moved.stderr).decode()
    now, installed = READS[name](box)
    assert installed and now != version
    second = box.harness.session_id(box.run(headless(box)))
    assert box.accepted(2) == [(name, sid), (name, second)]


# -- fail open: what the hooks run is gone ------------------------------------------------------


def _data(box) -> Path:
    return box.home / ".local" / "share" / "lichhook"


GONE = {
    "the hooks archive": lambda box: next(_data(box).glob("py*/hooks.pyz")).unlink(),
    "the copy's folder": lambda box: shutil.rmtree(next(_data(box).glob("py*/"))),
    "the data folder": lambda box: shutil.rmtree(_data(box)),
}


@pytest.mark.parametrize("gone", list(GONE))
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_hook_whose_archive_is_gone_blocks_nothing(sandbox, name, gone):
    """Installed through the harness's plugin manager, then what its hooks run deleted: a
    turn with a tool call still runs whole (no tool call refused, no prompt blocked), and
    nothing is reported."""
    box = sandbox(name).plugin_route()
    box.install()
    GONE[gone](box)
    call = tool_call("Bash", {"command": COMMAND, "description": "Write hi into f.txt"}) if name == "claude" \
        else tool_call("exec_command", {"cmd": COMMAND})
    box.model.script(call, text("Written."))
    extra = ("--allowedTools", "Bash") if name == "claude" else CODEX_WRITER
    done = box.run(box.harness.headless("Write the file.", *extra))
    assert (box.project / "f.txt").read_text().strip() == "hi", box.describe(done)
    assert "Written." in done.stdout.decode(), box.describe(done)
    assert box.reports(0) == []


# -- faults: the CLI off PATH, failing after its work, the plugin removed by hand (issue 36) ----

NO_CLI = "/usr/bin:/bin"  # a PATH without the harness's CLI


def failing_cli(box, name: str, step: tuple) -> str:
    """A PATH whose ``name`` runs the real CLI, then fails the one ``step`` (its work done):
    a ``plugin install`` that exits non-zero, or is stopped at its deadline, after installing."""
    folder = box.project.parent / "failing-bin"
    folder.mkdir(exist_ok=True)
    real = box.bin_dir / name
    words = " ".join(step)
    script = folder / name
    script.write_text(f'#!/bin/sh\n"{real}" "$@"; code=$?\n'
                      f'case "$*" in "{words}"*) echo "Error: failed after the work" >&2; exit 1;; esac\n'
                      'exit $code\n')
    script.chmod(0o755)
    return f"{folder}:{box.env['PATH']}"


def lists(box, name: str) -> None:
    """The harness lists its plugins (what lich reads) and its marketplaces."""
    for argv in ([name, "plugin", "list", "--json"] if name == "codex" else [name, "plugin", "list"],
                 [name, "plugin", "marketplace", "list"]):
        done = box.run_status(argv)
        assert done.returncode == 0, box.describe(done)


@pytest.mark.parametrize("name", ["claude", "codex"])
@pytest.mark.parametrize("fault", ["no cli", "fails after installing"])
def test_a_later_install_without_a_working_cli_sends_no_report_twice(sandbox, name, fault):
    box = sandbox(name).plugin_route()
    box.install()
    first = box.harness.session_id(box.run(headless(box)))
    box.accepted(1)
    if fault == "no cli":
        again = box.lichhook("install", name, PATH=NO_CLI)
        assert again.returncode == 1 and "every report would be sent twice" in again.stderr.decode()
    else:  # installed afresh by a CLI that then fails
        box.lichhook("uninstall", name)
        add = ("plugin", "install") if name == "claude" else ("plugin", "add")
        again = box.lichhook("install", name, PATH=failing_cli(box, name, add))
        err = again.stderr.decode()
        assert again.returncode == 1 and "records lichhook's plugin as installed all the same" in err, err
    second = box.harness.session_id(box.run(headless(box)))
    assert box.accepted(2) == [(name, first), (name, second)]
    turns = [[s.short() for s in box.timeline() if s.provider_session_id == sid and s.route != TITLE_ROUTE]
             for sid in (first, second)]
    assert turns[1] == turns[0] and turns[0].count(("idle",)) == 1, turns  # the same reports, once each
    assert "sent twice" not in box.lichhook("doctor").stdout.decode()


@pytest.mark.parametrize("name", ["claude", "codex"])
@pytest.mark.parametrize("how", ["by hand", "without the cli", "after a fallback"])
def test_uninstall_leaves_the_harness_able_to_list_its_plugins_and_marketplaces(sandbox, name, how):
    box = sandbox(name).plugin_route()
    if how == "after a fallback":  # the marketplace added, then a failure: the config route
        path = failing_cli(box, name, ("plugin", "marketplace", "add"))
        box.lichhook("install", name, PATH=path)
        lists(box, name)
    else:
        box.install()
    if how == "by hand":
        box.run([name, "plugin", "uninstall" if name == "claude" else "remove", "lich@lich-plugin"], lich=False)
    if how == "without the cli":
        gone = box.lichhook("uninstall", name, PATH=NO_CLI)
        assert f"`{name}` is not on PATH to remove it" in gone.stdout.decode()
        lists(box, name)
        sid = box.harness.session_id(box.run(headless(box)))
        assert box.accepted(1) == [(name, sid)]  # its plugin still runs, and what it runs is still there
    gone = box.lichhook("uninstall", name)
    assert gone.returncode == 0, (gone.stdout + gone.stderr).decode()
    lists(box, name)
    assert READS[name](box) == ("", False)
    assert not (box.home / ".local" / "share" / "lichhook" / "marketplace").exists()


def test_doctor_says_whether_claude_code_loads_lichhooks_mods(sandbox):
    box = sandbox("claude").plugin_route()
    assert box.install().returncode == 0
    flags = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": ""}  # the user's shell: Claude Code's flag client runs

    def mods(**extra) -> dict:
        data = json.loads(box.lichhook("doctor", "--json", "--no-run", **flags, **extra).stdout)
        return next(h for h in data["harnesses"] if h["name"] == "claude")["mods"]

    seen = mods()
    assert (seen["load"], seen["plugin"], seen["claude_code"], seen["switch"]) == (True, True, "2.1.332", True), seen
    # Claude Code cached the rollout switch off: doctor says so, with the way out, and fails.
    state = box.home / ".claude.json"
    cached = json.loads(state.read_text()) if state.exists() else {}
    state.write_text(json.dumps(dict(cached, cachedGrowthBookFeatures={"tengu_plugin_hooks_modules": False})))
    done = box.lichhook("doctor", "--no-run", **flags)
    out = done.stdout.decode()
    assert done.returncode == 1, out
    assert ("problem: claude: Claude Code's cached rollout switch for mods is off (cachedGrowthBookFeatures."
            "tengu_plugin_hooks_modules is false in ") in out and "CLAUDE_CODE_DISABLE_FEATURE_FLAGS=1" in out, out
    assert mods()["load"] is False
    assert mods(CLAUDE_CODE_DISABLE_FEATURE_FLAGS="1")["load"] is True  # the fix doctor names


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_for_each_lich_measured_lich_reads_a_release_it_supports(sandbox, name):
    """lich's own reading of what the real harness records, for the range of each lich
    release whose compat.go was read: compatible, no update unless the newest release in
    range is one lichhook does not do yet, Claude Code's sub-agents routed as lichhook does."""
    box = sandbox(name).plugin_route()
    for since, _, _ in releases.RANGES:
        done = box.lichhook("install", name, "--lich-version", since)
        assert done.returncode == 0, (done.stdout + done.stderr).decode()
        version, installed = READS[name](box)
        named = releases.claim(since, name)
        assert installed and version.split("+")[0] == named and "+lichhook." in version, (since, version)
        row = lichreading.status(version, since)
        assert row.compatible, row
        assert row.update_available == (row.latest not in releases.claimable(name)), row
        assert row.subagent_cards == (name == "claude" and not releases.less(named, releases.SUBAGENT_CARDS)) \
            or name == "codex"
        claims = next(p for p in box.home.rglob("claims") if p.parent.name.startswith("py")).read_text()
        assert f"{name} {named}\n" in claims
    gone = box.lichhook("uninstall", name)
    assert gone.returncode == 0, gone.stderr.decode()
