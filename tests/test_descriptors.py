"""One descriptor per harness (lichhook.adapters): each fact stated once, everything else
derived from it, and the installers' current entries held to it."""

from __future__ import annotations

from importlib import import_module

import pytest

from lichhook import cli, descriptor
from lichhook.adapter import SUBCOMMANDS, provider_id_ok
from lichhook.adapters import BUILTIN, BY_PROVIDER, DESCRIPTORS, VERDICTS
from lichhook.contracts.session_start import PROVIDERS
from lichhook.install import harnesses

PROVIDER_IDS = [d.provider for d in DESCRIPTORS]


def test_six_harnesses_each_known_to_lich():
    assert PROVIDER_IDS == ["claude", "codex", "antigravity", "crush", "opencode", "omp"]
    for provider in PROVIDER_IDS:
        assert provider in PROVIDERS and provider_id_ok(provider) and provider not in SUBCOMMANDS


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
    assert descriptor.problems(d, sorted(SUBCOMMANDS)) == []
    registered = {r.event for r in descriptor.registrations(d) if r.words[0] == d.provider}
    assert registered == {e for e in d.events if not e.startswith("*")} | (
        {"permission.asked", "question.asked"} if d.provider == "opencode" else set())


def test_no_provider_can_take_a_command_word():
    assert set(cli.COMMANDS) <= SUBCOMMANDS


def test_what_is_derived_comes_from_the_descriptors():
    assert list(BUILTIN) == PROVIDER_IDS and all(BUILTIN[d.provider] == d.module for d in DESCRIPTORS)
    assert VERDICTS == {"antigravity": "{}"}
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

    wrong = Descriptor("x", "X", "x", "x:X", "Start", {"Other": ("busy", "exploded")}, {"Gone": "{}"}, (),
                       (("Start", ("x", "Stop"), None, 5), ("Other", ("x",), None, 5), ("Other", ("rm",), None, 5)),
                       "")
    said = "\n".join(descriptor.problems(wrong, ["wait"]))
    for words in ("start event 'Start'", "unknown report kinds ['exploded']", "a verdict for 'Gone'",
                  "on an event it does not send", "names another event", "is bare, but Other reports more",
                  "neither its provider nor a lichhook command"):
        assert words in said, words


# --- the seam with the installers ------------------------------------------------------------
#
# The installers register the session-start events today, and the next step has them
# register every descriptor registration. Until then this holds what they write to the
# descriptors: the same event, matcher, timeout and words, where the descriptor keeps the
# bare command. Where the descriptor names the event (Antigravity's PreInvocation,
# Crush's PreToolUse report more than the session start now), the installer's bare entry
# is the legacy form of the same registration.

LEGACY_BARE = {("antigravity", "PreInvocation"), ("crush", "PreToolUse")}


def installed_today():
    """(provider, event, words, matcher, timeout) of every entry the installers write."""
    from lichhook.install import antigravity, claude, codex, crush
    from lichhook.install.harness import Env
    from lichhook.install.target import Target

    env = Env({"HOME": "/home/u"}, windows=False)
    target = Target("/usr/bin/python3", "/home/u/.local/share/lichhook/lichhook.pyz", windows=False)
    out = []
    c = claude.Claude(env)
    for event, wanted in c.wanted(target).items():
        for w in wanted:
            out.append(("claude", event, w.sub, c.group(event).get("matcher"), w.entry["timeout"]))
    for w in codex.Codex(env).handlers(target):
        out.append(("codex", "SessionStart", w.sub, None, w.entry["timeout"]))
    w = antigravity.Antigravity(env).handler(target)
    out.append(("antigravity", antigravity.EVENT, w.sub, None, w.entry["timeout"]))
    w = crush.Crush(env).handler(target)
    out.append(("crush", "PreToolUse", w.sub, None, w.entry["timeout"]))
    return out


@pytest.mark.parametrize("entry", installed_today(), ids=lambda e: f"{e[0]}-{e[1]}-{'-'.join(e[2])}")
def test_what_the_installers_write_today_is_a_descriptor_registration(entry):
    provider, event, words, matcher, timeout = entry
    registrations = [r for r in descriptor.registrations(BY_PROVIDER[provider]) if r.event == event]
    if (provider, event) in LEGACY_BARE:
        assert words == (provider,)
        words = (provider, event)
    (found,) = [r for r in registrations if r.words == words]
    assert (found.matcher, found.timeout) == (matcher, timeout)


def test_the_js_modules_forward_what_the_descriptors_name():
    import pkgutil

    for provider in ("opencode", "omp"):
        source = pkgutil.get_data("lichhook.install", f"js/{provider}.js").decode()
        forwarded = [r.event for r in descriptor.registrations(BY_PROVIDER[provider]) if f'"{r.event}"' in source]
        assert forwarded, provider  # today: the session start; every event once the modules forward them
