"""lich's own tools in omp, Crush and Antigravity, and lich's marker, as install writes
them and as lich reads them (testkit.lichreading does lich's reading as its Go code does)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from lichhook.contracts import RELEASE
from testkit import lichcli, lichreading


@pytest.fixture
def lich(tmp_path) -> Path:
    return lichcli.install(tmp_path / "lich bin ü", tmp_path / "calls.jsonl")


def _paths(home: Path) -> dict:
    return {"omp": home / ".omp" / "agent" / "extensions" / "lich.js",
            "crush": home / ".config" / "crush" / "crushrc",
            "antigravity": home / ".gemini" / "config" / "plugins" / "lich" / "plugin.json"}


def test_omp_registers_lichs_server_and_lich_reads_it_installed_with_tools(run, home, lich):
    mcp = home / ".omp" / "agent" / "mcp.json"
    mcp.parent.mkdir(parents=True)
    mcp.write_text('{"mcpServers": {"mine": {"command": "x"}}}\n')
    done = run("install", "omp", env={"LICH_BIN": str(lich)})
    assert done.returncode == 0, done.stderr.decode()
    assert f"`{lich} mcp` (from LICH_BIN)" in done.stdout.decode()
    module = _paths(home)["omp"]
    assert module.read_text().startswith(f"// lich-plugin v{RELEASE} ")
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["lich"] == {"command": str(lich), "args": ["mcp"]} and servers["mine"] == {"command": "x"}
    assert lichreading.has_tools("omp", module, str(lich))
    # lich's repair of a stale path, then uninstall: exactly lichhook's entries go
    assert lichreading.repair_document(mcp, "/opt/lich/lich")
    assert run("uninstall", "omp").returncode == 0
    assert json.loads(mcp.read_text()) == {"mcpServers": {"mine": {"command": "x"}}}
    assert not module.exists()


def test_omp_keeps_lichs_own_registration(run, home, lich):
    mcp = home / ".omp" / "agent" / "mcp.json"
    mcp.parent.mkdir(parents=True)
    theirs = '{"mcpServers": {"lich": {"command": "/usr/bin/lich", "args": ["mcp"]}}}\n'
    mcp.write_text(theirs)
    assert run("install", "omp", env={"LICH_BIN": str(lich)}).returncode == 0
    assert json.loads(mcp.read_text())["mcpServers"]["lich"]["command"] == "/usr/bin/lich"
    assert run("uninstall", "omp").returncode == 0
    assert mcp.read_text() == theirs


def test_omp_without_lichs_binary_registers_nothing_and_says_so(run, home):
    done = run("install", "omp", env={"PATH": "/nonexistent"})
    assert done.returncode == 0, done.stderr.decode()
    assert "lich's tools not registered" in done.stdout.decode()
    module = _paths(home)["omp"]
    assert lichreading.installed_version("omp", module) is None
    assert "lich" not in json.loads((home / ".omp" / "agent" / "mcp.json").read_text())["mcpServers"]


def test_crush_block_with_lichs_server_read_and_repaired_as_lich_does(run, home, lich):
    rc = _paths(home)["crush"]
    rc.parent.mkdir(parents=True)
    mine = "# my own\nalias x=y\n"
    rc.write_text(mine)
    done = run("install", "crush", env={"LICH_BIN": str(lich)})
    assert done.returncode == 0, done.stderr.decode()
    assert lichreading.installed_version("crush", rc) == RELEASE
    assert lichreading.has_tools("crush", rc, str(lich))
    command, block = lichreading.crush_command(rc)
    assert command == str(lich)
    assert f"mcp add lich --type stdio --command '{lich}' --args mcp --timeout 10" in block
    again = run("install", "crush", env={"LICH_BIN": str(lich)})
    doctor = run("doctor", "--verbose", env={"LICH_BIN": str(lich)}).stdout.decode()
    assert again.returncode == 0 and f"lich's tools: `{lich} mcp`, lich's marker at {RELEASE}" in doctor, doctor
    assert "replaces lichhook's marked part with lich-plugin's, beside lichhook's own hooks" in doctor, doctor
    assert run("uninstall", "crush").returncode == 0
    assert rc.read_text() == mine


def test_crush_without_crushrc_says_where_lich_reads(run, home, lich):
    done = run("install", "crush", env={"LICH_BIN": str(lich)})
    assert done.returncode == 0
    assert "does not exist. Create it (empty) and install again" in done.stdout.decode()


def test_antigravity_marker_and_server_and_uninstall(run, home, lich):
    config = home / ".gemini" / "config"
    done = run("install", "antigravity", env={"LICH_BIN": str(lich)})
    assert done.returncode == 0, done.stderr.decode()
    manifest = _paths(home)["antigravity"]
    assert json.loads(manifest.read_text())["version"] == RELEASE
    assert lichreading.has_tools("antigravity", manifest, str(lich))
    assert lichreading.document_command(config / "mcp_config.json") == str(lich)
    assert run("install", "antigravity", env={"LICH_BIN": str(lich)}).returncode == 0  # not refused as lich-plugin
    assert run("uninstall", "antigravity").returncode == 0
    assert not manifest.parent.exists() and not (config / "mcp_config.json").exists()


def test_doctor_reads_antigravitys_lich_server_as_lich_does_whatever_its_command_holds(run, home, lich):
    assert run("install", "antigravity", env={"LICH_BIN": str(lich)}).returncode == 0
    mcp = home / ".gemini" / "config" / "mcp_config.json"
    for command in (["not", "a", "path"], ""):  # what lich's repair could not run either
        mcp.write_text(json.dumps({"mcpServers": {"lich": {"command": command, "args": ["mcp"]}}}))
        said = run("doctor", "--verbose", env={"LICH_BIN": str(lich)})
        assert said.returncode in (0, 1) and "Traceback" not in said.stderr.decode(), said.stderr.decode()
        assert "lich's tools: none registered by lichhook" in said.stdout.decode(), said.stdout.decode()


def test_lich_plugins_own_marker_is_still_refused(run, home, lich):
    manifest = _paths(home)["antigravity"]
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"name": "lich", "version": "0.20.0", "description": "lich"}')
    refused = run("install", "antigravity", env={"LICH_BIN": str(lich)})
    assert refused.returncode == 1 and "lich-plugin 0.20.0" in refused.stderr.decode()
    rc = _paths(home)["crush"]
    rc.parent.mkdir(parents=True)
    rc.write_text("# >>> lich-plugin v0.20.0 >>>\nmcp add lich --type stdio --command '/x' --args mcp\n"
                  "# <<< lich-plugin <<<\n")
    refused = run("install", "crush", env={"LICH_BIN": str(lich)})
    assert refused.returncode == 1 and "lich-plugin 0.20.0" in refused.stderr.decode()


def _serves_lichs_tools(argv: list) -> list:
    """The tool names the MCP server ``argv`` lists after a handshake."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    done = subprocess.run(argv, input="".join(json.dumps(m) + "\n" for m in messages).encode(),
                          capture_output=True, timeout=30)
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    return [t["name"] for t in replies[-1]["result"]["tools"]]


def test_crush_and_antigravity_registrations_have_the_shape_read_and_run_the_server(run, home, lich):
    rc = _paths(home)["crush"]
    rc.parent.mkdir(parents=True)
    rc.write_text("")
    assert run("install", "crush", "antigravity", env={"LICH_BIN": str(lich)}).returncode == 0
    # crushrc is read by Crush's POSIX shell interpreter: one line, these words
    (line,) = [ln for ln in rc.read_text().splitlines() if ln.startswith("mcp add")]
    words = shlex.split(line)
    assert words == ["mcp", "add", "lich", "--type", "stdio", "--command", str(lich), "--args", "mcp",
                     "--timeout", "10"]
    assert _serves_lichs_tools([words[6], words[8]]) == list(lichcli.TOOLS)
    # Antigravity: agy's mcp_config.json entry and lich's marker manifest
    config = home / ".gemini" / "config"
    entry = json.loads((config / "mcp_config.json").read_text())["mcpServers"]["lich"]
    assert entry == {"command": str(lich), "args": ["mcp"]}
    assert _serves_lichs_tools([entry["command"], *entry["args"]]) == list(lichcli.TOOLS)
    manifest = json.loads(_paths(home)["antigravity"].read_text())
    assert set(manifest) == {"name", "version", "description"} and manifest["name"] == "lich"


def test_doctor_names_lichs_tools_and_a_registration_whose_lich_is_gone(run, home, lich):
    assert run("install", "omp", env={"LICH_BIN": str(lich)}).returncode == 0
    fine = run("doctor", "--verbose", env={"LICH_BIN": str(lich)}).stdout.decode()
    assert f"lich's tools: `{lich} mcp`, lich's marker at {RELEASE}" in fine, fine
    assert "lich's own install or update of its plugin rewrites this lich.js whole" in fine, fine  # omp's
    lich.unlink()
    gone = run("doctor", "--verbose").stdout.decode()
    assert f"it names {lich}, which is not there" in gone, gone


def test_after_lichs_own_update_lich_plugin_is_what_runs_and_uninstall_keeps_lichs(run, home, lich):
    assert run("install", "omp", env={"LICH_BIN": str(lich)}).returncode == 0
    module, mcp = _paths(home)["omp"], home / ".omp" / "agent" / "mcp.json"
    # lich's update, as its ompInstall does it: the module rewritten whole under lich's marker,
    # lich's server merged into mcp.json (the document re-encoded)
    module.write_text("// lich-plugin v0.20.0 — installed by lich, replace with the file from omartelo/lich-plugin\n"
                      "export default function lich() {}\n")
    doc = json.loads(mcp.read_text())
    doc["mcpServers"]["lich"] = {"command": str(lich), "args": ["mcp"]}
    mcp.write_text(json.dumps(doc, indent=2) + "\n")
    doctor = run("doctor", "--verbose", env={"LICH_BIN": str(lich)}).stdout.decode()
    assert "lich reads: lich-plugin 0.20.0" in doctor, doctor
    assert run("uninstall", "omp").returncode == 0
    assert module.read_text().startswith("// lich-plugin v0.20.0")
    assert json.loads(mcp.read_text())["mcpServers"] == {"lich": {"command": str(lich), "args": ["mcp"]}}


def test_replace_sets_lich_plugins_antigravity_folder_aside_and_writes_lichhooks_marker(run, home, lich):
    manifest = _paths(home)["antigravity"]
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"name": "lich", "version": "0.20.0", "description": "lich"}')
    (manifest.parent / "hooks.json").write_text("{}")
    done = run("install", "antigravity", "--replace", env={"LICH_BIN": str(lich)})
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(manifest.read_text())["version"] == RELEASE
    assert not (manifest.parent / "hooks.json").exists()
    assert "to put it back: mv " in done.stdout.decode()


def test_opencode_gets_lichs_tools_and_marker(run, home):
    module = home / ".config" / "opencode" / "plugin" / "lich.js"
    done = run("install", "opencode")
    assert done.returncode == 0 and "lich's tools are off" not in done.stdout.decode()
    assert lichreading.has_tools("opencode", module, "") and '"send_to_session"' in module.read_text()
    assert run("uninstall", "opencode").returncode == 0 and not module.exists()


# What lich's own update leaves where lichhook put lich's marker (lich's internal/agentplugin:
# opencode's and omp's lich.js rewritten whole; Crush's block under the marker and Antigravity's
# plugins/lich/ replaced with lich-plugin's, lichhook's own hooks staying beside them).
LICH_PLUGIN_MODULE = "// lich-plugin v0.20.0 — installed by lich\nexport default function lich() {}\n"


def _lichs_update(harness: str, home: Path) -> None:
    if harness in ("opencode", "omp"):
        path = home / ".config" / "opencode" / "plugin" / "lich.js" if harness == "opencode" else _paths(home)["omp"]
        path.write_text(LICH_PLUGIN_MODULE)
    elif harness == "crush":
        rc = _paths(home)["crush"]
        text = rc.read_text()
        start, end = text.index("# >>> lich-plugin v"), text.index("# <<< lich-plugin <<<\n") + 22
        rc.write_text(text[:start] + "# >>> lich-plugin v0.20.0 >>>\nhook add PreToolUse 'sh /x/report-state.sh'\n"
                      "# <<< lich-plugin <<<\n" + text[end:])
    else:
        folder = _paths(home)["antigravity"].parent
        (folder / "plugin.json").write_text('{"name": "lich", "version": "0.20.0", "description": "lich"}')
        (folder / "hooks.json").write_text('{"hooks": {}}')


@pytest.mark.parametrize("harness", ["opencode", "omp", "crush", "antigravity"])
def test_after_lichs_own_update_doctor_says_what_runs_and_install_never_adds_a_second(run, home, lich, harness):
    env = {"LICH_BIN": str(lich)}
    if harness == "crush":
        _paths(home)["crush"].parent.mkdir(parents=True)
        _paths(home)["crush"].write_text("")
    assert run("install", harness, env=env).returncode == 0
    _lichs_update(harness, home)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    doctor = run("doctor", "--verbose", env=env)
    out = doctor.stdout.decode()
    assert "lich reads: lich-plugin 0.20.0" in out, out
    problems = [line for line in out.splitlines() if line.startswith(f"problem: {harness}")]
    if harness == "opencode":  # nothing of lichhook's is left there: lich-plugin is simply what runs
        assert problems == [] and "note: lich-plugin reports for this harness" in out, out
    else:  # one problem, saying what runs, with a fix that works
        assert doctor.returncode == 1 and len(problems) == 1, out
        said = ("lich replaced lichhook's module with lich-plugin 0.20.0" if harness == "omp"
                else "lich-plugin 0.20.0 is installed beside lichhook")
        assert said in problems[0] and f"install {harness} --replace" in problems[0], problems
    again = run("install", harness, env=env)
    assert again.returncode == 1 and "lich-plugin 0.20.0" in again.stderr.decode(), again
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before  # refused, nothing changed
    back = run("install", harness, "--replace", env=env)
    assert back.returncode == 0, back.stderr.decode()
    fine = run("doctor", "--verbose", env=env).stdout.decode()
    assert "lich-plugin 0.20.0" not in fine.split("lich reads:")[-1].splitlines()[0], fine
