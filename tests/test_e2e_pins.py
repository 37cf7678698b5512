"""The end-to-end suite's own set-up, checked in the default run: the locks pin what
package.json says, opencode's plugin package matches opencode, and the skip switch works
only outside CI."""

from __future__ import annotations

import json

import pytest

from testkit import harnesses, relock


def lock_of(folder) -> dict:
    return json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(harnesses.LOCKED))
def test_each_lock_installs_exactly_the_pinned_versions(name):
    folder = harnesses.LOCKED[name]
    pins = harnesses.pinned(folder)
    packages = lock_of(folder)["packages"]
    assert packages[""]["dependencies"] == pins, "package.json changed without `python -m testkit.relock`"
    for package, version in pins.items():
        assert packages[f"node_modules/{package}"]["version"] == version, package


def test_every_harness_is_pinned_and_opencode_gets_its_own_plugin_version():
    pins = harnesses.pinned()
    for harness in harnesses.HARNESSES.values():
        assert harness.package in pins, harness.name
    assert "bun" in pins  # omp runs on it
    plugin = harnesses.pinned(harnesses.LOCKED["opencode-config"])
    assert plugin == {"@opencode-ai/plugin": pins["opencode-ai"]}


def test_the_skip_switch_works_only_outside_ci():
    assert harnesses.skip_reason({}) is None
    assert harnesses.skip_reason({harnesses.SKIP_SWITCH: "0"}) is None
    assert "LICHHOOK_SKIP_E2E" in harnesses.skip_reason({harnesses.SKIP_SWITCH: "1"})
    assert harnesses.skip_reason({harnesses.SKIP_SWITCH: "1", "CI": "true"}) is None


@pytest.mark.parametrize("name,fields", [
    ("opencode-darwin-arm64", {"os": ["darwin"], "cpu": ["arm64"]}),
    ("opencode-linux-x64-baseline-musl", {"os": ["linux"], "cpu": ["x64"], "libc": ["musl"]}),
    ("opencode-windows-x64", {"os": ["win32"], "cpu": ["x64"]}),
    ("@oh-my-pi/pi-natives-win32-arm64", {"os": ["win32"], "cpu": ["arm64"]}),
    ("@oven/bun-linux-aarch64", {"os": ["linux"], "cpu": ["arm64"]}),
])
def test_relock_reads_the_platform_from_a_package_name(name, fields):
    assert relock.platform_of(name) == fields


def test_relock_enters_only_the_optional_packages_the_registry_left_out():
    lock = {"packages": {
        "": {"dependencies": {"tool": "1.0.0"}},
        "node_modules/tool": {"version": "1.0.0", "optionalDependencies": {"tool-linux-x64": "1.0.0",
                                                                           "tool-darwin-arm64": "1.0.0"}},
        "node_modules/tool-linux-x64": {"version": "1.0.0", "integrity": "sha512-x", "os": ["linux"], "cpu": ["x64"]},
    }}
    assert relock.fill_missing_optionals(lock) == ["tool-darwin-arm64@1.0.0"]
    assert lock["packages"]["node_modules/tool-darwin-arm64"] == {
        "version": "1.0.0", "os": ["darwin"], "cpu": ["arm64"], "optional": True}
    assert lock["packages"]["node_modules/tool-linux-x64"]["integrity"] == "sha512-x"
    assert relock.fill_missing_optionals(lock) == []
