"""The cold-start layer (lichhook/coldstart/) gives what the plain way would, and each hot
command imports only what its allow-list names."""

from __future__ import annotations

import __future__
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import typing
from decimal import Decimal
from importlib import import_module

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lichhook.adapter import SUBCOMMANDS, provider_id_ok
from lichhook.adapters import BUILTIN, VERDICTS
from lichhook.coldstart import dirs, fastjson, resolve
from lichhook.jsonint import json_int

QUICK = settings(max_examples=200, deadline=None)
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="Windows asks platformdirs and reads stdin in a thread")


# --- resolve: the built-in adapter without the host ---------------------------------------

@pytest.mark.parametrize("provider", sorted(BUILTIN))
def test_verdicts_table_matches_each_adapter(provider):
    adapter = import_module(f"lichhook.adapters.{BUILTIN[provider]}").ADAPTER
    assert resolve.builtin_verdict(provider) == VERDICTS.get(provider, "") == (adapter.verdict or "")
    # The report path skips the provider-id check for built-ins: they must pass it.
    assert provider_id_ok(provider) and provider not in SUBCOMMANDS


def test_verdicts_table_names_only_builtins():
    assert set(VERDICTS) <= set(BUILTIN)


@pytest.mark.parametrize("provider", sorted(BUILTIN))
def test_fast_resolver_gives_the_hosts_adapter(provider, tmp_path):
    from lichhook.debug import Debug
    from lichhook.host import find_adapter
    from lichhook.report import resolve_adapter

    environ = {"LICHHOOK_PLUGIN_DIR": str(tmp_path)}
    module = resolve.builtin_module(provider, environ)
    assert module == BUILTIN[provider]
    fast = resolve.builtin_adapter(module)
    hosted = find_adapter(provider, environ, Debug({}))
    assert fast is hosted is resolve_adapter(provider, environ, Debug({}))
    assert fast.session_id(fast.sample, {}) == hosted.session_id(hosted.sample, {})


def test_the_host_decides_when_a_plugin_could_replace_a_built_in(tmp_path):
    (tmp_path / "anything.py").write_text("")
    assert resolve.builtin_module("claude", {"LICHHOOK_PLUGIN_DIR": str(tmp_path)}) == resolve.HOST
    assert resolve.builtin_module("claude", {"LICHHOOK_PLUGIN_DIR": "relative"}) == resolve.HOST
    assert resolve.builtin_module("kiro", {"LICHHOOK_PLUGIN_DIR": str(tmp_path / "none")}) == resolve.HOST


def test_fast_resolver_skips_pluggy(pyz, base_env, tmp_path):
    probe = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from lichhook.report import resolve_adapter
        from lichhook.debug import Debug
        a = resolve_adapter("claude", {"LICHHOOK_PLUGIN_DIR": sys.argv[2]}, Debug({}))
        print(a.provider, "pluggy" in sys.modules, "json" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", probe, str(pyz), str(tmp_path)], capture_output=True, env=base_env)
    assert done.stdout.decode().split() == ["claude", "False", "False"]


# --- dirs: platformdirs without platformdirs -----------------------------------------------

@pytest.mark.parametrize("xdg", [None, "", "   ", "/custom/xdg"])
def test_config_and_state_dirs_match_platformdirs(monkeypatch, tmp_path, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        if xdg is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, xdg)
    assert dirs.user_config_dir(os.environ) == platformdirs.user_config_dir("lichhook", appauthor=False)
    assert dirs.user_state_dir(os.environ) == platformdirs.user_state_dir("lichhook", appauthor=False)


# --- fastjson against json ---------------------------------------------------------------

def outcome(fn, *args, **kwargs):
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:  # the type and message must match json's own
        return ("raised", type(exc).__name__, str(exc))
    return ("value", canonical(value))


def canonical(value):
    # NaN != NaN: compare through a form where equal parses are equal.
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return [(k, canonical(v)) for k, v in value.items()]
    return (type(value).__name__, value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)

texts = st.one_of(
    st.text(max_size=60),
    json_values.map(json.dumps),
    st.tuples(st.sampled_from(["", " ", "\n\t", "\ufeff", "x", "]", " 1"]), json_values,
              st.sampled_from(["", " ", "\r\n", "x", "{}", ","])).map(lambda t: t[0] + json.dumps(t[1], ensure_ascii=False) + t[2]),
    st.tuples(st.integers(4000, 4600), st.sampled_from(["-", ""])).map(lambda t: '{"n": ' + t[1] + "7" * t[0] + "}"),
)


@QUICK
@given(texts)
def test_loads_is_json_loads(text):
    assert outcome(fastjson.loads, text) == outcome(json.loads, text)


@QUICK
@given(texts)
def test_loads_with_parse_int_is_json_loads_with_it(text):
    assert outcome(fastjson.loads, text, parse_int=json_int) == outcome(json.loads, text, parse_int=json_int)


@pytest.mark.parametrize("text", ["", "  ", "[1,", '{"a":1} x', "\ufeff{}", "NaN", "-Infinity", '"\x01"',
                                  '{"a":"\\ud800"}', "[" * 5000 + "]" * 5000, "1e999", '{"a":1,"a":2}',
                                  "1" * 4301, "-" + "9" * 5000])
def test_loads_edge_cases(text):
    assert outcome(fastjson.loads, text) == outcome(json.loads, text)
    assert outcome(fastjson.loads, text, parse_int=json_int) == outcome(json.loads, text, parse_int=json_int)


def test_json_int_keeps_every_digit():
    digits = "12345678901234567890" * 300  # 6000 digits: more than int() takes
    assert json_int(digits) == Decimal(digits) and str(json_int(digits)) == digits
    assert json_int("-42") == -42 and type(json_int("-42")) is int


def test_loads_deep_nesting_raises_like_json():
    deep = "[" * 200_000
    assert outcome(fastjson.loads, deep)[:2] == outcome(json.loads, deep)[:2] == ("raised", "RecursionError")


@QUICK
@given(json_values | st.dictionaries(st.integers() | st.booleans() | st.none(), json_values, max_size=3),
       st.sampled_from([None, (", ", ": "), (",", ":")]), st.booleans(), st.sampled_from([None, None, 0, 2, 4]))
def test_dumps_is_json_dumps(value, separators, ensure_ascii, indent):
    assert fastjson.dumps(value, separators=separators, ensure_ascii=ensure_ascii, indent=indent) == json.dumps(
        value, separators=separators, ensure_ascii=ensure_ascii, indent=indent)


@pytest.mark.parametrize("value", [{"a": object()}, {(1,): 2}, [1, {1, 2}]])
def test_dumps_refuses_like_json(value):
    assert outcome(fastjson.dumps, value) == outcome(json.dumps, value)


@pytest.mark.parametrize("indent", [None, 2])
def test_dumps_circular_raises_like_json(indent):
    loop: list = []
    loop.append(loop)
    assert outcome(fastjson.dumps, loop, indent=indent) == outcome(json.dumps, loop, indent=indent)


@pytest.mark.parametrize("value", [{"n": float("nan")}, [float("inf")], {1: "int key"}, {None: 1, 2.5: 2},
                                   [True, False, None, 0, -1, 1.25], {"deep": [[[[[[{"x": ()}]]]]]]},
                                   [[[[[[[[[[[1]]]]]]]]]]] * 2])
def test_indented_dumps_match_json(value):
    for indent in (0, 2):
        for ensure_ascii in (True, False):
            assert fastjson.dumps(value, indent=indent, ensure_ascii=ensure_ascii) == json.dumps(
                value, indent=indent, ensure_ascii=ensure_ascii)


# --- zipload: one read a module, the same modules -------------------------------------------

LOADED = textwrap.dedent("""
    import json, pkgutil, sys, zipimport
    pyz, fast = sys.argv[1], sys.argv[2] == "fast"
    sys.path.insert(0, pyz)
    import lichhook
    if fast:
        from lichhook.coldstart import zipload
        assert zipload.install()
    names = sorted(n for n in (i.name for i in pkgutil.walk_packages(lichhook.__path__, "lichhook."))
                   if not n.startswith(("lichhook.mcp.", "lichhook.__main__")))
    out = {}
    for name in names + ["pluggy", "platformdirs", "tomlkit"]:
        module = __import__(name, fromlist=["_"])
        out[name] = [module.__file__, module.__package__, list(getattr(module, "__path__", [])),
                     sorted(k for k, v in vars(module).items()
                            if not k.startswith("__") and type(v) is not type(sys)),
                     type(module.__loader__).__name__, getattr(module.__loader__, "archive", None)]
    out["data"] = pkgutil.get_data("lichhook.install", "js/omp.js").decode()[:40]
    print(json.dumps(out))
""")


def test_zipload_loads_every_module_as_zipimport_does(pyz, base_env):
    plain, fast = (json.loads(subprocess.run([sys.executable, "-I", "-c", LOADED, str(pyz), way], env=base_env,
                                             capture_output=True, check=True, timeout=60).stdout)
                   for way in ("plain", "fast"))
    assert len(plain) > 60 and plain.keys() == fast.keys()
    for name in plain:
        if name == "data":
            assert plain[name] == fast[name]
            continue
        *same, loader, archive = fast[name]
        assert same == plain[name][:4], name
        assert archive == plain[name][5] == str(pyz), name
        assert loader == "OneRead" or name in ("lichhook", "lichhook.coldstart", "lichhook.coldstart.zipload"), name


def test_zipload_changes_nothing_outside_an_archive():
    from lichhook.coldstart import zipload

    hooks = list(sys.path_hooks)
    assert zipload.install() is False  # run from the checkout: no archive to serve
    assert sys.path_hooks == hooks


# --- string annotations without __future__ --------------------------------------------------

# The modules the hot paths import: they skip ``from __future__ import annotations``.
NO_FUTURE = ["lichhook.cli", "lichhook.report", "lichhook.debug", "lichhook.lichenv", "lichhook.paths",
             "lichhook.coldstart.dirs", "lichhook.coldstart.fastjson", "lichhook.coldstart.process",
             "lichhook.coldstart.resolve", "lichhook.coldstart.zipload", "lichhook.adapter", "lichhook.client",
             "lichhook.payload", "lichhook.titles", "lichhook.transcripts", "lichhook.contracts",
             "lichhook.contracts.session_start", "lichhook.contracts.session_state",
             "lichhook.contracts.session_title", "lichhook.contracts.session_touched", "lichhook.adapters._fields"]
NO_FUTURE += [f"lichhook.adapters.{module}" for module in BUILTIN.values()]


def type_checking_names(module) -> dict:
    """What a module imports only for type checkers (under ``if TYPE_CHECKING:``)."""
    import ast
    import inspect

    names: dict = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            block = ast.Module(body=node.body, type_ignores=[])
            exec(compile(block, module.__name__, "exec"), names)
    return names


@pytest.mark.skipif(sys.version_info < (3, 10), reason="evaluating 'X | None' needs Python 3.10")
@pytest.mark.parametrize("name", NO_FUTURE)
def test_string_annotations_mean_what_the_plain_ones_would(name):
    # Each string annotation must evaluate, in its module with the names it imports only
    # for type checkers, to a real type: what mypy checks and `from __future__` would keep.
    module = import_module(name)
    names = dict(vars(module), **type_checking_names(module))
    functions = [f for f in vars(module).values()
                 if callable(f) and not isinstance(f, type) and getattr(f, "__module__", None) == name]
    functions += [m for c in vars(module).values() if isinstance(c, type) and c.__module__ == name
                  for m in vars(c).values() if callable(m) and not isinstance(m, type)]
    functions += [m.fget for c in vars(module).values() if isinstance(c, type) and c.__module__ == name
                  for m in vars(c).values() if isinstance(m, property)]
    checked = 0
    for function in functions:
        hints = typing.get_type_hints(function, globalns=names)
        checked += len(hints)
    assert checked or name.startswith("lichhook.adapters."), f"{name} has no annotated functions"
    assert not [v for v in vars(module).values() if isinstance(v, __future__._Feature)]


# --- process: how a short-lived command ends ---------------------------------------------------

PLAIN = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.argv = [sys.argv[1]] + sys.argv[2:]
    from lichhook.cli import main
    sys.exit(main())
""")


def hot_commands(waits):
    start = {"session_id": "s-1", "hook_event_name": "SessionStart", "source": "startup"}
    stop = {"session_id": "s-1", "hook_event_name": "Stop", "stop_hook_active": False}
    transcript = waits.parent / f"{waits.name}-transcript.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text('{"type":"ai-title","aiTitle":"Write hi into f.txt","sessionId":"s-1"}\n', encoding="utf-8")
    tool = {"session_id": "s-1", "cwd": "/p", "transcript_path": str(transcript), "tool_name": "Write",
            "tool_input": {"file_path": "/p/f.txt", "content": "hi"}}
    return {
        "no-op": (["antigravity"], b'{"conversationId": "x"}'),
        "no-op: event": (["antigravity", "PreToolUse"], b'{"conversationId": "x"}'),
        "report": (["claude"], b'{"session_id": "abc"}'),
        "event: busy": (["claude", "UserPromptSubmit"], json.dumps(dict(start, hook_event_name="UserPromptSubmit",
                                                                        prompt="hi")).encode()),
        "event: tool": (["claude", "PreToolUse"], json.dumps(dict(tool, hook_event_name="PreToolUse")).encode()),
        "event: after a tool": (["claude", "PostToolUse"], json.dumps(dict(tool, hook_event_name="PostToolUse")).encode()),
        "event: opencode": (["opencode", "tool.execute.before"], json.dumps(
            {"type": "tool.execute.before", "input": {"tool": "bash", "sessionID": "ses_1", "callID": "c"},
             "output": {"args": {"command": "ls"}}, "directory": "/p"}).encode()),
        "session-start": (["claude-code", "session-start", str(waits)], json.dumps(start).encode()),
        "stop": (["claude-code", "stop", str(waits)], json.dumps(stop).encode()),
        "wait add": (["wait", "add", "--by", "rev", "--session", "s-1", "--what", "x", "--waits-dir", str(waits)], b""),
        "wait list": (["wait", "list", "--by", "rev", "--session", "s-1", "--waits-dir", str(waits)], b""),
    }


def lich_env_for(server) -> dict:
    return {"LICH_PORT": str(server.port), "LICH_TOKEN": "tok", "LICH_SESSION_ID": "lich-s1"}


@pytest.mark.parametrize("command", ["no-op", "no-op: event", "report", "event: after a tool", "session-start", "stop",
                                     "wait add", "wait list"])
def test_the_quick_exit_ends_as_the_plain_exit_would(pyz, base_env, tmp_path, fault_server, command):
    env = dict(base_env, LICHHOOK_NODE="node", LICHHOOK_DEBUG="1")
    if command in ("report", "event: after a tool"):
        env.update(lich_env_for(fault_server()))
    outcomes = []
    for way in ("quick", "plain"):
        env["XDG_STATE_HOME"] = str(tmp_path / way / "state")  # each way records its own title
        waits = tmp_path / way
        args, stdin = hot_commands(waits)[command]
        if command in ("wait list", "stop", "session-start"):
            subprocess.run([sys.executable, str(pyz)] + hot_commands(waits)["wait add"][0], env=env, check=True,
                           capture_output=True)
        argv = [sys.executable, str(pyz), *args] if way == "quick" else [sys.executable, "-c", PLAIN, str(pyz), *args]
        done = subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=30)
        outcomes.append((done.returncode, same_run(done.stdout, tmp_path / way), same_run(done.stderr, tmp_path / way)))
    assert outcomes[0] == outcomes[1]


def same_run(output: bytes, folder) -> bytes:
    """``output`` without what differs between two runs: their folders and the times."""
    output = output.replace(str(folder).encode(), b"W")
    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"TIME", output)


@POSIX_ONLY
def test_a_vanished_stdout_reader_is_not_an_error(pyz, base_env, tmp_path):
    # The plain way prints "Exception ignored ... BrokenPipeError" and exits 120.
    args, stdin = hot_commands(tmp_path / "waits")["no-op"]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the hook writes a byte
    try:
        done = subprocess.run([sys.executable, str(pyz), *args], input=stdin, stdout=write, stderr=subprocess.PIPE,
                              env=dict(base_env, LICHHOOK_NODE="node"), timeout=30)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_plugins_exit_handler_still_runs(pyz, base_env, tmp_path):
    # Teardown is skipped only when no foreign code ran: a plugin gets an orderly exit.
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    marker = tmp_path / "atexit-ran"
    (plugins / "lateexit.py").write_text(textwrap.dedent(f"""
        import atexit
        from lichhook import hookimpl

        atexit.register(lambda: open({str(marker)!r}, "w").close())


        class Late:
            provider = "lateexit"
            verdict = ""
            sample = {{"session_id": "s"}}

            def session_id(self, payload, environ):
                return payload.get("session_id")


        @hookimpl
        def lichhook_adapters():
            return [Late()]
    """), encoding="utf-8")
    env = dict(base_env, LICHHOOK_PLUGIN_DIR=str(plugins))
    done = subprocess.run([sys.executable, str(pyz), "lateexit"], input=b"{}", env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 0 and done.stdout == b""
    assert marker.exists()


def test_hook_exit_keeps_output_and_status(run):
    done = run("antigravity", stdin=b"{}")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}", b"")


# --- what each hot command imports ----------------------------------------------------------

# Runs the archive as a harness would, then lists the modules it loaded (those the
# interpreter's own start-up loaded are left out). Registering an exit handler is also
# what keeps lichhook from skipping the interpreter's teardown.
PROBE = textwrap.dedent("""
    import atexit, pkgutil, runpy, sys  # pkgutil: what runpy.run_path itself loads
    before = set(sys.modules)
    atexit.register(lambda: sys.stderr.write("MODULES " + " ".join(sorted(set(sys.modules) - before)) + "\\n"))
    pyz = sys.argv[1]
    sys.argv = [pyz] + sys.argv[2:]
    runpy.run_path(pyz, run_name="__main__")
""")


def modules_loaded(pyz, env, *args, stdin=b""):
    done = subprocess.run([sys.executable, "-c", PROBE, str(pyz), *args], input=stdin, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    (line,) = [l for l in done.stderr.decode().splitlines() if l.startswith("MODULES ")]
    return set(line.split()[1:])


CORE = {"gc", "lichhook", "lichhook.cli", "lichhook.coldstart", "lichhook.coldstart.process",
        "lichhook.coldstart.zipload", "lichhook.coldstart.dirs", "lichhook.paths"}
NO_OP = CORE | {"lichhook.report", "lichhook.debug", "lichhook.lichenv", "lichhook.adapters", "lichhook.coldstart.resolve"}
# What every report shares: reading stdin, an adapter, the transport.
SENDING = NO_OP | {"_json", "_socket", "select", "lichhook.client", "lichhook.coldstart.fastjson", "lichhook.payload",
                   "lichhook.adapters._fields", "lichhook.adapter", "lichhook.contracts"}
REPORT = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_start"}
STATE = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_state"}
# After a tool: busy, touched, and the title read from the transcript and recorded (a
# write, atomic, the first time only: that is where diskio and its __future__ come in).
AFTER_TOOL = STATE | {"lichhook.contracts.session_touched", "lichhook.contracts.session_title", "lichhook.titles",
                      "lichhook.transcripts", "lichhook.diskio", "__future__"}
CLAUDE_CODE = CORE | {"__future__", "_json", "select", "lichhook.claude_code", "lichhook.claude_code.commands",
                      "lichhook.claude_code.mirror", "lichhook.coldstart.fastjson", "lichhook.diskio",
                      "lichhook.ids", "lichhook.payload", "lichhook.selfcmd"}
WAIT = CORE | {"__future__", "_json", "fcntl", "lichhook.coldstart.fastjson", "lichhook.diskio", "lichhook.ids",
               "lichhook.waits", "lichhook.waits.api", "lichhook.waits.cli", "lichhook.waits.fields",
               "lichhook.waits.mirror", "lichhook.waits.names", "lichhook.waits.rules", "lichhook.waits.store"}
ALLOWED = {
    "no-op": NO_OP,
    "no-op: event": NO_OP,
    "report": REPORT,
    "event: busy": STATE,
    "event: tool": STATE,
    "event: after a tool": AFTER_TOOL,
    "event: opencode": STATE - {"lichhook.adapters.claude"} | {"lichhook.adapters.opencode"},
    "session-start": CLAUDE_CODE | {"lichhook.claude_code.session_start"},
    "stop": CLAUDE_CODE | {"lichhook.claude_code.stop"},
    "wait add": WAIT,
    "wait list": WAIT,
}
# Never on a hot path, whatever the allow-lists say.
HEAVY = {"json", "re", "typing", "enum", "pluggy", "platformdirs", "importlib.metadata", "http.client",
         "socket", "email", "logging", "subprocess", "argparse", "encodings.utf_8_sig", "lichhook.host",
         "decimal", "site", "threading"}


def test_allow_lists_hold_nothing_heavy():
    for allowed in ALLOWED.values():
        assert not allowed & HEAVY


@POSIX_ONLY
@pytest.mark.parametrize("command", sorted(ALLOWED))
def test_each_hot_command_imports_only_its_allow_list(pyz, base_env, tmp_path, fault_server, command):
    env = dict(base_env, LICHHOOK_NODE="node")
    waits = tmp_path / "waits"
    commands = hot_commands(waits)
    if command in ("wait list", "stop", "session-start"):
        subprocess.run([sys.executable, str(pyz)] + commands["wait add"][0], env=env, check=True, capture_output=True)
    server = None
    if command == "report" or command.startswith("event"):
        server = fault_server()
        env.update(lich_env_for(server))
    args, stdin = commands[command]
    loaded = modules_loaded(pyz, env, *args, stdin=stdin)
    assert loaded - ALLOWED[command] == set(), f"{command} imports more than its allow-list"
    if server is not None:
        assert len(server.requests) == (3 if command == "event: after a tool" else 1)
    if command.startswith("no-op"):
        assert "lichhook.adapters.antigravity" not in loaded and "__future__" not in loaded
    if command in ("report", "event: busy", "event: tool", "event: opencode"):
        assert "__future__" not in loaded
