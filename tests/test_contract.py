"""lich's session-start contract: our own cases, lich's fixture when present, and the
shape of what the archive really sends."""

from __future__ import annotations

import json

import pytest

from testkit.constants import SHARED_CONTRACT
from testkit.environment import lich_env
from lichhook import contract

UUID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"

# Written from lich's transport rules (docs/session-start.md); same format as lich's fixture.
OWN_CASES = [
    {"name": "codex", "body": {"session_id": "s1", "provider_session_id": UUID, "provider": "codex"},
     "accept": {"session_id": "s1", "provider_session_id": UUID, "provider": "codex"}},
    {"name": "antigravity", "body": {"session_id": "s1", "provider_session_id": UUID, "provider": "antigravity"},
     "accept": {"session_id": "s1", "provider_session_id": UUID, "provider": "antigravity"}},
    {"name": "omp", "body": {"session_id": "s1", "provider_session_id": "019ffb38-ceab-7000-afae-20b8eae145d8", "provider": "omp"},
     "accept": {"session_id": "s1", "provider_session_id": "019ffb38-ceab-7000-afae-20b8eae145d8", "provider": "omp"}},
    {"name": "absent provider", "body": {"session_id": "s1", "provider_session_id": UUID},
     "accept": {"session_id": "s1", "provider_session_id": UUID, "provider": "claude"}},
    {"name": "empty provider", "body": {"session_id": "s1", "provider_session_id": UUID, "provider": ""},
     "accept": {"session_id": "s1", "provider_session_id": UUID, "provider": "claude"}},
    {"name": "no session", "body": {"provider_session_id": UUID}, "reject": "session_id is required"},
    {"name": "no id", "body": {"session_id": "s1"}, "reject": "provider_session_id is required"},
    {"name": "empty id", "body": {"session_id": "s1", "provider_session_id": ""}, "reject": "provider_session_id is required"},
    {"name": "slash", "body": {"session_id": "s1", "provider_session_id": "a/b"}, "reject": "opaque"},
    {"name": "backslash", "body": {"session_id": "s1", "provider_session_id": "a\\b"}, "reject": "opaque"},
    {"name": "glob", "body": {"session_id": "s1", "provider_session_id": "a*[b]?"}, "reject": "opaque"},
    {"name": "dotdot", "body": {"session_id": "s1", "provider_session_id": "..x"}, "reject": "opaque"},
    {"name": "unknown provider", "body": {"session_id": "s1", "provider_session_id": UUID, "provider": "aider"},
     "reject": "provider must be a registered provider id"},
    {"name": "malformed", "raw": "{", "reject": "body must be a JSON object"},
    {"name": "array", "raw": "[]", "reject": "body must be a JSON object"},
    {"name": "number id", "body": {"session_id": "s1", "provider_session_id": 5}, "reject": "body must be a JSON object"},
    {"name": "too large", "body": {"session_id": "s1", "provider_session_id": "x" * 5000}, "reject": "at most 4096"},
    # Go's decoder turns a lone surrogate escape into U+FFFD, and invalid UTF-8 in a string too.
    {"name": "lone surrogate", "raw": '{"session_id": "s1", "provider_session_id": "a\\ud800b"}',
     "accept": {"session_id": "s1", "provider_session_id": "a\ufffdb", "provider": "claude"}},
    {"name": "surrogate pair", "raw": '{"session_id": "s1", "provider_session_id": "a\\ud83d\\ude00"}',
     "accept": {"session_id": "s1", "provider_session_id": "a\U0001f600", "provider": "claude"}},
]


def shared_cases() -> list:
    if not SHARED_CONTRACT.exists():
        return []
    return [json.loads(line) for line in SHARED_CONTRACT.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_lichhook_sends_only_what_lich_keeps_as_sent():
    from lichhook.ids import lich_id_problem, provider_session_id_problem

    assert lich_id_problem("a\ud800b") is None  # lich takes it, and keeps U+FFFD instead
    assert provider_session_id_problem("a\ud800b") == "id is not valid Unicode (lone surrogate U+D800)"
    assert provider_session_id_problem("a\U0001f600") is None
    assert provider_session_id_problem("a/b") == lich_id_problem("a/b") == "id contains '/'"


def raw_of(case: dict) -> bytes:
    return case["raw"].encode() if "raw" in case else json.dumps(case["body"]).encode()


def judge(case: dict, exact_reason: bool) -> None:
    if "accept" in case:
        assert contract.parse_session_start(raw_of(case)) == case["accept"], case["name"]
    else:
        with pytest.raises(contract.Rejected) as refused:
            contract.parse_session_start(raw_of(case))
        if exact_reason:
            assert str(refused.value) == case["reject"], case["name"]
        else:
            assert case["reject"] in str(refused.value), case["name"]


@pytest.mark.parametrize("case", OWN_CASES, ids=[c["name"] for c in OWN_CASES])
def test_own_cases(case):
    judge(case, exact_reason=False)


@pytest.mark.skipif(not SHARED_CONTRACT.exists(), reason="lich's fixture (../shared/lich-contract) is not beside this checkout")
@pytest.mark.parametrize("case", shared_cases() or [None], ids=lambda c: c["name"] if c else "absent")
def test_lich_fixture(case):
    judge(case, exact_reason=True)


def shape(body: dict) -> tuple:
    return tuple(sorted((k, type(v).__name__) for k, v in body.items()))


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "crush", "opencode", "omp"])
def test_what_the_archive_sends_matches_an_accept_case_and_breaks_no_reject_rule(run, standin, provider):
    from importlib import import_module

    adapter = import_module(f"lichhook.adapters.{provider}").ADAPTER
    run(provider, stdin=json.dumps(adapter.sample), env=lich_env(standin))
    (report,) = standin.wait_for(1, timeout=5)
    body = json.loads(report.body)
    accept_shapes = {shape(c["accept"]) for c in OWN_CASES + shared_cases() if "accept" in c}
    assert shape(body) in accept_shapes
    assert "claude_session_id" not in body
    assert report.status == 204 and report.accepted["provider"] == provider
    assert contract.release_supported(report.release)


def test_registry_is_lichs_current_one():
    assert sorted(contract.PROVIDERS) == ["antigravity", "claude", "codex", "crush", "cursor", "kiro", "omp", "opencode"]
    if SHARED_CONTRACT.exists():
        from_fixture = {c["accept"]["provider"] for c in shared_cases() if "accept" in c}
        assert from_fixture == set(contract.PROVIDERS)
