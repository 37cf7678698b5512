"""Fixtures of the end-to-end tests: the pinned harness CLIs and a sandbox per test."""

from __future__ import annotations

import pytest

from testkit import harnesses
from testkit.models import FakeModel
from testkit.servers import standin


@pytest.fixture(scope="session")
def harness_cache():
    """The cache folder of the pinned CLIs, installed once (skipped only by the local switch)."""
    reason = harnesses.skip_reason()
    if reason:
        pytest.skip(reason)
    try:
        return harnesses.install()
    except harnesses.Unavailable as exc:
        pytest.fail(f"e2e: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def harness_versions(harness_cache):
    """Each harness's version line, or why it cannot run here (checked once per run)."""
    found = {}
    for name, harness in harnesses.HARNESSES.items():
        try:
            found[name] = harness.check(harness_cache)
        except harnesses.Unavailable as exc:
            found[name] = exc
    return found


@pytest.fixture
def sandbox(pyz, harness_cache, harness_versions, tmp_path):
    """``sandbox("claude")``: that harness in a throw-away home, with a fake model server
    and lich's stand-in, before anything of lichhook's is installed there; with
    ``installed=True``, after ``lichhook install <harness>`` ran there."""
    opened = []

    def make(name: str, installed: bool = False) -> harnesses.Sandbox:
        problem = harness_versions[name]
        if isinstance(problem, harnesses.Unavailable):
            pytest.fail(f"e2e: {problem}", pytrace=False)
        model = FakeModel().__enter__()
        lich = standin().__enter__()
        opened.extend([model, lich])
        box = harnesses.Sandbox(harnesses.HARNESSES[name], tmp_path / name, pyz, harness_cache, model, lich)
        if installed:
            box.install()
        return box

    yield make
    for server in reversed(opened):
        server.__exit__(None, None, None)
