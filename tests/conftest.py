"""Fixtures over the shared test helpers in testkit/: the built archive, a clean hook
environment, lich's stand-in, misbehaving loopback servers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit import archive, environment, matrix, servers


def pytest_collection_modifyitems(config, items):
    """With LICHHOOK_SHARE=k/n only the k-th of n shares of the tests runs: how the Pythons
    between the oldest and the newest share the suite (testkit/matrix.py)."""
    share = os.environ.get(matrix.SHARE_VARIABLE)
    if not share:
        return
    kept, left = [], []
    for item in items:
        (kept if matrix.in_share(item.nodeid, share) else left).append(item)
    config.hook.pytest_deselected(items=left)
    items[:] = kept


@pytest.fixture(scope="session")
def pyz(tmp_path_factory) -> Path:
    """dist/lichhook.pyz built from this tree by the real build script, once per run."""
    return archive.build(tmp_path_factory.mktemp("dist") / "lichhook.pyz")


@pytest.fixture
def home(tmp_path) -> Path:
    """A fresh home folder for one test."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def base_env(home) -> dict:
    """An environment outside lich, with every per-user folder inside ``home``; the
    checkout gets no bytecode written by the interpreters the tests start."""
    return dict(environment.clean_env(home), PYTHONDONTWRITEBYTECODE="1")


@pytest.fixture
def run(pyz, base_env) -> archive.Run:
    return archive.Run(pyz, base_env)


@pytest.fixture
def standin():
    """lichhook's own lich stand-in on a free loopback port (judges reports as lich does)."""
    with servers.standin() as server:
        yield server


@pytest.fixture
def fault_server():
    """``fault_server(mode, status, delay)``: a loopback server that misbehaves on purpose."""
    made = []

    def make(mode: str = "status", status: int = 204, delay: float = 0.0) -> servers.FaultServer:
        server = servers.FaultServer(mode, status, delay)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()
