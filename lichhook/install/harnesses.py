"""The harnesses lichhook registers in, by name."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List

    from lichhook.install.harness import Env, Harness

NAMES = ("claude", "codex", "antigravity", "crush", "opencode", "omp")


def make(name: str, env: Env) -> Harness:
    cls: type[Harness]
    if name == "claude":
        from lichhook.install.claude import Claude as cls
    elif name == "codex":
        from lichhook.install.codex import Codex as cls
    elif name == "antigravity":
        from lichhook.install.antigravity import Antigravity as cls
    elif name == "crush":
        from lichhook.install.crush import Crush as cls
    elif name == "opencode":
        from lichhook.install.jsmodules import Opencode as cls
    elif name == "omp":
        from lichhook.install.jsmodules import Omp as cls
    else:
        raise KeyError(name)
    return cls(env)


def make_all(env: Env) -> List[Harness]:
    return [make(name, env) for name in NAMES]
