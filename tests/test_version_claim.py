"""The release lichhook names, and lich's reading of it, replayed as lich's Go does it
(docs/version.md): install asks a lich for its version, names the newest release it may
claim inside that lich's range, and the manifest lich reads, the mods' release.js and every
report's X-Lich-Plugin say that one number."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lichhook.contracts import RELEASE, release
from lichhook.install.plugin import claim
from testkit import lichreading
from testkit.environment import lich_env
from tests.test_lich_plugin import fake_claude
from tests.test_report import CASES, parse_request

# The lich releases whose compat.go was read, and the range each accepts.
MEASURED = [r[0] for r in release.RANGES]


def fake_lich(tmp_path: Path, answer: str, guard: bool = True) -> str:
    """A ``lich`` that answers ``version --json`` with ``answer`` and records every call;
    ``guard``: its bytes hold lich's refusal of an unknown word, as lich 0.34.0 on does."""
    folder = tmp_path / "lich-bin"
    folder.mkdir(exist_ok=True)
    path = folder / "lich"
    said = "# lich: unknown command %q\n" if guard else ""
    path.write_text(f"#!/bin/sh\n{said}echo \"$@\" >> '{folder}/calls'\nprintf '%s\\n' '{answer}'\n")
    path.chmod(0o755)
    return str(path)


# -- the rule ------------------------------------------------------------------------------


def test_lichs_range_check_is_compat_go_at_each_release_read():
    # compat_test.go @c09f63b1 (ceiling 0.14.0) and @274b3d51 (ceiling 0.18.0)
    assert release.within("0.14.0-rc.1", ("0.13.0", "0.14.0"))
    assert not release.within("0.14.0", ("0.13.0", "0.14.0"))
    assert not release.within("0.13.0-rc.1", ("0.13.0", "0.14.0"))
    assert release.within("0.17.0+lichhook.abc", ("0.13.0", "0.18.0"))
    assert not release.within("0.18.0", ("0.13.0", "0.18.0"))
    assert release.range_of("0.50.9") is None and release.range_of(None) is None
    assert release.range_of("0.51.0") == release.range_of("0.59.3") == ("0.13.0", "0.14.0")
    assert release.range_of("0.60.0") == ("0.13.0", "0.18.0")
    assert release.range_of("0.62.1") == release.range_of("1.0.0") == ("0.13.0", "0.19.0")


def test_the_update_lich_offers_is_compute_status():
    # agentplugin_test.go TestComputeStatus, range [0.13.0, ceiling)
    bounds = ("0.13.0", "0.18.0")
    assert release.update_offered("0.12.1", "0.12.2", None)
    assert not release.update_offered("0.12.1", "", None)
    assert not release.update_offered("0.13.0", "0.12.2", None)
    assert release.update_offered("0.12.0-rc.3", "0.12.0", None)
    assert release.update_offered("0.18.0", "0.17.0", bounds)  # past the ceiling
    assert release.update_offered("0.2.9", "0.17.0", bounds)
    assert not release.update_offered("0.2.9", "", bounds)


def test_a_claim_is_the_newest_claimable_inside_the_range_and_never_past_it():
    for name in ("claude", "codex", "opencode", "omp", "crush", "antigravity"):
        for lich in [None, "0.40.0", *MEASURED, "0.70.0"]:
            named = release.claim(lich, name)
            assert named in release.claimable(name)
            ranges = [release.range_of(lich)] if release.range_of(lich) else [(r[1], r[2]) for r in release.RANGES]
            assert all(release.within(named, bounds) for bounds in ranges), (name, lich, named)
            newer = [v for v in release.claimable(name) if release.less(named, v)
                     and all(release.within(v, bounds) for bounds in ranges)]
            assert not newer, (name, lich, named)
    # sub-agent cards are named only once lichhook does them
    assert ("0.15.0" in release.claimable("claude")) == ("0.15.0" in release.IMPLEMENTED)
    assert RELEASE == release.claim(None, "claude") == release.claim(None, "codex")


# The claim per harness for lich 0.51, 0.60, 0.61 and an unknown lich, as docs/version.md
# tables it: what the audit of each release (IMPLEMENTED) allows inside each range.
CLAIMS = {
    "claude": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
    "codex": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
    "antigravity": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
    "opencode": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
    "omp": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
    "crush": ("0.13.2", "0.17.0", "0.18.4", "0.13.2"),
}


@pytest.mark.parametrize("harness", sorted(CLAIMS))
def test_each_harness_names_what_the_audit_of_each_release_allows(harness):
    assert tuple(release.claim(lich, harness) for lich in (*MEASURED, None)) == CLAIMS[harness]
    assert release.IMPLEMENTED == {"0.13.0", "0.13.1", "0.13.2", "0.14.0", "0.15.0", "0.15.1", "0.16.0", "0.17.0",
                                   "0.18.0", "0.18.1", "0.18.2", "0.18.3", "0.18.4"}


@pytest.mark.parametrize("output, version", [
    ('{"cli":"0.61.0"}', "0.61.0"),
    ('{"cli":"0.61.0","server":"0.60.2"}', "0.60.2"),  # the running lich is the one that reads
    ("lich 0.39.0", "0.39.0"),  # before 0.51.0: no --json, the plain line
    ("banner\n{\"cli\": \"0.52.0\"}", "0.52.0"),
    ('{"cli":"../../x"}', None),
    ("lich", None),
    ("", None),
])
def test_lichs_answer_is_read(output, version):
    assert claim.parsed(output) == version


def test_a_lich_that_would_open_its_window_is_not_asked(tmp_path):
    binary = fake_lich(tmp_path, '{"cli":"0.61.0"}', guard=False)
    seen = claim.lich_seen({"LICH_BIN": binary, "PATH": ""}, windows=False)
    assert seen.version is None and "older than lich 0.34.0" in seen.how
    assert not (Path(binary).parent / "calls").exists()
    asked = claim.lich_seen({"LICH_BIN": fake_lich(tmp_path, '{"cli":"0.61.0"}'), "PATH": ""}, windows=False)
    assert asked.version == "0.61.0"
    assert (Path(binary).parent / "calls").read_text() == "version --json\n"


# -- lich's reading of what install wrote ----------------------------------------------------


def hooks_archive(home: Path) -> Path:
    (found,) = (home / ".local" / "share" / "lichhook").glob("py*/hooks.pyz")
    return found


def header_sent(home: Path, base_env: dict, fault_server) -> str:
    """X-Lich-Plugin of a report the installed hooks send for Claude Code."""
    server = fault_server("status", 204)
    payload, _, _ = CASES["claude"]
    done = subprocess.run([sys.executable, "-I", "-S", str(hooks_archive(home)), "claude"],
                          input=json.dumps(payload).encode(), env=dict(base_env, **lich_env(server)),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    (raw,) = server.requests
    return parse_request(raw)[1]["x-lich-plugin"]


@pytest.mark.parametrize("lich", MEASURED)
def test_lich_reads_one_number_it_supports_and_routes_sub_agents_as_lichhook_does(run, home, tmp_path, base_env,
                                                                                   fault_server, lich):
    path = fake_claude(tmp_path)
    binary = fake_lich(tmp_path, json.dumps({"cli": lich}))
    done = run("install", "claude", env={"PATH": path, "LICH_BIN": binary})
    assert done.returncode == 0, done.stderr.decode()
    named = release.claim(lich, "claude")
    assert f"lich-plugin release named for lich {lich}" in done.stdout.decode()
    # lich's own reading of Claude Code's record
    installed = lichreading.parse_installed_version(
        (home / ".claude" / "plugins" / "installed_plugins.json").read_bytes())
    assert installed is not None and installed.split("+")[0] == named and "+lichhook." in installed
    row = lichreading.status(installed, lich)
    assert row.compatible
    # no update, unless the newest release in lich's range is one lichhook does not do yet
    assert row.update_available == (row.latest not in release.claimable("claude"))
    if lich == "0.51.0":
        assert not row.update_available
    assert row.subagent_cards == (not release.less(named, release.SUBAGENT_CARDS))
    assert not row.subagent_cards or "0.15.0" in release.IMPLEMENTED
    # the mods and the hooks name the same release
    (plugin,) = (home / ".claude" / "plugins" / "cache" / "lich-plugin" / "lich").iterdir()
    assert f'export const RELEASE = "{named}";' in (plugin / "hooks" / "claude" / "release.js").read_text()
    assert header_sent(home, base_env, fault_server) == named
    assert lichreading.mod_answers(named, True) == (not release.less(named, release.MOD_ANSWERS))
    # doctor says it in lich's terms, and sees nothing to fix
    doctor = run("doctor", "--no-run", "--json", env={"PATH": path, "LICH_BIN": binary})
    (seen,) = [h for h in json.loads(doctor.stdout)["harnesses"] if h["name"] == "claude"]
    assert f"measured against lich {lich}" in seen["lich_shows"][0]
    assert any(f"shows {named} as compatible" in line for line in seen["lich_shows"])
    assert any(("offers no update" in line) != row.update_available for line in seen["lich_shows"])
    assert any("routes Claude Code sub-agents to " + ("cards" if row.subagent_cards else "`lich open` in its briefing") in line
               for line in seen["lich_shows"])
    assert not any("would not name" in p.get("text", "") + json.dumps(p) for p in json.loads(doctor.stdout)["problems"]
                   if p.get("harness") == "claude")


def test_a_lich_upgraded_after_install_is_a_problem_whose_fix_is_install(run, home, tmp_path, base_env):
    path = fake_claude(tmp_path)
    old = fake_lich(tmp_path, '{"cli":"0.51.0"}')
    assert run("install", "claude", env={"PATH": path, "LICH_BIN": old}).returncode == 0
    doctor = run("doctor", "--no-run", "--verbose", env={"PATH": path, claim.OVERRIDE: "0.61.0"})
    out = doctor.stdout.decode()
    if release.claim("0.51.0", "claude") == release.claim("0.61.0", "claude"):
        assert "would not name" not in out
    else:
        assert doctor.returncode == 1 and "run install claude again" in out, out


def test_an_unknown_lich_gets_the_release_every_lich_accepts_and_doctor_says_so(run, home, tmp_path, base_env,
                                                                                fault_server):
    path = fake_claude(tmp_path)
    done = run("install", "claude", env={"PATH": path, "LICH_BIN": "", "HOME": str(home)})
    assert done.returncode == 0, done.stderr.decode()
    assert "named for an unknown lich" in done.stdout.decode()
    installed = lichreading.parse_installed_version(
        (home / ".claude" / "plugins" / "installed_plugins.json").read_bytes())
    assert installed.split("+")[0] == RELEASE
    for lich in MEASURED:
        assert lichreading.status(installed, lich).compatible
    assert header_sent(home, base_env, fault_server) == RELEASE
    doctor = run("doctor", "--no-run", "--verbose", env={"PATH": path})
    assert "may offer an update" in doctor.stdout.decode()


def test_lich_version_given_is_measured_against_and_a_bad_one_changes_nothing(run, home, tmp_path):
    path = fake_claude(tmp_path)
    bad = run("install", "claude", "--lich-version", "x/../1", env={"PATH": path})
    assert bad.returncode == 1 and "--lich-version" in bad.stderr.decode()
    assert not (home / ".claude" / "plugins" / "installed_plugins.json").exists()
    good = run("install", "claude", "--lich-version", "v0.60.0", env={"PATH": path})
    assert good.returncode == 0 and "named for lich 0.60.0 (given with --lich-version)" in good.stdout.decode()


def test_codexs_listing_is_read_as_lich_reads_it():
    # TestParseCodexPluginList @845e5f89: a banner before the JSON; only an installed row
    listing = "Codex plugins\n" + json.dumps({"installed": [
        {"pluginId": "other@x", "installed": True, "version": "9.9.9"},
        {"pluginId": "lich@lich-plugin", "installed": False, "version": "0.18.0"},
        {"pluginId": "lich@lich-plugin", "installed": True, "version": "0.17.0+lichhook.ab"}]})
    assert lichreading.parse_codex_plugin_list(listing) == "0.17.0+lichhook.ab"
    assert lichreading.parse_codex_plugin_list("no json") is None
    records = {"plugins": {"lich@lich-plugin": [{"scope": "project", "version": "0.1.0"},
                                                {"scope": "user", "version": ""},
                                                {"scope": "user", "version": "0.13.2+lichhook.x"}]}}
    assert lichreading.parse_installed_version(json.dumps(records).encode()) == "0.13.2+lichhook.x"


@pytest.mark.parametrize("answer, said", [
    ("sleep 30", "did not finish within 3 s"),
    ("echo 'lich: something broke' >&2; exit 1", "said no version"),
    ("echo '{\"cli\": 61}'", "said no version"),
])
def test_a_lich_that_hangs_fails_or_lies_about_its_version_is_unknown(tmp_path, answer, said):
    path = tmp_path / "lich"
    path.write_text(f"#!/bin/sh\n# lich: unknown command %q\n{answer}\n")
    path.chmod(0o755)
    seen = claim.lich_seen({"LICH_BIN": str(path), "PATH": "/usr/bin:/bin"}, windows=False)
    assert seen.version is None and said in seen.how, seen


@pytest.mark.parametrize("written", [
    b"claude ../../x\n", b"claude 0.19.0 extra\n", b"claude\n", b"\xff\xfe\x00claude 0.15.0\x00\n",
    b"codex 0.18.1\n", b"claude " + b"9" * 100 + b"\n",
])
def test_a_claims_file_that_is_not_one_leaves_the_header_at_the_release_every_lich_takes(run, home, tmp_path, base_env,
                                                                                          fault_server, written):
    path = fake_claude(tmp_path)
    assert run("install", "claude", env={"PATH": path, "LICH_BIN": ""}).returncode == 0
    (hooks_archive(home).parent / "claims").write_bytes(written)
    assert header_sent(home, base_env, fault_server) == RELEASE


def test_a_lich_version_given_once_holds_for_doctor_and_the_next_install(run, home, tmp_path):
    path = fake_claude(tmp_path)
    env = {"PATH": path, "LICH_BIN": ""}
    assert run("install", "claude", "--lich-version", "0.60.0", env=env).returncode == 0
    named = release.claim("0.60.0", "claude")
    doctor = run("doctor", "--no-run", "--json", env=env)
    (seen,) = [h for h in json.loads(doctor.stdout)["harnesses"] if h["name"] == "claude"]
    assert "measured against lich 0.60.0 (as the last install measured it" in seen["lich_shows"][0], seen
    assert not [p for p in json.loads(doctor.stdout)["problems"] if p.get("harness") == "claude"], doctor.stdout
    again = run("install", "claude", env=env)
    assert f"named for lich 0.60.0 (as the last install measured it" in again.stdout.decode()
    installed = lichreading.parse_installed_version(
        (home / ".claude" / "plugins" / "installed_plugins.json").read_bytes())
    assert installed.split("+")[0] == named


@pytest.mark.parametrize("version", ["0.60.0\u00e9", "0.\u0666\u0660.0"])
def test_a_lich_version_beyond_ascii_is_no_version(run, home, tmp_path, version):
    # It would be written into the claims file and headers, which are ASCII: install
    # refuses it by name as it refuses any other, and a lich that answers it is unknown.
    path = fake_claude(tmp_path)
    bad = run("install", "claude", "--lich-version", version, env={"PATH": path})
    assert bad.returncode == 1 and "--lich-version" in bad.stderr.decode() and b"Traceback" not in bad.stderr
    assert claim.parsed(json.dumps({"cli": version}, ensure_ascii=False)) is None
