"""One descriptor per harness (lichhook.adapters): each fact stated once, everything else
derived from it, and the installers' current entries held to it."""

from __future__ import annotations

from importlib import import_module

import pytest

from lichhook import cli, descriptor
from lichhook.adapter import provider_id_ok
from lichhook.cli import WORDS
from lichhook.adapters import BY_PROVIDER, DESCRIPTORS, load
from lichhook.contracts.session_start import PROVIDERS
from lichhook.install import harnesses

PROVIDER_IDS = [d.provider for d in DESCRIPTORS]


def test_six_harnesses_each_known_to_lich():
    assert PROVIDER_IDS == ["claude", "codex", "antigravity", "crush", "opencode", "omp"]
    for provider in PROVIDER_IDS:
        assert provider in PROVIDERS and provider_id_ok(provider) and provider not in WORDS


@pytest.mark.parametrize("d", DESCRIPTORS, ids=PROVIDER_IDS)
def test_the_descriptor_names_its_adapter_and_the_adapter_reads_it(d):
    adapter = import_module(f"lichhook.adapters.{d.module}").ADAPTER
    assert adapter.provider == d.provider
    assert adapter.descriptor is d
    assert adapter.verdict == d.verdict() == d.verdict(d.start_event)
    assert set(adapter.events) == set(d.events) and adapter.events is d
    for tool in d.writers:
        assert adapter.writes_files(tool)
    assert not adapter.writes_files("Read") and not adapter.writes_files(None)


@pytest.mark.parametrize("d", DESCRIPTORS, ids=PROVIDER_IDS)
def test_a_descriptor_says_nothing_that_cannot_be_true(d):
    assert descriptor.problems(d, sorted(WORDS)) == []
    registered = {r.event for r in descriptor.registrations(d) if r.words[0] == d.provider}
    # every event is registered; a `*suffix` one only by a module, which matches it itself
    assert registered == set(d.events) if d.provider in ("opencode", "omp") else {
        e for e in d.events if not e.startswith("*")}


def test_what_is_derived_comes_from_the_descriptors():
    assert list(BY_PROVIDER) == PROVIDER_IDS and all(load(d.provider).provider == d.provider for d in DESCRIPTORS)
    assert {d.provider: d.verdict() for d in DESCRIPTORS if d.verdict()} == {"antigravity": "{}"}
    assert harnesses.NAMES == tuple(PROVIDER_IDS)
    help_text = cli.usage("python3")
    for d in DESCRIPTORS:
        assert f"  {d.provider} " in help_text and d.usage in help_text
        for event in d.events:
            assert event in help_text


def test_the_installers_come_from_the_descriptors():
    from lichhook.install.harness import Env, Harness

    env = Env({"HOME": "/home/u"}, windows=False)
    for d in DESCRIPTORS:
        made = harnesses.make(d.provider, env)
        assert isinstance(made, Harness) and made.name == d.provider


def test_event_names_with_a_wildcard():
    d = BY_PROVIDER["opencode"]
    for asked in ("permission.asked", "question.asked", "elicitation.asked"):
        assert asked in d and d.spec(asked) == ("waiting",)
    assert ".asked" not in d and "session.asked.later" not in d
    assert d.verdict("permission.asked") == "" and d.verdict("nothing.here") == ""


def test_what_a_descriptor_must_not_say_is_found():
    from lichhook.adapters import Descriptor

    wrong = Descriptor("x", "X", "x", "x:X", "Start", {"Other": ("busy", "exploded"), "*.asked": ("waiting",)},
                       {"Gone": "{}", "*.asked": "{}"}, (), 5, "", timeouts={"Later": 3}, matchers={"Other": ""},
                       extra=(("Start", ("wait", "list")), ("Other", ("rm", "-rf"))))
    said = "\n".join(descriptor.problems(wrong, ["wait"]))
    for words in ("start event 'Start'", "unknown report kinds ['exploded']", "a verdict for 'Gone'",
                  "a verdict for '*.asked', which stands for several events",
                  "a registration detail for 'Later', an event it does not send",
                  "a registration detail for 'Start'", "'rm -rf' on Other runs no lichhook command"):
        assert words in said, words
    assert "detail for 'Other'" not in said  # a matcher of an event it sends


# --- the seam with the installers ------------------------------------------------------------
#
# The config-file installers write exactly their descriptor's registrations: the same event,
# command words, matcher and timeout, in the same order, and nothing else.


def installed(provider: str, windows: bool = False):
    """(event, words, matcher, timeout) of every hook entry ``provider``'s installer writes."""
    from lichhook.install import harnesses
    from lichhook.install.harness import Env
    from lichhook.install.copies.target import Target

    env = Env({"HOME": "/home/u", "USERPROFILE": "C:\\Users\\u", "PATH": ""}, windows=windows)
    target = (Target("C:\\Python312\\python.exe", "C:\\Users\\u\\lichhook\\hooks.pyz", windows=True,
                     short_path=lambda p: None) if windows else
              Target("/usr/bin/python3", "/home/u/.local/share/lichhook/hooks.pyz", windows=False))
    h = harnesses.make(provider, env)
    out = []
    for event, wanted in h.wanted(target).items():
        group = h.group(event) if hasattr(h, "group") else None
        for w in wanted:
            matcher = (group or {}).get("matcher", w.entry.get("matcher"))
            out.append((event, w.sub, matcher, w.entry.get("timeout")))
    return out


@pytest.mark.parametrize("windows", [False, True], ids=["posix", "windows"])
@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "crush"])
def test_the_installers_write_exactly_the_descriptor_registrations(provider, windows):
    rows = [(r.event, r.words, r.matcher, r.timeout) for r in descriptor.registrations(BY_PROVIDER[provider])]
    assert installed(provider, windows) == rows


def test_only_a_row_naming_the_start_event_has_an_earlier_bare_form():
    earlier = {(d.provider, r.event, r.words): descriptor.earlier_words(d, r)
               for d in DESCRIPTORS for r in descriptor.registrations(d) if descriptor.earlier_words(d, r)}
    assert earlier == {("antigravity", "PreInvocation", ("antigravity", "PreInvocation")): (("antigravity",),),
                       ("crush", "PreToolUse", ("crush", "PreToolUse")): (("crush",),),
                       ("opencode", "session.created", ("opencode", "session.created")): (("opencode",),),
                       ("omp", "session_start", ("omp", "session_start")): (("omp",),)}


def test_the_js_modules_forward_what_the_descriptors_name():
    from lichhook.install.harnesses.modules import MODULES, bundled

    for provider in ("opencode", "omp"):
        source = bundled(MODULES[provider], set())
        forwarded = [r.event for r in descriptor.registrations(BY_PROVIDER[provider]) if f'"{r.event}"' in source]
        assert forwarded, provider  # today: the session start; every event once the modules forward them


# Every built-in's registrations, as each descriptor listed them row by row before they were
# derived from its events: the derivation gives exactly these, in this order.
CLAUDE_START = "startup|resume|clear|compact|fork"
AGY_WRITERS = "propose_code|file_change|edit_notebook|write_blob|delete_directory|run_command"
REGISTRATIONS = {
    "claude": (
        ("SessionStart", ("claude",), CLAUDE_START, 10),
        ("SessionStart", ("claude-code", "session-start"), CLAUDE_START, 10),
        ("UserPromptSubmit", ("claude", "UserPromptSubmit"), None, 10),
        ("PreToolUse", ("claude", "PreToolUse"), None, 10),
        ("PostToolUse", ("claude", "PostToolUse"), None, 10),
        ("Notification", ("claude", "Notification"), None, 10),
        ("Stop", ("claude", "Stop"), None, 10),
        ("Stop", ("claude-code", "stop"), None, 10),
        ("StopFailure", ("claude", "StopFailure"), None, 10),
        ("PreCompact", ("claude", "PreCompact"), None, 10),
        ("PostCompact", ("claude", "PostCompact"), None, 10),
        ("SessionEnd", ("claude", "SessionEnd"), None, 10),
    ),
    "codex": (
        ("SessionStart", ("codex",), None, 5),
        ("SessionStart", ("codex-waits", "session-start"), None, 5),
        ("UserPromptSubmit", ("codex", "UserPromptSubmit"), None, 5),
        ("PreToolUse", ("codex", "PreToolUse"), None, 5),
        ("PermissionRequest", ("codex", "PermissionRequest"), None, 5),
        ("PostToolUse", ("codex", "PostToolUse"), None, 5),
        ("Stop", ("codex", "Stop"), None, 5),
        ("PreCompact", ("codex", "PreCompact"), None, 5),
        ("PostCompact", ("codex", "PostCompact"), None, 5),
        ("SessionEnd", ("codex", "SessionEnd"), None, 3),
    ),
    "antigravity": (
        ("PreInvocation", ("antigravity", "PreInvocation"), None, 5),
        ("PreToolUse", ("antigravity", "PreToolUse"), "", 5),
        ("PostToolUse", ("antigravity", "PostToolUse"), AGY_WRITERS, 5),
        ("Stop", ("antigravity", "Stop"), None, 5),
    ),
    "crush": (
        ("PreToolUse", ("crush", "PreToolUse"), None, 5),
    ),
    "opencode": (
        ("session.created", ("opencode", "session.created"), None, None),
        ("session.status", ("opencode", "session.status"), None, None),
        ("tool.execute.before", ("opencode", "tool.execute.before"), None, None),
        ("tool.execute.after", ("opencode", "tool.execute.after"), None, None),
        ("*.asked", ("opencode", "*.asked"), None, None),
        ("session.updated", ("opencode", "session.updated"), None, None),
        ("file.edited", ("opencode", "file.edited"), None, None),
    ),
    "omp": (
        ("session_start", ("omp", "session_start"), None, None),
        ("session_switch", ("omp", "session_switch"), None, None),
        ("session_branch", ("omp", "session_branch"), None, None),
        ("input", ("omp", "input"), None, None),
        ("turn_start", ("omp", "turn_start"), None, None),
        ("tool_call", ("omp", "tool_call"), None, None),
        ("tool_result", ("omp", "tool_result"), None, None),
        ("session_stop", ("omp", "session_stop"), None, None),
    ),
}


@pytest.mark.parametrize("provider", list(REGISTRATIONS))
def test_each_descriptors_registrations_are_the_rows_it_always_had(provider):
    assert BY_PROVIDER[provider].registrations == REGISTRATIONS[provider]
