"""lich-plugin beside lichhook: install refuses or replaces it, doctor names it.

lich-plugin is placed where lich's own installer puts it (its records and marker lines,
as ``internal/agentplugin`` reads them); the harness CLIs are small stand-ins on PATH
that log their arguments and change the same records the real ones change (measured on
Claude Code 2.1.332 and Codex 0.171.0; the end-to-end suite runs the real ones).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from lichhook.contracts import release
from lichhook.install.plugin import harnesscli
from lichhook.install.errors import ConfigError

FAKE_CLI = r'''#!{python}
import json, os, sys
home = os.environ["HOME"]
log = os.path.join(home, "cli.log")
with open(log, "a") as f:
    f.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\n")
args = sys.argv[1:]
if os.environ.get("FAKE_CLI_HANG"):
    import time; time.sleep(60)
if os.path.basename(sys.argv[0]) == "claude":
    records = os.path.join(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "plugins",
                           "installed_plugins.json")
    if args[:2] == ["plugin", "uninstall"]:
        doc = json.load(open(records))
        doc["plugins"].pop(args[2], None)
        json.dump(doc, open(records, "w"))
else:
    state = os.path.join(home, "codex-plugins.json")
    if args[:3] == ["plugin", "list", "--json"]:
        print("banner line")
        print(open(state).read() if os.path.exists(state) else json.dumps({{"installed": [], "available": []}}))
    elif args[:2] == ["plugin", "remove"]:
        os.remove(state)
'''


def fake_bin(tmp_path: Path, *names: str) -> str:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        path = folder / name
        path.write_text(FAKE_CLI.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


def cli_log(home: Path) -> list:
    path = home / "cli.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def claude_has_lich_plugin(home: Path, version: str = "0.17.2", ours: bool = False) -> Path:
    install_path = home / ".claude" / "plugins" / "cache" / "lich-plugin" / "lich" / version
    install_path.mkdir(parents=True)
    if ours:
        (install_path / "lichhook-plugin.txt").write_text("lichhook\n")
    records = home / ".claude" / "plugins" / "installed_plugins.json"
    records.write_text(json.dumps({"version": 2, "plugins": {"lich@lich-plugin": [
        {"scope": "user", "installPath": str(install_path), "version": version}]}}))
    (home / ".claude" / "plugins" / "known_marketplaces.json").write_text(json.dumps(
        {"lich-plugin": {"source": {"source": "github", "repo": "omartelo/lich-plugin"}}}))
    return records


def files_under(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_install_refuses_beside_lich_plugin_in_claude_code_and_names_the_command(run, home):
    claude_has_lich_plugin(home)
    before = files_under(home)
    result = run("install", "claude")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "lich-plugin 0.17.2" in err and "every report would be sent twice" in err
    assert "claude plugin uninstall lich@lich-plugin" in err and "install claude --replace" in err
    assert files_under(home) == before  # nothing changed: no settings.json, no archive copy


def test_install_replace_removes_lich_plugin_through_claude_and_prints_the_way_back(run, home, tmp_path):
    claude_has_lich_plugin(home)
    result = run("install", "claude", "--replace", env={"PATH": fake_bin(tmp_path, "claude")})
    assert result.returncode == 0, result.stderr.decode()
    changes = [args for args in cli_log(home) if "--help" not in args]
    assert changes == [["claude", "plugin", "uninstall", "lich@lich-plugin"],
                       ["claude", "plugin", "marketplace", "remove", "lich-plugin"]]
    out = result.stdout.decode()
    # this stand-in has no `plugin marketplace` command: the config route, said plainly
    assert "has no `claude plugin marketplace` command (too old" in out
    assert "lich shows it as not installed there" in out
    assert "to put it back: claude plugin marketplace add omartelo/lich-plugin && claude plugin install " \
           "lich@lich-plugin" in out
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "SessionStart" in settings["hooks"]
    doctor = run("doctor", "--verbose", env={"PATH": fake_bin(tmp_path, "claude")})
    assert "lich-plugin" not in doctor.stdout.decode().split("Claude Code (claude)")[1].split("\n\n")[0]


def test_install_replace_that_fails_changes_nothing(run, home, tmp_path):
    claude_has_lich_plugin(home)
    before = files_under(home)
    result = run("install", "claude", "--replace", env={"PATH": f"{tmp_path}{os.pathsep}/usr/bin"})
    assert result.returncode == 1
    assert "`claude` is not on PATH" in result.stderr.decode()
    assert files_under(home) == before


def test_lichhooks_own_plugin_is_kept_and_no_config_entries_go_beside_it_without_the_cli(run, home):
    # issue 36.3: a later `install claude` without `claude` on PATH wrote settings.json
    # entries beside lichhook's installed plugin: 8 reports a turn instead of 4
    claude_has_lich_plugin(home, "0.18.0+lichhook.0123abcd", ours=True)
    before = files_under(home)
    result = run("install", "claude")
    err = result.stderr.decode()
    assert result.returncode == 1 and "every report would be sent twice" in err, err
    assert "lichhook, where lich reads lich-plugin" in err and "`claude` is not on PATH" in err  # not lich-plugin
    assert files_under(home) == before


def test_broken_installed_plugins_json_is_named_and_nothing_changes(run, home):
    records = claude_has_lich_plugin(home)
    records.write_text('{"plugins": {"lich@lich-plugin": [')
    before = files_under(home)
    result = run("install", "claude")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert str(records) in err and "not valid JSON" in err
    assert files_under(home) == before
    doctor = run("doctor", "--verbose")
    assert doctor.returncode == 1 and str(records) in doctor.stdout.decode()


def test_doctor_names_lich_plugin_beside_lichhook_as_a_problem(run, home):
    assert run("install", "claude").returncode == 0
    assert "lich-plugin" not in run("doctor", "--verbose").stdout.decode()
    claude_has_lich_plugin(home)
    result = run("doctor", "--verbose")
    assert result.returncode == 1
    out = result.stdout.decode()
    assert "lich reads: lich-plugin 0.17.2" in out
    problem = next(line for line in out.splitlines() if line.startswith("problem: claude: lich-plugin"))
    assert "every report is sent twice" in problem and "claude plugin uninstall lich@lich-plugin" in problem


def test_codex_listing_is_read_as_lich_reads_it_and_replaced_through_codex(run, home, tmp_path):
    path = fake_bin(tmp_path, "codex")
    (home / "codex-plugins.json").write_text(json.dumps({"installed": [
        {"pluginId": "lich@lich-plugin", "version": "0.18.1", "installed": True,
         "marketplaceSource": {"sourceType": "git", "source": "https://github.com/omartelo/lich-plugin"}}]}))
    refused = run("install", "codex", env={"PATH": path})
    assert refused.returncode == 1
    assert "codex plugin remove lich@lich-plugin" in refused.stderr.decode()
    assert not (home / ".codex" / "hooks.json").exists()
    replaced = run("install", "codex", "--replace", env={"PATH": path})
    assert replaced.returncode == 0, replaced.stderr.decode()
    assert ["codex", "plugin", "remove", "lich@lich-plugin"] in cli_log(home)
    assert "codex plugin marketplace add https://github.com/omartelo/lich-plugin && codex plugin add " \
           "lich@lich-plugin" in replaced.stdout.decode()


def test_a_codex_that_hangs_is_stopped_and_named(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), FAKE_CLI_HANG="1", LICHHOOK_CLI_TIMEOUT="1")
    program = fake_bin(tmp_path, "codex").split(os.pathsep)[0] + "/codex"
    started = time.monotonic()
    with pytest.raises(ConfigError) as caught:  # a change is given LICHHOOK_CLI_TIMEOUT's 1 s
        harnesscli.run(program, ["plugin", "add", "lich@lich-plugin"], env, change=True)
    assert "did not finish within 1 s" in str(caught.value) and "LICHHOOK_CLI_TIMEOUT=<seconds>" in str(caught.value)
    assert time.monotonic() - started < 30  # killed, not waited for


NODE_CRASH = """file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:4211
""" + "var a=1;" * 2000 + """throw new Error("x")
                                                   ^

Error: Plugin "lich@lich-plugin" not found in any marketplace
    at hx (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:4211:120)
    at async Promise.all (index 0)

Node.js v22.12.0
"""
RUST_PANIC = """thread 'main' panicked at codex-rs/cli/src/plugin.rs:88:14:
called `Option::unwrap()` on a `None` value
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a/library/std/src/panicking.rs:665:5
   1: codex::plugin::add
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
"""
PYTHON_CRASH = """Traceback (most recent call last):
  File "/usr/bin/tool", line 3, in <module>
    raise ValueError("bad marketplace")
ValueError: bad marketplace
"""


@pytest.mark.parametrize("output, said", [
    (NODE_CRASH, 'Error: Plugin "lich@lich-plugin" not found in any marketplace'),
    (RUST_PANIC, "called `Option::unwrap()` on a `None` value"),
    (PYTHON_CRASH, "ValueError: bad marketplace"),
    ("Plugin not found in marketplace\n", "Plugin not found in marketplace"),
], ids=["node", "rust", "python", "plain"])
def test_a_cli_that_crashes_is_quoted_by_its_error_not_its_backtrace(tmp_path, output, said):
    script = tmp_path / "claude"
    (tmp_path / "out.txt").write_text(output)
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write(open({str(tmp_path / 'out.txt')!r}).read())\n"
                      "sys.exit(1)\n")
    script.chmod(0o755)
    result = harnesscli.run(str(script), ["plugin", "install", "lich@lich-plugin"], dict(os.environ))
    assert result.describe() == f"`claude plugin install lich@lich-plugin` exited with 1: {said}"


@pytest.mark.parametrize("harness, where", [
    ("opencode", ".config/opencode/plugin/lich.js"),
    ("omp", ".omp/agent/extensions/lich.js"),
])
def test_a_marked_module_is_refused_then_set_aside_with_the_way_back(run, home, harness, where):
    module = home / where
    module.parent.mkdir(parents=True)
    module.write_text("// lich-plugin v0.18.0 — installed by lich, replace with the file from omartelo/lich-plugin\n"
                      "export const LichPlugin = async () => ({});\n")
    refused = run("install", harness)
    assert refused.returncode == 1 and f"rm {module}" in refused.stderr.decode()
    replaced = run("install", harness, "--replace")
    assert replaced.returncode == 0, replaced.stderr.decode()
    assert "Added by `lichhook install" in module.read_text()  # lichhook's module now holds lich's path
    back = next(line for line in replaced.stdout.decode().splitlines() if "to put it back: mv " in line)
    kept = Path(back.split("to put it back: mv ")[1].split(" ")[0])
    assert kept.read_text().startswith("// lich-plugin v0.18.0")


def test_crush_block_is_refused_then_cut_keeping_the_rest(run, home):
    rc = home / ".config" / "crush" / "crushrc"
    rc.parent.mkdir(parents=True)
    mine = "# my own\nalias x=y\n"
    rc.write_text(mine + "\n# >>> lich-plugin v0.18.0 >>>\n# Managed by lich.\n"
                  "hook add PreToolUse --name lich-session-id --command '/x/report.sh crush' --timeout 5\n"
                  "# <<< lich-plugin <<<\n")
    refused = run("install", "crush")
    assert refused.returncode == 1 and "lich-plugin 0.18.0" in refused.stderr.decode()
    replaced = run("install", "crush", "--replace")
    assert replaced.returncode == 0, replaced.stderr.decode()
    text = rc.read_text()
    assert "lich-plugin" not in text and text.startswith(mine) and "lichhook" in text


def test_antigravity_folder_is_found(run, home):
    folder = home / ".gemini" / "config" / "plugins" / "lich"
    folder.mkdir(parents=True)
    (folder / "plugin.json").write_text(json.dumps({"name": "lich", "version": "0.18.0"}))
    result = run("install", "antigravity")
    assert result.returncode == 1 and f"rm -r {folder}" in result.stderr.decode()


def test_a_harness_cli_that_hangs_stops_only_its_harness(run, home, tmp_path):
    # `claude plugin marketplace --help` never answers: install is bounded, says so, and
    # changes nothing for Claude Code.
    result = run("install", "claude", env={"PATH": fake_bin(tmp_path, "claude"), "FAKE_CLI_HANG": "1"}, timeout=60)
    assert result.returncode == 1
    assert "did not finish within 10 s and was stopped" in result.stderr.decode()
    assert not (home / ".claude" / "settings.json").exists()


# -- the plugin route, against a stand-in `claude` that keeps Claude Code's records ---------
# (the end-to-end suite runs the real one: tests/e2e/test_plugin_route.py)

FAKE_CLAUDE = r'''#!{python}
import json, os, shutil, sys
home = os.environ["HOME"]
with open(os.path.join(home, "cli.log"), "a") as f:
    f.write(json.dumps(["claude"] + sys.argv[1:]) + "\n")
plugins = os.path.join(home, ".claude", "plugins")
os.makedirs(plugins, exist_ok=True)
records, markets = os.path.join(plugins, "installed_plugins.json"), os.path.join(plugins, "known_marketplaces.json")
def load(path, empty):
    return json.load(open(path)) if os.path.exists(path) else empty
args = sys.argv[1:]
if args == ["plugin", "marketplace", "--help"]:
    print("Manage Claude Code marketplaces")
elif args[:3] == ["plugin", "marketplace", "add"]:
    doc = load(markets, {{}})
    doc["lich-plugin"] = {{"source": {{"source": "directory", "path": args[3]}}}}
    json.dump(doc, open(markets, "w"))
elif args[:3] == ["plugin", "marketplace", "remove"]:
    doc = load(markets, {{}}); doc.pop(args[3], None); json.dump(doc, open(markets, "w"))
elif args[:2] in (["plugin", "install"], ["plugin", "update"]):
    if os.environ.get("FAKE_FAIL_INSTALL"):
        print("Plugin not found in marketplace"); sys.exit(1)
    source = load(markets, {{}})["lich-plugin"]["source"]["path"]
    version = json.load(open(os.path.join(source, ".claude-plugin", "plugin.json")))["version"]
    dest = os.path.join(plugins, "cache", "lich-plugin", "lich", version.replace("+", "-"))
    shutil.rmtree(dest, ignore_errors=True); shutil.copytree(source, dest)
    doc = load(records, {{"version": 2, "plugins": {{}}}})
    doc["plugins"]["lich@lich-plugin"] = [{{"scope": "user", "installPath": dest, "version": version}}]
    json.dump(doc, open(records, "w"))
elif args[:2] == ["plugin", "uninstall"]:
    doc = load(records, {{"version": 2, "plugins": {{}}}}); doc["plugins"].pop(args[2], None)
    json.dump(doc, open(records, "w"))
'''


def fake_claude(tmp_path: Path, python: str = sys.executable) -> str:
    folder = tmp_path / "claude-bin"
    folder.mkdir()
    path = folder / "claude"
    path.write_text(FAKE_CLAUDE.format(python=python))
    path.chmod(0o755)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


def test_plugin_route_moves_config_entries_into_the_plugin_and_back(run, home, tmp_path):
    assert run("install", "claude").returncode == 0  # the config route (no claude on PATH)
    settings = home / ".claude" / "settings.json"
    assert "hooks.pyz" in settings.read_text()
    path = fake_claude(tmp_path)
    moved = run("install", "claude", env={"PATH": path})
    assert moved.returncode == 0, moved.stderr.decode()
    assert "installed through `claude plugin`" in moved.stdout.decode()
    assert "hooks.pyz" not in (settings.read_text() if settings.exists() else "")  # never twice
    records = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (row,) = records["plugins"]["lich@lich-plugin"]
    assert row["version"].startswith(release.claim(None, "claude") + "+lichhook.")
    hooks = json.loads((Path(row["installPath"]) / "hooks" / "hooks.json").read_text())["hooks"]
    assert "claude-code stop" in json.dumps(hooks["Stop"])
    doctor = run("doctor", "--verbose", env={"PATH": path})
    out = doctor.stdout.decode()
    assert "hooks:      12 of 12 registered" in out and f"plugin: lich@lich-plugin {row['version']}" in out, out
    again = run("install", "claude", env={"PATH": path})
    assert [a for a in cli_log(home) if "--help" not in a and "--version" not in a][-1] == ["claude", "plugin", "install", "lich@lich-plugin"]
    assert "installed through" not in again.stdout.decode()  # nothing to do the second time
    gone = run("uninstall", "claude", env={"PATH": path})
    assert gone.returncode == 0, gone.stderr.decode()
    assert json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())["plugins"] == {}
    assert not (home / ".local" / "share" / "lichhook" / "marketplace").exists()


def test_a_plugin_install_that_fails_falls_back_to_the_config_and_says_so(run, home, tmp_path):
    result = run("install", "claude", env={"PATH": fake_claude(tmp_path), "FAKE_FAIL_INSTALL": "1"})
    out = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()
    assert "did not install lichhook's plugin: `claude plugin install lich@lich-plugin` exited with 1: " \
           "Plugin not found in marketplace" in out
    assert "went into Claude Code's config instead" in out
    assert "hooks.pyz" in (home / ".claude" / "settings.json").read_text()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(),
                    reason="runs install as another user, which needs root and setpriv")
def test_a_plugin_folder_the_user_cannot_write_is_named_and_nothing_changes(pyz, tmp_path):
    import shutil
    import subprocess
    import tempfile

    # install runs as `nobody`; Claude Code's plugin folder belongs to root, read-only to it
    root = Path(tempfile.mkdtemp(prefix="lichhook-nobody-"))
    try:
        root.chmod(0o755)
        home = root / "home"
        (home / ".claude" / "plugins").mkdir(parents=True)
        shutil.copy(pyz, root / "lichhook.pyz")
        python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one nobody can run
        path = fake_claude(root, python)
        for p in [root, *root.rglob("*")]:
            os.chown(p, 65534, 65534)
        os.chown(home / ".claude" / "plugins", 0, 0)
        (home / ".claude" / "plugins").chmod(0o755)
        env = {"HOME": str(home), "PATH": path, "XDG_DATA_HOME": str(home / ".local" / "share"),
               "XDG_CONFIG_HOME": str(home / ".config")}
        def state() -> list:
            return sorted(str(p) for p in home.rglob("*") if p.name != "cli.log")  # the stand-in's own log

        before = state()
        result = subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                 python, str(root / "lichhook.pyz"), "install", "claude"],
                                env=env, capture_output=True, timeout=60)
        err = result.stderr.decode()
        assert result.returncode == 1, err
        assert f"{home / '.claude' / 'plugins'} is not writable by you" in err and "chown" in err
        assert state() == before
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_release_as_the_plugin_is_lichhook_and_config_entries_beside_it_are_refused(run, pyz, home, base_env,
                                                                                         tmp_path):
    import subprocess

    import build_zipapp

    path = fake_claude(tmp_path)
    env = dict(base_env, PATH=path)
    for args in (["plugin", "marketplace", "add", str(build_zipapp.release_dir(pyz))],
                 ["plugin", "install", "lich@lich-plugin"]):
        subprocess.run(["claude", *args], env=env, check=True, timeout=60)
    doctor = run("doctor", "--verbose", env={"PATH": path}).stdout.decode()
    section = doctor.split("Claude Code (claude)")[1].split("\n\n")[0]
    assert "registered: yes, as the release plugin" in section and "(exists)" in section, section
    assert "problem: claude:" not in doctor
    config_route = {"PATH": path, "LICHHOOK_NO_PLUGIN_ROUTE": "1"}
    refused = run("install", "claude", env=config_route)
    assert refused.returncode == 1 and "every report would be sent twice" in refused.stderr.decode()
    assert not (home / ".claude" / "settings.json").exists()


def test_replacing_a_marketplace_that_holds_the_installed_plugin_puts_back_both(run, pyz, home, base_env, tmp_path):
    # lichhook's release, installed as Claude Code's plugin from its own folder: --replace
    # removes that marketplace, and the plugin installed from it goes with it.
    import subprocess

    import build_zipapp

    path = fake_claude(tmp_path)
    release = build_zipapp.release_dir(pyz)
    for args in (["plugin", "marketplace", "add", str(release)], ["plugin", "install", "lich@lich-plugin"]):
        subprocess.run(["claude", *args], env=dict(base_env, PATH=path), check=True, timeout=60)
    replaced = run("install", "claude", "--replace", env={"PATH": path})
    out = replaced.stdout.decode()
    assert replaced.returncode == 0, replaced.stderr.decode()
    assert f"to put it back: claude plugin marketplace add {release} && claude plugin install lich@lich-plugin" \
        in out, out


def test_windows_takes_the_plugin_route_with_this_machines_commands(tmp_path, home):
    """On Windows the local marketplace carries the config route's Windows entries: the
    absolute Python and archive of this machine, in Claude Code's exec form and Codex's
    commandWindows; never the release's portable `python3 ${CLAUDE_PLUGIN_ROOT}` line."""
    from lichhook.install.plugin import route
    from lichhook.install.harnesses.claude import Claude
    from lichhook.install.harnesses.codex import Codex
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target

    environ = {"HOME": str(home), "USERPROFILE": str(home), "PATH": fake_claude(tmp_path)}
    assert route.route_problem(Claude(Env(environ, windows=False))) is None
    assert route.route_problem(Claude(Env(environ, windows=True))) is None
    python, archive = "C:\\Python312\\python.exe", "C:\\Users\\zoe\\AppData\\Local\\lichhook\\py3.12\\hooks.pyz"
    target = Target(python, archive, windows=True, short_path=lambda p: None)
    claude = route.plugin_files(Claude(Env(environ, windows=True)), target)
    stop = json.loads(claude["hooks/hooks.json"])["hooks"]["Stop"][0]["hooks"][0]
    assert stop["command"] == python and stop["args"][-3:] == [archive, "claude", "Stop"], stop
    codex = route.plugin_files(Codex(Env(environ, windows=True)), target)
    compact = json.loads(codex["hooks/codex-hooks.json"])["hooks"]["PreCompact"][0]["hooks"][0]
    assert python in compact["commandWindows"] and compact["commandWindows"].endswith("codex PreCompact"), compact
    assert not any(b"CLAUDE_PLUGIN_ROOT" in data for data in [*claude.values(), *codex.values()])
