"""Whether Codex trusts lichhook's hooks: the key and hash as Codex 0.171.0 computes them,
held to the bytes it wrote (tests/fixtures/codex-0.171.0), and doctor and install saying it
through the archive."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
import tomlkit

from lichhook.adapters import BY_PROVIDER
from lichhook.descriptor import registrations
from lichhook.install.harnesses import codextrust
from testkit.archive import absolute
from testkit.constants import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "codex-0.171.0"
CAPTURED = "/tmp/lichhook-codex-fixture/home"
SOURCE = f"{CAPTURED}/.codex/hooks.json"
PY = os.path.abspath(sys.executable)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def records(name: str) -> dict:
    return codextrust.records(tomlkit.parse(fixture(name)).unwrap())


def handlers(name: str):
    """(event, group index, group, handler index, handler) of every hook in a hooks.json."""
    for event, groups in json.loads(fixture(name))["hooks"].items():
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group["hooks"]):
                yield event, gi, group, hi, handler


def listed(name: str) -> dict:
    return {h["key"]: h for h in json.loads(fixture(name))}


# -- the computation, against what Codex wrote ----------------------------------------------


def test_every_hash_is_the_one_codex_wrote_when_the_user_trusted_it():
    trusted, seen = records("config.toml"), listed("hooks-list.json")
    keys = []
    for event, gi, group, hi, handler in handlers("hooks.json"):
        key = codextrust.key(SOURCE, event, gi, hi)
        keys.append(key)
        current = codextrust.hook_hash(event, group, handler, windows=False)
        assert current == trusted[key]["trusted_hash"] == seen[key]["currentHash"], (event, handler)
        assert codextrust.status(current, trusted[key]) == codextrust.TRUSTED
    assert sorted(keys) == sorted(trusted) == sorted(seen)  # one record per hook, none left over


def test_a_changed_command_is_modified_and_a_hook_turned_off_is_not_enabled():
    state, seen = records("config-disabled.toml"), listed("hooks-list-reinstalled.json")
    for event, gi, group, hi, handler in handlers("hooks-reinstalled.json"):
        key = codextrust.key(SOURCE, event, gi, hi)
        current = codextrust.hook_hash(event, group, handler, windows=False)
        assert current == seen[key]["currentHash"]
        assert codextrust.status(current, state.get(key)) == seen[key]["trustStatus"], key
        assert codextrust.enabled(state.get(key)) is seen[key]["enabled"], key
    assert {seen[k]["trustStatus"] for k in seen if ":session_start:1:" in k} == {"modified"}


SESSION_START = {"hooks": [{"type": "command", "command": "/usr/bin/python3 /x/lichhook.pyz codex", "timeout": 5}]}


@pytest.mark.parametrize("change,same", [
    ({"timeout": 5.0}, None), ({"timeout": -1}, None), ({"timeout": True}, None), ({"async": None}, None),
    ({"command": "   "}, None), ({"type": "prompt"}, None), ({"statusMessage": 3}, None),
    ({"note": "ignored"}, True), ({"commandWindows": "C:\\py.exe x"}, True), ({"timeout": 0}, False),
])
def test_what_codex_cannot_run_has_no_hash_and_what_it_ignores_changes_nothing(change, same):
    group = json.loads(json.dumps(SESSION_START))
    base = codextrust.hook_hash("SessionStart", group, group["hooks"][0], windows=False)
    group["hooks"][0].update(change)
    got = codextrust.hook_hash("SessionStart", group, group["hooks"][0], windows=False)
    assert (got is None) if same is None else ((got == base) is same)


def test_on_windows_the_hash_is_over_the_windows_line():
    group = json.loads(json.dumps(SESSION_START))
    handler = group["hooks"][0]
    handler["commandWindows"] = "C:\\Python312\\python.exe C:\\x\\lichhook.pyz codex"
    windows = codextrust.identity("SessionStart", group, handler, windows=True)
    assert windows is not None and windows["hooks"][0]["command"] == handler["commandWindows"]
    assert "commandWindows" not in windows["hooks"][0]


# -- doctor and install, through the archive --------------------------------------------------


def relocated(home: Path, config: str, hooks: str) -> dict:
    """The fixture files in ``home``'s Codex folder, unchanged but for the key prefix in the
    trust records (Codex keys them by the real path of its folder, which is the test's here),
    and the environment in which lichhook's archive is the one the fixture's commands name."""
    codex = home / ".codex"
    codex.mkdir()
    (codex / "hooks.json").write_bytes((FIXTURES / hooks).read_bytes())
    text = fixture(config).replace(f'"{SOURCE}:', f'"{os.path.realpath(codex)}/hooks.json:')
    (codex / "config.toml").write_text(text, encoding="utf-8")
    return {"XDG_DATA_HOME": f"{CAPTURED}/.local/share"}


def trust_lines(out: str) -> dict:
    section = out.split("Codex CLI (codex)")[1].split("\n\n")[0]
    return {line.split("'")[1]: line.strip() for line in section.splitlines() if line.strip().startswith("trust:")}


def test_doctor_says_codex_trusts_the_hooks_it_trusted(run, home):
    env = relocated(home, "config.toml", "hooks.json")
    out = run("doctor", "--verbose", env=env).stdout.decode()
    lines = trust_lines(out)
    assert set(lines) == {"codex", "codex-waits session-start"}
    assert all(line.endswith("trusted by Codex") for line in lines.values()), lines
    assert not [line for line in out.splitlines() if "Codex does not run" in line]


def test_doctor_says_which_hook_changed_and_which_was_turned_off(run, home):
    env = relocated(home, "config-disabled.toml", "hooks-reinstalled.json")
    result = run("doctor", "--verbose", env=env)
    assert result.returncode == 1
    out = result.stdout.decode()
    lines = trust_lines(out)
    key = f"{os.path.realpath(home / '.codex')}/hooks.json:session_start:1:0"
    assert lines["codex"] == (f"trust: SessionStart hook 'codex': changed since you trusted it, so Codex skips it "
                              f"without a word (Codex's key {key})")
    assert "turned off in Codex's /hooks (changed since you trusted it)" in lines["codex-waits session-start"]
    problems = [line for line in out.splitlines() if line.startswith("problem: codex: Codex does not run")]
    assert len(problems) == 2
    assert 'Fix: start codex; when it says "Hooks need review", choose "Trust all and continue"' in problems[0]
    assert "Fix: start codex, open /hooks and turn it on, then trust it (press t on it)" in problems[1]


def test_doctor_says_an_untrusted_hook_is_skipped_and_how_to_trust_it(run, home):
    env = relocated(home, "config.toml", "hooks.json")
    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text().split("[hooks.state]")[0])
    out = run("doctor", "--verbose", env=env).stdout.decode()
    for line in trust_lines(out).values():
        assert "not trusted yet, so Codex skips it without a word" in line
    assert "lichhook never does it for you" in out


SNAKE = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use",
         "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use", "Stop": "stop",
         "SessionEnd": "session_end", "PreCompact": "pre_compact", "PostCompact": "post_compact"}


def expected_hash(command: str, event: str = "SessionStart", timeout: int = 5, matcher=None) -> str:
    """Codex's hash of a command hook, spelled out (see codextrust)."""
    identity = {"event_name": SNAKE[event], "hooks": [
        {"async": False, "command": command, "timeout": timeout, "type": "command"}]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def trust_tables(codex: Path, key_folder: str) -> str:
    """The ``[hooks.state."..."]`` tables Codex writes when the user trusts every hook of
    ``codex``/hooks.json, keyed under ``key_folder``."""
    tables = ""
    for event, groups in json.loads((codex / "hooks.json").read_text())["hooks"].items():
        for gi, group in enumerate(groups):
            for hi, h in enumerate(group["hooks"]):
                tables += (f'\n[hooks.state."{key_folder}/hooks.json:{SNAKE[event]}:{gi}:{hi}"]\n'
                           f'trusted_hash = "{expected_hash(h["command"], event, h.get("timeout", 600), group.get("matcher"))}"\n')
    return tables


def trust_all(home: Path) -> None:
    """What Codex writes when the user trusts lichhook's hooks."""
    codex = home / ".codex"
    with open(codex / "config.toml", "a", encoding="utf-8") as f:
        f.write("\n[tui]\nscreen_reader_detection_done = true\n\n[hooks.state]\n"
                + trust_tables(codex, os.path.realpath(codex)))


def test_install_says_codex_needs_trust_until_it_has_it_and_a_reinstall_keeps_it(run, home):
    out = run("install", "codex").stdout.decode()
    # one note for the hooks lichhook writes, on every event (doctor --verbose names each)
    rows = registrations(BY_PROVIDER["codex"])
    assert len(rows) == 10 and out.count("note: codex: 10 hooks not trusted yet. Fix: start codex") == 1, out
    assert "Trust all and continue" in out
    again = run("install", "codex").stdout.decode()
    assert "note: codex: 10 hooks not trusted yet" in again  # it keeps saying so
    trust_all(home)
    codex = home / ".codex"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in codex.iterdir()}
    out = run("install", "codex").stdout.decode()
    assert "Codex does not run" not in out
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in codex.iterdir()} == before
    assert all(line.endswith("trusted by Codex") for line in trust_lines(run("doctor", "--verbose").stdout.decode()).values())


def test_an_upgrade_keeps_the_report_hook_trusted_and_asks_only_for_the_new_one(run, home):
    run("install", "codex")
    hooks = home / ".codex" / "hooks.json"
    doc = json.loads(hooks.read_text())
    del doc["hooks"]["SessionStart"][0]["hooks"][1]  # what the previous release wrote
    hooks.write_text(json.dumps(doc, indent=2))
    trust_all(home)
    out = absolute(run("install", "codex").stdout.decode(), home)
    assert f"changed {hooks}" in out
    assert "hook 'codex-waits session-start'" in out and "hook 'codex' " not in out
    lines = trust_lines(run("doctor", "--verbose").stdout.decode())
    assert lines["codex"].endswith("trusted by Codex")
    assert "not trusted yet" in lines["codex-waits session-start"]


def test_a_symlinked_codex_home_is_keyed_by_its_real_path(run, home, tmp_path):
    real = tmp_path / "dotfiles" / "codex"
    real.mkdir(parents=True)
    linked = home / "codex-link"
    linked.symlink_to(real, target_is_directory=True)
    env = {"CODEX_HOME": str(linked)}
    run("install", "codex", env=env)
    with open(real / "config.toml", "a", encoding="utf-8") as f:
        f.write(trust_tables(real, str(real)))
    lines = trust_lines(run("doctor", "--verbose", env=env).stdout.decode())
    assert len(lines) == 10 and all(line.endswith("trusted by Codex") for line in lines.values()), lines


def test_a_standing_approval_of_the_tool_is_kept_by_install_and_removed_with_the_server(run, home, tmp_path):
    run("install", "codex")
    config = home / ".codex" / "config.toml"
    approval = '\n[mcp_servers.lichhook.tools.claude_code_wait]\napproval_mode = "approve"\n'
    original = config.read_text()
    config.write_text(original + approval + '\n[tui]\nscreen_reader_detection_done = true\n')
    other = tmp_path / "python3"
    other.symlink_to(sys.executable)
    run("install", "codex", python=str(other))
    text = config.read_text()
    assert approval in text and f'command = "{other}"' in text
    assert "'tools' added" in run("doctor", "--verbose").stdout.decode()
    run("uninstall", "codex")
    assert "mcp_servers" not in config.read_text() and "[tui]" in config.read_text()


# -- every event's hook -------------------------------------------------------------------------


def test_an_upgrade_keeps_the_start_hooks_trusted_and_names_each_new_one(run, home):
    """The previous release wrote the two SessionStart hooks, which the user trusted; the
    hooks this release adds on the other events are named, one by one, until trusted."""
    run("install", "codex")
    hooks = home / ".codex" / "hooks.json"
    doc = json.loads(hooks.read_text())
    hooks.write_text(json.dumps({"hooks": {"SessionStart": doc["hooks"]["SessionStart"]}}, indent=2))
    trust_all(home)
    out = run("install", "codex").stdout.decode()
    assert "hook 'codex' " not in out and "hook 'codex-waits session-start'" not in out
    lines = trust_lines(run("doctor", "--verbose").stdout.decode())
    new = [r for r in registrations(BY_PROVIDER["codex"]) if r.event != "SessionStart"]
    assert set(lines) == {" ".join(r.words) for r in registrations(BY_PROVIDER["codex"])}
    assert lines["codex"].endswith("trusted by Codex") and lines["codex-waits session-start"].endswith("trusted by Codex")
    for r in new:
        assert f"trust: {r.event} hook '{' '.join(r.words)}': not trusted yet" in lines[" ".join(r.words)]
    assert f"note: codex: {len(new)} hooks not trusted yet" in out
    result = run("doctor", "--verbose")
    problems = [ln for ln in result.stdout.decode().splitlines() if ln.startswith("problem: codex: Codex does not run")]
    assert result.returncode == 1 and len(problems) == len(new)


def test_doctor_says_when_one_hook_of_another_event_is_untrusted(run, home):
    run("install", "codex")
    trust_all(home)
    assert run("doctor", "--verbose").returncode == 0
    config = home / ".codex" / "config.toml"
    key = f"{os.path.realpath(home / '.codex')}/hooks.json:permission_request:0:0"
    text = config.read_text()
    start = text.index(f'[hooks.state."{key}"]')
    end = text.index("\n", text.index("trusted_hash", start)) + 1
    config.write_text(text[:start] + text[end:])
    result = run("doctor", "--verbose")
    out = result.stdout.decode()
    problems = [ln for ln in out.splitlines() if ln.startswith("problem: codex: Codex does not run")]
    assert result.returncode == 1 and len(problems) == 1
    assert "PermissionRequest hook 'codex PermissionRequest'" in problems[0] and "not trusted yet" in problems[0]


def test_uninstall_takes_out_the_trust_records_of_lichhooks_hooks_only(run, home):
    codex = home / ".codex"
    codex.mkdir()
    user_hooks = '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]}}\n'
    (codex / "hooks.json").write_text(user_hooks)
    user_toml = 'model = "o3"\n'
    (codex / "config.toml").write_text(user_toml)
    run("install", "codex")
    # what Codex writes when the user trusts every hook: the user's one among them
    user_key = f"{os.path.realpath(codex)}/hooks.json:pre_tool_use:0:0"
    tables = trust_tables(codex, os.path.realpath(codex))
    assert f'[hooks.state."{user_key}"]' in tables
    trusted = "\n[tui]\nscreen_reader_detection_done = true\n\n[hooks.state]\n" + tables
    with open(codex / "config.toml", "a", encoding="utf-8") as f:
        f.write(trusted)
    ok = run("uninstall", "codex")
    assert ok.returncode == 0, ok.stderr
    assert (codex / "hooks.json").read_text() == user_hooks
    text = (codex / "config.toml").read_text()
    records = codextrust.records(tomlkit.parse(text).unwrap())
    assert list(records) == [user_key]  # the user's hook keeps its trust; lichhook's records are gone
    user_table = next(t for t in tables.split("\n\n") if user_key in t).strip("\n")
    assert text == user_toml + "\n[tui]\nscreen_reader_detection_done = true\n\n[hooks.state]\n\n" + user_table + "\n"


def test_doctor_names_a_hook_of_lichhooks_whose_command_is_not_text(run, home):
    """A handler the user rewrote with the archive in ``args`` and a list as its
    ``command``: doctor says Codex cannot run it, instead of crashing on it."""
    assert run("install", "codex").returncode == 0
    path = home / ".codex" / "hooks.json"
    doc = json.loads(path.read_text())
    archive = next(w for w in doc["hooks"]["SessionStart"][0]["hooks"][0]["command"].split() if w.endswith(".pyz"))
    doc["hooks"]["SessionStart"][0]["hooks"].append({"type": "command", "command": ["python3"], "args": [archive]})
    path.write_text(json.dumps(doc))
    doctor = run("doctor", "--verbose")
    assert "Traceback" not in doctor.stderr.decode()
    assert "trust: SessionStart hook '?': written in a way Codex cannot run" in doctor.stdout.decode()
