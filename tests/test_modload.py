"""doctor's reading of whether Claude Code loads lichhook's mods (lichhook.install.plugin.modload)."""

from __future__ import annotations

import os

import pytest

from lichhook.install.plugin import modload


@pytest.mark.parametrize("text,expected", [("2.1.332 (Claude Code)\n", (2, 1, 332)), ("1.0.0", (1, 0, 0)),
                                           ("Claude Code", None)])
def test_version_is_read_from_what_claude_prints(text, expected):
    assert modload.version(text) == expected


@pytest.mark.parametrize("state,environ,on", [
    ({}, {}, True),  # not cached: on by default
    ({"cachedGrowthBookFeatures": {"tengu_plugin_hooks_modules": False}}, {}, False),
    ({"cachedGrowthBookFeatures": {"tengu_plugin_hooks_modules": True},
      "cachedFeatureFlags": {"tengu_plugin_hooks_modules": False}}, {}, True),  # the newer cache wins
    ({"cachedFeatureFlags": {"tengu_plugin_hooks_modules": False}}, {}, False),
    ({"cachedGrowthBookFeatures": {"tengu_plugin_hooks_modules": False}}, {"DISABLE_GROWTHBOOK": "1"}, True),
    ({"cachedGrowthBookFeatures": {"tengu_plugin_hooks_modules": False}},
     {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "0"}, False),
    ({"cachedGrowthBookFeatures": "garbage"}, {}, True),
])
def test_the_rollout_switch_is_off_only_when_cached_false_and_flags_are_read(state, environ, on):
    assert modload.switch(state, environ)[0] is on


def test_a_folder_is_trusted_through_itself_or_a_parent(tmp_path):
    project = str(tmp_path / "a" / "b")
    assert modload.trusted({}, project) is None
    assert modload.trusted({"projects": {project: {"hasTrustDialogAccepted": False}}}, project) is None
    parent = os.path.dirname(project)
    assert modload.trusted({"projects": {parent: {"hasTrustDialogAccepted": True}}}, project) == parent


def test_the_verdict_names_each_reason_and_its_fix():
    facts = {"load": False, "plugin": True, "claude_code": "2.1.200", "switch": False,
             "switch_why": "cachedGrowthBookFeatures.tengu_plugin_hooks_modules is false", "folder": "/p",
             "trusted": None}
    said = modload.verdict(facts, "/h/.claude.json")
    problems = [(problem, fix) for _, problem, fix, _ in said if problem]
    assert problems == [
        ("Claude Code 2.1.200 is older than 2.1.280, the first that loads mods",
         "update Claude Code (claude update), then start it again"),
        ("Claude Code's cached rollout switch for mods is off (cachedGrowthBookFeatures.tengu_plugin_hooks_modules "
         "is false in /h/.claude.json)", "start Claude Code with CLAUDE_CODE_DISABLE_FEATURE_FLAGS=1 (it then takes "
         "its defaults, where mods are on), or wait for Claude Code to refresh the switch")]
    assert "/p is not trusted yet" in said[-1][0]
    config = modload.verdict(dict(facts, plugin=False), "/h/.claude.json")
    assert [p for _, p, _, _ in config] == [None]  # the config route: said, not a problem


def test_doctor_reads_past_a_claude_json_nested_deeper_than_python_parses(run, home):
    run("install", "claude")
    (home / ".claude.json").write_text('{"x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    for args in (("doctor", "--no-run"), ("doctor", "--no-run", "--json")):
        done = run(*args)
        assert b"Traceback" not in done.stdout + done.stderr and done.returncode in (0, 1), args
