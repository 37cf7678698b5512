"""Third-party adapters: an installed distribution, plugin-folder files, broken plugins,
and the pluggy-free fast path giving the same adapter as the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from testkit.constants import ROOT
from testkit.environment import lich_env


@pytest.fixture(scope="session")
def aider_site(tmp_path_factory):
    """The example plugin, pip-installed as a real distribution into its own folder."""
    import shutil

    target = tmp_path_factory.mktemp("site")
    # A copy, so the build leaves nothing behind in the checkout.
    source = shutil.copytree(ROOT / "examples" / "lichhook-aider", tmp_path_factory.mktemp("src") / "aider")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--target", str(target), str(source)],
                   check=True, capture_output=True)
    return target


@pytest.fixture
def plugin_dir(tmp_path):
    d = tmp_path / "plugins"
    d.mkdir()
    return d


def write_plugin(folder, name, body):
    (folder / name).write_text(textwrap.dedent(body), encoding="utf-8")


OVERRIDE_CLAUDE = """
    from lichhook import Adapter, hookimpl

    class PatchedClaude(Adapter):
        provider = "claude"
        verdict = "patched"
        sample = {"sid": "patched-1"}

        def session_id(self, payload, environ):
            return payload.get("sid")

    @hookimpl
    def lichhook_adapters():
        return [PatchedClaude()]
"""

NEW_PROVIDER = """
    from lichhook import hookimpl

    class Kiro:  # duck-typed: no base class needed
        provider = "kiro"
        verdict = ""
        sample = {"kiro_session": "f5d98acc-da1a-4029-a2eb-ecc1f666af06"}

        def session_id(self, payload, environ):
            return payload.get("kiro_session")

    @hookimpl
    def lichhook_adapters():
        return [Kiro()]
"""


def test_installed_distribution_adds_a_provider(run, fault_server, aider_site):
    env = {"PYTHONPATH": str(aider_site)}
    listing = run("adapters", env=env)
    assert listing.returncode == 0
    assert "aider" in listing.stdout.decode() and "entry point" in listing.stdout.decode()
    server = fault_server("status", 400)  # lich does not know "aider" yet: sent anyway
    done = run("aider", stdin=json.dumps({"chat": {"id": "chat-42"}}), env=dict(env, **lich_env(server)))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (raw,) = server.requests
    assert json.loads(raw.partition(b"\r\n\r\n")[2]) == {
        "session_id": "lich-s1", "provider_session_id": "chat-42", "provider": "aider"}


def test_entry_point_cannot_replace_a_built_in(run, standin, tmp_path):
    site = tmp_path / "site"
    (site / "evil_claude-1.0.dist-info").mkdir(parents=True)
    (site / "evil_claude-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: evil-claude\nVersion: 1.0\n")
    (site / "evil_claude-1.0.dist-info" / "entry_points.txt").write_text("[lichhook]\nevil = evil_claude\n")
    (site / "evil_claude.py").write_text(textwrap.dedent(OVERRIDE_CLAUDE))
    env = dict(lich_env(standin), PYTHONPATH=str(site))
    done = run("claude", stdin=json.dumps({"session_id": "real-1", "sid": "evil-1"}), env=env)
    assert done.stdout == b""
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "real-1"


def test_plugin_folder_adds_and_replaces(run, standin, plugin_dir):
    write_plugin(plugin_dir, "patch_claude.py", OVERRIDE_CLAUDE)
    write_plugin(plugin_dir, "kiro.py", NEW_PROVIDER)
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir))
    listing = run("adapters", env=env).stdout.decode()
    assert "replaces the built-in" in listing and "kiro" in listing
    done = run("claude", stdin=json.dumps({"session_id": "ignored", "sid": "patched-1"}), env=env)
    assert done.stdout == b"patched"
    done = run("kiro", stdin=json.dumps({"kiro_session": "f5d98acc-da1a-4029-a2eb-ecc1f666af06"}), env=env)
    assert done.returncode == 0
    reports = standin.wait_for(2, timeout=5)
    assert [r.accepted["provider"] for r in reports] == ["claude", "kiro"]
    assert reports[0].accepted["provider_session_id"] == "patched-1"


def test_default_plugin_folder_is_under_the_user_config_dir(run, standin, base_env):
    folder = os.path.join(base_env["XDG_CONFIG_HOME"], "lichhook", "plugins")
    os.makedirs(folder)
    write_plugin(__import__("pathlib").Path(folder), "kiro.py", NEW_PROVIDER)
    done = run("kiro", stdin=json.dumps({"kiro_session": "k-1"}), env=lich_env(standin))
    assert done.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider"] == "kiro"


BROKEN = {
    "a_import_error.py": "import no_such_module_anywhere\n",
    "b_syntax.py": "def (:\n",
    "c_raises.py": """
        from lichhook import hookimpl
        @hookimpl
        def lichhook_adapters():
            raise RuntimeError("plugin bug")
    """,
    "d_bad_adapters.py": """
        from lichhook import hookimpl
        class Wait:
            provider = "wait"  # a subcommand: refused
            def session_id(self, payload, environ): return "x"
        class NoId:
            provider = "noid"
        @hookimpl
        def lichhook_adapters():
            return [Wait(), NoId(), "not an adapter"]
    """,
    "e_exits.py": "import sys\nsys.exit(3)\n",
}


@pytest.mark.parametrize("provider", ["claude", "antigravity", "kiro"])
def test_broken_plugins_never_stop_another_provider(run, standin, plugin_dir, tmp_path, provider):
    for name, body in BROKEN.items():
        write_plugin(plugin_dir, name, body)
    write_plugin(plugin_dir, "z_kiro.py", NEW_PROVIDER)
    site = tmp_path / "site"
    (site / "broken_ep-1.0.dist-info").mkdir(parents=True)
    (site / "broken_ep-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-ep\nVersion: 1.0\n")
    (site / "broken_ep-1.0.dist-info" / "entry_points.txt").write_text("[lichhook]\nbroken = no_such_module_ep\n")
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir), PYTHONPATH=str(site))
    payload = {"session_id": "s-ok", "conversationId": "c-ok", "kiro_session": "k-ok"}
    done = run(provider, stdin=json.dumps(payload), env=env)
    assert done.returncode == 0
    assert done.stderr == b""  # named only with debugging on
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider"] == provider

    loud = run(provider, stdin=json.dumps(payload), env=dict(env, LICHHOOK_DEBUG="1"))
    err = loud.stderr.decode()
    for name in ("a_import_error.py", "b_syntax.py", "c_raises.py", "e_exits.py"):
        assert name in err, err
    assert "'wait'" in err and "subcommand" in err


def test_relative_plugin_dir_is_ignored(run, standin, plugin_dir):
    write_plugin(plugin_dir, "patch_claude.py", OVERRIDE_CLAUDE)
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR="plugins")
    done = subprocess.run([sys.executable, str(run.pyz), "claude"], input=json.dumps({"session_id": "s-rel", "sid": "p"}).encode(),
                          env=dict(run.env, **env), cwd=plugin_dir.parent, capture_output=True)
    assert done.stdout == b""  # not the patched verdict
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "s-rel"


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "crush", "opencode", "omp"])
def test_fast_path_gives_the_hosts_adapter(provider, tmp_path):
    from lichhook.debug import Debug
    from lichhook.host import find_adapter
    from lichhook.report import resolve_adapter

    environ = {"LICHHOOK_PLUGIN_DIR": str(tmp_path)}
    fast = resolve_adapter(provider, environ, Debug({}))
    hosted = find_adapter(provider, environ, Debug({}))
    assert fast is hosted
    assert fast.provider == provider
    sample = fast.sample
    assert fast.session_id(sample, {}) == hosted.session_id(sample, {})


def test_fast_path_skips_pluggy(pyz, base_env, tmp_path):
    probe = textwrap.dedent("""
        import sys, os
        sys.path.insert(0, sys.argv[1])
        from lichhook.report import resolve_adapter
        from lichhook.debug import Debug
        a = resolve_adapter("claude", {"LICHHOOK_PLUGIN_DIR": sys.argv[2]}, Debug({}))
        print(a.provider, "pluggy" in sys.modules, "json" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", probe, str(pyz), str(tmp_path)], capture_output=True, env=base_env)
    assert done.stdout.decode().split() == ["claude", "False", "False"]
