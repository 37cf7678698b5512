"""The harnesses lichhook registers in, by name: the built-in descriptors' order and
installers (lichhook.adapters), never a list of their own."""

from __future__ import annotations

from importlib import import_module
from typing import List

from lichhook.adapters import BY_PROVIDER, DESCRIPTORS
from lichhook.install.harness import Env, Harness

NAMES = tuple(d.provider for d in DESCRIPTORS)


def make(name: str, env: Env) -> Harness:
    module, _, cls = BY_PROVIDER[name].installer.partition(":")
    harness: Harness = getattr(import_module(f"lichhook.install.harnesses.{module}"), cls)(env)
    return harness


def make_all(env: Env) -> List[Harness]:
    return [make(name, env) for name in NAMES]
