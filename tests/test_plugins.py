"""Third-party adapters: an installed distribution, plugin-folder files, broken plugins,
and the pluggy-free fast path giving the same adapter as the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

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


# ---- plugin code and the hook's stdout ------------------------------------------------------

NOISY = """
    import os, subprocess, sys
    from lichhook import Adapter, hookimpl

    print("loaded")
    sys.stdout.flush()
    os.write(1, b"raw write\\n")
    if os.path.exists("/bin/echo"):
        subprocess.run(["/bin/echo", "child process"])

    class NoisyAntigravity(Adapter):
        provider = "antigravity"
        verdict = "{}"

        def session_id(self, payload, environ):
            print("reading", payload)
            return payload.get("conversationId")

    @hookimpl
    def lichhook_adapters():
        print("asked for adapters")
        return [NoisyAntigravity()]
"""


@pytest.mark.parametrize("debug", [False, True])
def test_plugin_code_never_reaches_the_hooks_stdout(run, standin, plugin_dir, debug):
    write_plugin(plugin_dir, "noisy.py", NOISY)
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir))
    if debug:
        env["LICHHOOK_DEBUG"] = "1"
    done = run("antigravity", stdin=json.dumps({"conversationId": "conv-9"}), env=env)
    assert (done.returncode, done.stdout) == (0, b"{}")  # the verdict, exactly
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "conv-9"
    said = done.stderr.decode()
    if debug:  # what plugins print goes to stderr, where LICHHOOK_DEBUG=1 shows it
        assert "loaded" in said and "raw write" in said and "asked for adapters" in said and "reading" in said
    else:
        assert said == ""


# ---- plugin files others control ----------------------------------------------------------

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes; Windows ACLs are not checked")
ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
OTHER_UID = 65534  # "nobody" on most systems

MARKING = """
    from lichhook import Adapter, hookimpl

    open({marker!r}, "w").close()

    class Kiro(Adapter):
        provider = "kiro"

        def session_id(self, payload, environ):
            return payload.get("kiro_session")

    @hookimpl
    def lichhook_adapters():
        return [Kiro()]
"""


def try_plugin(run, standin, folder, name="kiro_adapter.py", path=None):
    """Write the marking plugin (unless ``path`` exists), run the hook; (ran, reported, stderr)."""
    marker = folder.parent / "plugin-ran"
    if marker.exists():
        marker.unlink()
    if path is None:
        path = folder / name
        path.write_text(textwrap.dedent(MARKING.format(marker=str(marker))), encoding="utf-8")
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(folder), LICHHOOK_DEBUG="1")
    before = len(standin.reports)
    done = run("kiro", stdin=json.dumps({"kiro_session": "k-1"}), env=env)
    assert (done.returncode, done.stdout) == (0, b"")
    reported = len(standin.wait_for(before + 1, timeout=1)) > before
    return marker.exists(), reported, done.stderr.decode()


@POSIX_ONLY
def test_a_plugin_folder_of_ones_own_is_loaded(run, standin, plugin_dir):
    plugin_dir.chmod(0o755)
    assert try_plugin(run, standin, plugin_dir)[:2] == (True, True)


@POSIX_ONLY
@pytest.mark.parametrize("mode, who", [(0o777, "anyone"), (0o1777, "anyone")])
def test_a_plugin_folder_anyone_can_write_is_not_loaded(run, standin, plugin_dir, mode, who):
    plugin_dir.chmod(mode)
    ran, reported, said = try_plugin(run, standin, plugin_dir)
    assert (ran, reported) == (False, False)
    assert f"plugin folder {plugin_dir} skipped: {plugin_dir} can be written by {who}" in said
    assert "chmod go-w" in said


@POSIX_ONLY
def test_a_plugin_file_anyone_can_write_is_not_loaded(run, standin, plugin_dir):
    path = plugin_dir / "kiro_adapter.py"
    marker = plugin_dir.parent / "plugin-ran"
    path.write_text(textwrap.dedent(MARKING.format(marker=str(marker))), encoding="utf-8")
    path.chmod(0o666)
    ran, reported, said = try_plugin(run, standin, plugin_dir, path=path)
    assert (ran, reported) == (False, False)
    assert f"plugin {path} skipped: {path} can be written by anyone" in said


@POSIX_ONLY
def test_a_folder_above_that_anyone_can_write_is_refused_unless_sticky(run, standin, tmp_path):
    shared = tmp_path / "shared"
    folder = shared / "plugins"
    folder.mkdir(parents=True)
    shared.chmod(0o777)  # anyone could swap the plugins folder for their own
    ran, _, said = try_plugin(run, standin, folder)
    assert not ran and f"{shared} can be written by anyone" in said
    shared.chmod(0o1777)  # like /tmp: others cannot rename or remove what is yours
    assert try_plugin(run, standin, folder)[:2] == (True, True)


@POSIX_ONLY
@ROOT_ONLY
def test_plugins_another_user_owns_are_not_loaded(run, standin, plugin_dir, tmp_path):
    import pwd

    known = OTHER_UID in {p.pw_uid for p in pwd.getpwall()}
    owner = f"{pwd.getpwuid(OTHER_UID).pw_name} (uid {OTHER_UID})" if known else f"uid {OTHER_UID}"
    path = plugin_dir / "kiro_adapter.py"
    marker = plugin_dir.parent / "plugin-ran"
    path.write_text(textwrap.dedent(MARKING.format(marker=str(marker))), encoding="utf-8")
    os.chown(path, OTHER_UID, -1)
    ran, reported, said = try_plugin(run, standin, plugin_dir, path=path)
    assert (ran, reported) == (False, False)
    assert f"{path} belongs to {owner}, not to you or root" in said

    # A link in one's own folder to someone else's file is theirs too.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.replace(path, elsewhere / "kiro_adapter.py")
    os.symlink(elsewhere / "kiro_adapter.py", path)
    ran, _, said = try_plugin(run, standin, plugin_dir, path=path)
    assert not ran and f"belongs to {owner}" in said

    os.unlink(path)
    os.chown(plugin_dir, OTHER_UID, -1)
    ran, _, said = try_plugin(run, standin, plugin_dir)
    assert not ran and f"plugin folder {plugin_dir} skipped: {plugin_dir} belongs to {owner}" in said


@POSIX_ONLY
@ROOT_ONLY
def test_group_write_counts_unless_the_group_is_ones_own(run, standin, plugin_dir):
    import grp
    import pwd

    me = pwd.getpwuid(os.geteuid())
    try:
        other = grp.getgrgid(OTHER_UID)
    except KeyError:
        pytest.skip(f"no group {OTHER_UID} here")
    plugin_dir.chmod(0o775)
    os.chown(plugin_dir, -1, other.gr_gid)
    ran, _, said = try_plugin(run, standin, plugin_dir)
    assert not ran and f"can be written by group {other.gr_name}" in said
    own = grp.getgrgid(me.pw_gid)
    if own.gr_name != me.pw_name or set(own.gr_mem) - {me.pw_name}:
        pytest.skip("this user has no private group")
    os.chown(plugin_dir, -1, me.pw_gid)  # a group of one: the usual umask 002 set-up
    assert try_plugin(run, standin, plugin_dir)[:2] == (True, True)


# ---- adapters installed as packages, with the interpreter's site skipped (-S) -----------------


@pytest.fixture(scope="session")
def venv_python(tmp_path_factory):
    """A bare virtual environment's interpreter and its site-packages folder."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    python = root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site_dir = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, check=True, text=True).stdout.strip()
    return str(python), site_dir


@pytest.mark.parametrize("how", ["site-packages", "pth"])
def test_entry_point_adapters_are_found_when_site_was_skipped(pyz, base_env, fault_server, aider_site,
                                                              venv_python, tmp_path, how):
    import shutil

    python, site_dir = venv_python
    placed = []
    if how == "site-packages":
        for item in aider_site.iterdir():
            target = os.path.join(site_dir, item.name)
            (shutil.copytree if item.is_dir() else shutil.copy)(item, target)
            placed.append(target)
    else:  # as an editable install does: a .pth line naming the folder that holds it
        pth = os.path.join(site_dir, "aider-elsewhere.pth")
        with open(pth, "w", encoding="utf-8") as f:
            f.write(str(aider_site) + "\n")
        placed.append(pth)
    try:
        server = fault_server("status", 400)
        env = dict(base_env, **lich_env(server))
        for flags in (["-I", "-S"], ["-I"]):
            done = subprocess.run([python, *flags, str(pyz), "aider"], input=b'{"chat": {"id": "chat-S"}}',
                                  env=env, capture_output=True, timeout=60)
            assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), flags
            listing = subprocess.run([python, *flags, str(pyz), "adapters"], env=base_env, capture_output=True)
            assert b"aider" in listing.stdout and b"entry point" in listing.stdout, flags
        assert [json.loads(r.partition(b"\r\n\r\n")[2])["provider_session_id"] for r in server.requests] == ["chat-S"] * 2
    finally:
        for target in placed:
            shutil.rmtree(target) if os.path.isdir(target) else os.unlink(target)


def test_built_in_providers_never_load_site_when_it_was_skipped(pyz, base_env, fault_server, venv_python):
    python, _ = venv_python
    probe = textwrap.dedent("""
        import atexit, runpy, sys
        atexit.register(lambda: sys.stderr.write("SITE %s\\n" % ("site" in sys.modules)))
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    """)
    env = dict(base_env, **lich_env(fault_server()))
    done = subprocess.run([python, "-I", "-S", "-c", probe, str(pyz), "claude"], input=b'{"session_id": "s"}',
                          env=env, capture_output=True, timeout=60)
    assert done.returncode == 0 and b"SITE False" in done.stderr, done.stderr


# ---- the adapter surface: today's one-method adapters, and adapters of events ----------------

def test_the_example_plugin_keeps_working_when_a_harness_names_an_event(run, standin, aider_site):
    # Written for the one-method surface: with an event word it reports what the bare
    # command reports, and prints its one verdict.
    env = dict(lich_env(standin), PYTHONPATH=str(aider_site))
    for args in (["aider"], ["aider", "chat_started"], ["aider", "anything.else"]):
        done = run(*args, stdin=json.dumps({"event": "chat_started", "chat": {"id": "chat-42"}}), env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    reports = standin.wait_for(3, timeout=5)
    assert [(r.contract, r.status, r.verdict) for r in reports] == [
        ("session-start", 400, "provider must be a registered provider id")] * 3  # lich does not know aider yet
    assert [json.loads(r.body)["provider_session_id"] for r in reports] == ["chat-42"] * 3


@pytest.mark.parametrize("plugin,provider,verdict", [(NEW_PROVIDER, "kiro", b""), (OVERRIDE_CLAUDE, "claude", b"patched")])
def test_a_one_method_plugin_file_reports_its_session_for_any_event(run, standin, plugin_dir, plugin, provider, verdict):
    write_plugin(plugin_dir, "old_style.py", plugin)
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir))
    payload = {"kiro_session": "k-7", "sid": "k-7", "session_id": "ignored"}
    for args in ([provider], [provider, "PreToolUse"], [provider, "Stop"]):
        done = run(*args, stdin=json.dumps(payload), env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, verdict, b"")
    reports = standin.wait_for(3, timeout=5)
    assert [(r.contract, r.status, r.accepted["provider"], r.accepted["provider_session_id"]) for r in reports] == [
        ("session-start", 204, provider, "k-7")] * 3


EVENT_ADAPTER = """
    from lichhook import Adapter, Report, hookimpl

    class Kiro(Adapter):
        # A harness with events of its own, named in its payload's "hook" field by the
        # registration: one adapter serving every contract.
        provider = "kiro"
        events = ("start", "prompt", "tool", "ask", "end", "quit", "named", "wrote")
        verdicts = {"tool": '{"continue":true}'}
        sample = {"chat": "k-1"}

        def session_id(self, payload, environ):
            return payload.get("chat")

        def reports(self, event):
            chat = self.session_id(event.payload, event.environ)
            p, name = event.payload, event.name
            if name == "start":
                return [Report.start(chat)]
            if name == "prompt":
                return [Report.state("busy", provider_session_id=chat)]
            if name == "tool":
                return [Report.state("busy", tool=p.get("tool"), detail=p.get("args"), provider_session_id=chat)]
            if name == "ask":
                return [Report.state("waiting", reason=p.get("question"), provider_session_id=chat)]
            if name == "end":
                return [Report.state("done", provider_session_id=chat)]
            if name == "quit":
                return [Report.state("idle", provider_session_id=chat)]
            if name == "named":
                return [Report.title(p.get("name"), provider_session_id=chat)]
            if name == "wrote":
                return [Report.touched(chat), Report.title(p.get("name"), provider_session_id=chat)]
            raise AssertionError("not an event this adapter named")

    @hookimpl
    def lichhook_adapters():
        return [Kiro()]
"""


def test_a_third_party_adapter_serves_every_contract(run, standin, plugin_dir, tmp_path):
    write_plugin(plugin_dir, "kiro_events.py", EVENT_ADAPTER)
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir), XDG_STATE_HOME=str(tmp_path / "state"))
    steps = [
        ("start", {}, "", [("session-start", {"provider_session_id": "k-1", "provider": "kiro"})]),
        ("prompt", {}, "", [("session-state", {"state": "busy"})]),
        ("tool", {"tool": " edit ", "args": "src/a.rs\nmore"}, '{"continue":true}',
         [("session-state", {"state": "busy", "tool": "edit", "detail": "src/a.rs"})]),
        ("ask", {"question": "May I edit src/a.rs?"}, "",
         [("session-state", {"state": "waiting", "reason": "May I edit src/a.rs?"})]),
        ("named", {"name": "  Port the parser  "}, "", [("session-title", {"title": "Port the parser"})]),
        ("wrote", {"name": "Port the parser"}, "", [("session-touched", {})]),  # the title has not changed
        ("end", {}, "", [("session-state", {"state": "done"})]),
        ("quit", {}, "", [("session-state", {"state": "idle"})]),
        ("unknown", {}, "", []),  # not among its events: nothing, and its reports is never called
    ]
    for event, extra, verdict, expected in steps:
        before = len(standin.reports)
        done = run("kiro", event, stdin=json.dumps(dict(extra, chat="k-1")), env=env)
        assert (done.returncode, done.stdout.decode(), done.stderr) == (0, verdict, b""), event
        got = [(r.contract, {k: r.accepted[k] for k in fields}) for r, (_, fields) in
               zip(standin.reports[before:], expected)]
        assert len(standin.reports) - before == len(expected) and got == expected, event
        for report in standin.reports[before:]:
            assert report.status == 204
            if report.contract != "session-start":
                assert json.loads(report.body)["provider_session_id"] == "k-1"


def test_adapters_match_the_typed_surface():
    from importlib import import_module

    import lichhook
    from lichhook.adapters import BY_PROVIDER, load
    from lichhook.hookspecs import EventAdapter, SessionIdAdapter

    for provider in BY_PROVIDER:
        adapter = load(provider)
        assert isinstance(adapter, EventAdapter) and isinstance(adapter, SessionIdAdapter)

    class OneMethod:  # today's surface, duck-typed
        provider, verdict, sample = "x", "", {}

        def session_id(self, payload, environ):
            return None

    assert isinstance(OneMethod(), SessionIdAdapter) and not isinstance(OneMethod(), EventAdapter)
    assert lichhook.Report is import_module("lichhook.adapter").Report
    assert lichhook.Event is import_module("lichhook.adapter").Event
    assert [h for h in dir(import_module("lichhook.hookspecs")) if h.startswith("lichhook_")] == ["lichhook_adapters"]


def test_no_plugin_adapter_can_take_a_word_the_command_line_takes(run, plugin_dir):
    # Every word the command line takes for itself: a plugin adapter claiming one is named
    # and skipped by `lichhook adapters`, and each word still runs its own command.
    from lichhook.cli import WORDS

    words = sorted(WORDS)
    write_plugin(plugin_dir, "taker.py", f"""
        from lichhook import hookimpl

        def adapter(word):
            class Taker:
                provider = word
                def session_id(self, payload, environ): return "x"
            return Taker()

        @hookimpl
        def lichhook_adapters():
            return [adapter(word) for word in {words!r}]
    """)
    listing = run("adapters", env={"LICHHOOK_PLUGIN_DIR": str(plugin_dir)}).stdout.decode()
    for word in words:
        assert f"skipped: plugin folder {plugin_dir / 'taker.py'}: adapter skipped: provider {word!r} is a lichhook " \
               "subcommand; choose another id" in listing, (word, listing)
    assert "\nversion " not in listing and "\nwait " not in listing


MISSPELT = """
    from lichhook import hookimpl

    class {name}:
        provider = "{provider}"
        verdict = ""

        def session_id(self, payload, environ):
            return payload.get("sid")

    @hookimpl
    def lichhook_adapter():  # misspelt: lichhook never calls it
        return [{name}()]
"""


def test_a_misspelt_hook_is_named_with_debugging_and_changes_nothing_else(run, standin, plugin_dir, tmp_path):
    # A plugin-folder file with a misspelt hook beside one that serves, and an installed
    # entry point whose only hook is misspelt: pluggy's check_pending finds them.
    write_plugin(plugin_dir, "typo.py", MISSPELT.format(name="Kiro", provider="kiro") + """
    class Cursor:
        provider = "cursor"
        verdict = ""

        def session_id(self, payload, environ):
            return payload.get("sid")

    @hookimpl
    def lichhook_adapters():
        return [Cursor()]
""")
    site = tmp_path / "site"
    (site / "typo_ep-1.0.dist-info").mkdir(parents=True)
    (site / "typo_ep-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: typo-ep\nVersion: 1.0\n")
    (site / "typo_ep-1.0.dist-info" / "entry_points.txt").write_text("[lichhook]\ntypo = typo_ep\n")
    (site / "typo_ep.py").write_text(textwrap.dedent(MISSPELT.format(name="Goose", provider="goose")), encoding="utf-8")
    env = dict(lich_env(standin), LICHHOOK_PLUGIN_DIR=str(plugin_dir), PYTHONPATH=str(site))
    payload = json.dumps({"sid": "s-1"})

    quiet = run("goose", stdin=payload, env=env)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")
    loud = run("goose", stdin=payload, env=dict(env, LICHHOOK_DEBUG="1"))
    assert (loud.returncode, loud.stdout) == (0, b"")
    err = loud.stderr.decode()
    assert f"plugin folder {plugin_dir / 'typo.py'}: unknown hook 'lichhook_adapter', which lichhook never calls " \
           "(its hooks: lichhook_adapters)" in err, err
    assert "entry point typo (typo-ep 1.0): unknown hook 'lichhook_adapter'" in err, err
    assert err.count("unknown hook") == 2, err  # each named once, though the host checks twice
    assert "unknown provider" in err  # goose's only hook is never called
    # The file's hook that is spelt right still serves.
    served = run("cursor", stdin=payload, env=env)
    assert served.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert (report.accepted["provider"], report.accepted["provider_session_id"], served.stderr) == ("cursor", "s-1", b"")


@POSIX_ONLY
def test_bytecode_in_the_plugin_folder_is_never_run(run, standin, plugin_dir, tmp_path):
    """Python reads a plugin's bytecode from ``__pycache__`` when its header matches the
    source's size and time. A ``__pycache__`` others can write (one hook made it under
    umask 000) would let them swap in code the next hook runs: plugins are compiled from
    their source, and nothing is read from or written to ``__pycache__``."""
    import importlib.util
    import py_compile

    plugin_dir.chmod(0o755)
    path = plugin_dir / "kiro_adapter.py"
    marker = plugin_dir.parent / "plugin-ran"
    source = textwrap.dedent(MARKING.format(marker=str(marker))).encode()
    path.write_bytes(source)
    planted_marker = tmp_path / "planted-ran"
    evil = f"open({str(planted_marker)!r}, 'w').close()\n".encode()
    evil = evil + b"#" * (len(source) - len(evil) - 1) + b"\n"
    assert len(evil) == len(source)
    decoy = tmp_path / "decoy.py"
    decoy.write_bytes(evil)
    st = path.stat()
    os.utime(decoy, ns=(st.st_atime_ns, st.st_mtime_ns))
    cache = Path(importlib.util.cache_from_source(str(path)))
    cache.parent.mkdir(mode=0o777)
    cache.parent.chmod(0o777)
    py_compile.compile(str(decoy), cfile=str(cache), doraise=True)
    ran, reported, said = try_plugin(run, standin, plugin_dir, path=path)
    assert not planted_marker.exists(), said
    assert (ran, reported) == (True, True), said
    assert sorted(p.name for p in cache.parent.iterdir()) == [cache.name]  # nothing written there either
