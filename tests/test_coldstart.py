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

from lichhook.adapter import SUBCOMMANDS, provider_id_ok, verdict_of
from lichhook.adapters import BUILTIN, BY_PROVIDER, VERDICTS
from lichhook import coldstart
from lichhook.coldstart import fastjson, joined
from lichhook.jsonint import json_int

QUICK = settings(max_examples=200, deadline=None)
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="Windows asks platformdirs and reads stdin in a thread")


# --- resolve: the built-in adapter without the host ---------------------------------------

@pytest.mark.parametrize("provider", sorted(BUILTIN))
def test_verdicts_table_matches_each_adapter(provider):
    adapter = import_module(f"lichhook.adapters.{BUILTIN[provider]}").ADAPTER
    assert coldstart.builtin_verdict(provider) == VERDICTS.get(provider, "") == (adapter.verdict or "")
    # The report path skips the provider-id check for built-ins: they must pass it.
    assert provider_id_ok(provider) and provider not in SUBCOMMANDS
    # Each event's verdict, from the descriptor without the adapter's module, is the adapter's.
    for event in list(BY_PROVIDER[provider].verdicts()) + ["permission.asked", "NoSuchEvent"]:
        assert coldstart.builtin_verdict(provider, event) == verdict_of(adapter, event), (provider, event)


def test_verdicts_table_names_only_builtins():
    assert set(VERDICTS) <= set(BUILTIN)


@pytest.mark.parametrize("provider", sorted(BUILTIN))
def test_fast_resolver_gives_the_hosts_adapter(provider, tmp_path):
    from lichhook.debug import Debug
    from lichhook.host import find_adapter
    from lichhook.report import resolve_adapter

    environ = {"LICHHOOK_PLUGIN_DIR": str(tmp_path)}
    module = coldstart.builtin_module(provider, environ)
    assert module == BUILTIN[provider]
    fast = coldstart.builtin_adapter(module)
    hosted = find_adapter(provider, environ, Debug({}))
    assert fast is hosted is resolve_adapter(provider, environ, Debug({}))
    assert fast.session_id(fast.sample, {}) == hosted.session_id(hosted.sample, {})


def test_the_host_decides_when_a_plugin_could_replace_a_built_in(tmp_path):
    (tmp_path / "anything.py").write_text("")
    assert coldstart.builtin_module("claude", {"LICHHOOK_PLUGIN_DIR": str(tmp_path)}) == coldstart.HOST
    assert coldstart.builtin_module("claude", {"LICHHOOK_PLUGIN_DIR": "relative"}) == coldstart.HOST
    assert coldstart.builtin_module("kiro", {"LICHHOOK_PLUGIN_DIR": str(tmp_path / "none")}) == coldstart.HOST


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


# --- folders: platformdirs without platformdirs -----------------------------------------------

@pytest.mark.parametrize("xdg", [None, "", "   ", "/custom/xdg"])
def test_config_and_state_dirs_match_platformdirs(monkeypatch, tmp_path, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        if xdg is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, xdg)
    assert coldstart.user_config_dir(os.environ) == platformdirs.user_config_dir("lichhook", appauthor=False)
    assert coldstart.user_state_dir(os.environ) == platformdirs.user_state_dir("lichhook", appauthor=False)


# --- stdin: reading until a deadline without select -----------------------------------------

READER = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    import _signal
    from lichhook import coldstart, payload
    way, seconds, limit = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    mine = lambda signum, frame: None
    _signal.signal(_signal.SIGALRM, mine)
    deadline = time.monotonic() + seconds
    found = []
    whole = lambda chunks: payload._whole_object(chunks, found)
    if way == "alarm":
        chunks = coldstart.read_until(0, limit, deadline, whole)
    else:
        chunks = payload._read_with_select(0, limit, deadline, found)
    sys.stdout.buffer.write(b"".join(chunks))
    assert _signal.getsignal(_signal.SIGALRM) is mine  # the handler in place before is back
    other = []
    threading.Thread(target=lambda: other.append(coldstart.read_until(0, limit, deadline + 5, whole))).start()
    time.sleep(seconds)  # no alarm left behind to go off now
    sys.stderr.write(f"thread {other}")
""")

# name -> (pieces written, seconds between them, whether stdin stays open until the reader ends)
WRITERS = {
    "written and closed": ([b'{"session_id": "abc"}'], 0, False),
    "in pieces, then closed": ([b'{"session_', b'id": "ab', b'c"}  '], 0.05, False),
    "a whole object, left open": ([b'{"session_id": "abc"}'], 0, True),
    "a whole object, then more": ([b'{"session_id": "abc"}', b' {"x": 1}'], 0.1, True),
    "half an object, left open": ([b'{"session_id": "ab'], 0, True),
    "nothing, left open": ([], 0, True),
    "more than the limit": ([b"x" * 100], 0, False),
    "a closing brace that is not the end": ([b'{"a": "}', b'"}'], 0.05, False),
}


def read_stdin_as(way: str, writer: str, seconds: float = 0.4, limit: int = 64) -> tuple:
    import threading
    import time

    from testkit.constants import ROOT

    pieces, pause, keep_open = WRITERS[writer]
    proc = subprocess.Popen([sys.executable, "-c", READER, str(ROOT), way, str(seconds), str(limit)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(30, proc.kill)  # a reader that misses its deadline fails, not hangs
    watchdog.start()
    for piece in pieces:
        proc.stdin.write(piece)
        proc.stdin.flush()
        time.sleep(pause)
    if not keep_open:
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=30)
    watchdog.cancel()
    if keep_open:
        proc.stdin.close()
    return proc.returncode, out, err


@POSIX_ONLY
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_reading_stdin_until_the_deadline_gives_what_the_select_loop_gives(writer):
    alarm, plain = read_stdin_as("alarm", writer), read_stdin_as("select", writer)
    assert alarm[0] == plain[0] == 0, (alarm[2], plain[2])
    assert alarm[1] == plain[1]
    assert alarm[2] == b"thread [None]"  # only the main thread can set an alarm: elsewhere the caller selects


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
       st.sampled_from([None, (", ", ": "), (",", ":")]), st.booleans(), st.sampled_from([None, None, 0, 2, 4]),
       st.booleans())
def test_dumps_is_json_dumps(value, separators, ensure_ascii, indent, check_circular):
    assert fastjson.dumps(value, separators=separators, ensure_ascii=ensure_ascii, indent=indent,
                          check_circular=check_circular) == json.dumps(
        value, separators=separators, ensure_ascii=ensure_ascii, indent=indent, check_circular=check_circular)


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
        from lichhook import coldstart
        assert coldstart.zipload()
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
        assert loader == "OneRead" or name in ("lichhook", "lichhook.coldstart"), name


JOINED_LOADED = textwrap.dedent("""
    import json, marshal, pkgutil, sys, zipimport
    pyz, fast, hooks = sys.argv[1], sys.argv[2] == "fast", sys.argv[3]
    main = {"__name__": "probe"}
    exec(zipimport.zipimporter(hooks).get_code("__main__"), main)  # the hooks archive's own
    joined = zipimport.zipimporter(hooks).get_data(main["JOINED"])
    served = sorted(marshal.loads(joined[8:8 + int.from_bytes(joined[4:8], "little")]))
    sys.path.insert(0, pyz)
    if fast:
        assert main["serve"](pyz) and type(sys.meta_path[0]).__name__ == "Joined"
    out = {}
    for name in served:
        module = __import__(name, fromlist=["_"])
        spec, loader = module.__spec__, module.__loader__
        out[name] = [module.__file__, module.__package__, list(getattr(module, "__path__", [])),
                     sorted(k for k, v in vars(module).items()
                            if not k.startswith("__") and type(v) is not type(sys)),
                     spec.origin, spec.cached, spec.has_location, spec.parent, loader.archive, loader.prefix,
                     loader.get_filename(name), loader.is_package(name), loader.get_source(name),
                     getattr(module, "__cached__", None), type(loader).__name__]
    out["data"] = pkgutil.get_data("lichhook.adapters", "claude.py").decode()[:40]
    import importlib.resources
    out["files"] = importlib.resources.files("lichhook.contracts").joinpath("session_state.py").read_text()[:60]
    print(json.dumps(out))
""")


def test_joined_bytecode_loads_every_module_as_zipimport_does(copy_folder, base_env):
    """The hooks archive's modules, served from its joined bytecode, against the same
    modules zipimport loads from the complete archive's .pyc members."""
    hooks, complete = copy_folder / "hooks.pyz", copy_folder / "lichhook.pyz"
    plain, fast = (json.loads(subprocess.run([sys.executable, "-I", "-S", "-c", JOINED_LOADED, str(archive), way,
                                              str(hooks)], env=base_env, capture_output=True, check=True,
                                             timeout=60).stdout.replace(str(archive).encode(), b"ARCHIVE"))
                   for archive, way in ((complete, "plain"), (hooks, "fast")))
    assert len(plain) > 40 and plain.keys() == fast.keys()
    assert {"lichhook", "lichhook.cli", "lichhook.report", "lichhook.adapters", "lichhook.coldstart",
            "lichhook.contracts.session_state"} <= plain.keys()
    for name in plain:
        if name in ("data", "files"):
            assert plain[name] == fast[name], name
            continue
        assert fast[name][:-1] == plain[name][:-1], name
        assert (plain[name][-1], fast[name][-1]) == ("zipimporter", "Joined"), name


def test_the_hooks_archive_holds_its_modules_joined_and_every_source(pyz, tmp_path):
    from pathlib import Path

    from lichhook.archive import bytecode_magic, bytecode_of, hooks_archive, members

    _, files = members(hooks_archive(Path(pyz).read_bytes()))
    _, complete = members(Path(pyz).read_bytes())
    assert [n for n in files if n.endswith(".pyc")] == ["__main__.pyc"]
    assert files["__main__.py"] == complete[joined.SOURCE]  # this module runs it
    assert files["__main__.pyc"] == complete[joined.SOURCE + "c"]
    assert next(iter(files)) == joined.JOINED  # first, found without the table of contents
    assert bytecode_of(files) == bytecode_of(complete) is not None  # install and doctor read it so
    hooks = tmp_path / "hooks.pyz"
    hooks.write_bytes(hooks_archive(Path(pyz).read_bytes()))
    assert bytecode_magic(hooks) == bytecode_magic(pyz) is not None
    # Every module keeps its source, for another Python and for tracebacks.
    hot = [n for n in complete if n.startswith(coldstart.HOOK_MEMBERS)]
    assert sorted(n for n in hot if n.endswith(".py") and n != "__main__.py") == \
        sorted(n for n in files if n.endswith(".py") and n != "__main__.py")


def test_joined_bytecode_for_another_python_is_not_served(pyz, tmp_path, base_env):
    """A hooks archive whose joined bytecode is for another Python runs from its sources."""
    from pathlib import Path

    from lichhook.archive import archive_bytes, hooks_archive, members

    shebang, files = members(hooks_archive(Path(pyz).read_bytes()))
    files[joined.JOINED] = (3413).to_bytes(2, "little") + b"\r\n" + files[joined.JOINED][4:]
    other = tmp_path / "hooks.pyz"
    other.write_bytes(archive_bytes(files, shebang))
    probe = ("import sys, zipimport; main = {'__name__': 'probe'}; "
             "exec(zipimport.zipimporter(sys.argv[1]).get_code('__main__'), main); "
             "assert not main['serve'](sys.argv[1]); sys.path.insert(0, sys.argv[1]); "
             "import lichhook.report; print(lichhook.report.__file__)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(other)], env=base_env, capture_output=True,
                          check=True, timeout=60)
    assert done.stdout.decode().strip().endswith("report.py")
    version = subprocess.run([sys.executable, "-I", "-S", str(other), "--version"], env=base_env,
                             capture_output=True, check=True, timeout=60)
    assert version.stdout.startswith(b"lichhook ")


def test_zipload_changes_nothing_outside_an_archive():
    hooks = list(sys.path_hooks)
    assert coldstart.zipload() is False  # run from the checkout: no archive to serve
    assert sys.path_hooks == hooks


# --- string annotations without __future__ --------------------------------------------------

# The modules the hot paths import: they skip ``from __future__ import annotations``.
NO_FUTURE = ["lichhook.cli", "lichhook.report", "lichhook.debug", "lichhook.lichenv", "lichhook.paths",
             "lichhook.coldstart", "lichhook.coldstart.fastjson", "lichhook.adapter",
             "lichhook.client", "lichhook.payload", "lichhook.ids", "lichhook.titles", "lichhook.transcripts",
             "lichhook.contracts", "lichhook.contracts.session_start", "lichhook.contracts.session_state",
             "lichhook.contracts.session_title", "lichhook.contracts.session_touched", "lichhook.adapters._fields"]
NO_FUTURE += [f"lichhook.adapters.{module}" for module in BUILTIN.values()]
# The modules the Claude Code hooks and the wait ops import skip it too.
NO_FUTURE_WAITS = ["lichhook.claude_code", "lichhook.claude_code.commands", "lichhook.claude_code.session_start",
                   "lichhook.claude_code.stop", "lichhook.selfcmd", "lichhook.diskio", "lichhook.waits.api",
                   "lichhook.waits.cli", "lichhook.waits.fields", "lichhook.waits.folder", "lichhook.waits.lock",
                   "lichhook.waits.names", "lichhook.waits.rules", "lichhook.waits.view"]


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
@pytest.mark.parametrize("name", NO_FUTURE + NO_FUTURE_WAITS)
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


def test_only_an_exit_handler_registered_asks_for_the_orderly_exit(pyz, base_env):
    # atexit not imported at all means no handler: the answer without importing it.
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from lichhook.coldstart import only_own_code_ran as own; "
             "a = own(); import atexit; b = own(); atexit.register(print); print(a, b, own())")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(pyz)], env=base_env, capture_output=True,
                          check=True, timeout=60)
    assert done.stdout.split()[:3] == [b"True", b"True", b"False"]


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


def modules_loaded(pyz, env, *args, stdin=b"", files=False):
    """The modules a run loaded, or with ``files`` the files they were loaded from."""
    probe = PROBE.replace("sorted(set(sys.modules) - before)",
                          'sorted(str(getattr(sys.modules[m], "__file__", "")) for m in set(sys.modules) - before)') \
        if files else PROBE
    done = subprocess.run([sys.executable, "-c", probe, str(pyz), *args], input=stdin, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 0, done.stderr.decode()
    (line,) = [l for l in done.stderr.decode().splitlines() if l.startswith("MODULES ")]
    return set(line.split()[1:])


CORE = {"gc", "lichhook", "lichhook.cli", "lichhook.coldstart", "lichhook.paths"}
NO_OP = CORE | {"lichhook.report", "lichhook.debug", "lichhook.lichenv", "lichhook.adapters"}
# What every report shares: reading stdin, an adapter, the transport.
SENDING = NO_OP | {"_json", "_socket", "lichhook.client", "lichhook.coldstart.fastjson", "lichhook.payload",
                   "lichhook.adapters._fields", "lichhook.adapter", "lichhook.contracts"}
REPORT = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_start"}
STATE = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_state"}
# After a tool: busy, touched, and the title read from the transcript and recorded (a
# write, atomic, the first time only: that is where diskio comes in).
AFTER_TOOL = STATE | {"lichhook.contracts.session_touched", "lichhook.contracts.session_title", "lichhook.titles",
                      "lichhook.transcripts", "lichhook.diskio"}
CLAUDE_CODE = CORE | {"_json", "lichhook.claude_code", "lichhook.claude_code.commands",
                      "lichhook.waits", "lichhook.waits.view", "lichhook.coldstart.fastjson", "lichhook.diskio",
                      "lichhook.ids", "lichhook.payload", "lichhook.selfcmd"}
WAIT = CORE | {"_json", "fcntl", "lichhook.coldstart.fastjson", "lichhook.diskio", "lichhook.ids",
               "lichhook.waits", "lichhook.waits.api", "lichhook.waits.cli", "lichhook.waits.folder",
               "lichhook.waits.lock", "lichhook.waits.names", "lichhook.waits.rules", "lichhook.waits.view"}
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
    "wait add": WAIT | {"lichhook.waits.fields"},  # list takes no argument to check
    "wait list": WAIT,
}
# Never on a hot path, whatever the allow-lists say.
HEAVY = {"json", "re", "typing", "enum", "pluggy", "platformdirs", "importlib.metadata", "http.client",
         "socket", "email", "logging", "subprocess", "argparse", "encodings.utf_8_sig", "lichhook.host",
         "decimal", "site", "threading", "signal", "select", "__future__"}


def test_allow_lists_hold_nothing_heavy():
    for allowed in ALLOWED.values():
        assert not allowed & HEAVY


def ready(archive, base_env, tmp_path, fault_server, command: str) -> tuple:
    """(env, args, stdin, server) to run the hot ``command`` from ``archive``: the waits
    folder holds a wait where the command reads one, and a report gets a loopback server."""
    env = dict(base_env, LICHHOOK_NODE="node")
    commands = hot_commands(tmp_path / "waits")
    if command in ("wait list", "stop", "session-start"):
        subprocess.run([sys.executable, str(archive)] + commands["wait add"][0], env=env, check=True,
                       capture_output=True)
    server = None
    if command == "report" or command.startswith("event"):
        server = fault_server()
        env.update(lich_env_for(server))
    args, stdin = commands[command]
    return env, args, stdin, server


@POSIX_ONLY
@pytest.mark.parametrize("command", sorted(ALLOWED))
def test_each_hot_command_imports_only_its_allow_list(pyz, base_env, tmp_path, fault_server, command):
    env, args, stdin, server = ready(pyz, base_env, tmp_path, fault_server, command)
    loaded = modules_loaded(pyz, env, *args, stdin=stdin)
    assert loaded - ALLOWED[command] == set(), f"{command} imports more than its allow-list"
    if server is not None:
        assert len(server.requests) == (3 if command == "event: after a tool" else 1)
    if command.startswith("no-op"):
        assert "lichhook.adapters.antigravity" not in loaded and "__future__" not in loaded
    if command in ("report", "event: busy", "event: tool", "event: opencode"):
        assert "__future__" not in loaded


# --- the hooks archive: what hot commands import, the rest beside it ---------------------------


def test_the_hooks_archive_holds_every_module_a_hot_command_imports():
    from lichhook.coldstart import HOOK_MEMBERS

    for command, allowed in ALLOWED.items():
        for name in sorted(n for n in allowed if n.startswith("lichhook")):
            member = name.replace(".", "/")
            assert (member + ".pyc").startswith(HOOK_MEMBERS) or (member + "/__init__.pyc").startswith(HOOK_MEMBERS), \
                (command, name)


@pytest.fixture
def copy_folder(pyz, tmp_path):
    """A folder as install makes it: the complete archive and its hooks archive."""
    from pathlib import Path

    from lichhook.archive import hooks_archive

    folder = tmp_path / "data" / "py3.x"
    folder.mkdir(parents=True)
    (folder / "lichhook.pyz").write_bytes(Path(pyz).read_bytes())
    (folder / "hooks.pyz").write_bytes(hooks_archive(Path(pyz).read_bytes()))
    return folder


@POSIX_ONLY
@pytest.mark.parametrize("command", sorted(ALLOWED))
def test_hot_commands_run_from_the_hooks_archive_alone(copy_folder, base_env, tmp_path, fault_server, command):
    hooks = copy_folder / "hooks.pyz"
    env, args, stdin, _ = ready(hooks, base_env, tmp_path, fault_server, command)
    files = modules_loaded(hooks, env, *args, stdin=stdin, files=True)
    files = [f for f in files if "lichhook" in f]
    assert files and not [f for f in files if "lichhook.pyz" in f], files  # nothing from the complete archive


@pytest.mark.parametrize("args,stdin,plugin", [
    (["--version"], b"", False),
    (["adapters"], b"", True),
    (["kiro"], b'{"kiro_session": "k-1"}', True),
    (["doctor"], b"", False),
    (["mcp"], b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n', False),
])
def test_a_hooks_archive_runs_every_other_command_as_the_complete_archive_does(copy_folder, base_env, tmp_path,
                                                                                fault_server, args, stdin, plugin):
    env = dict(base_env, LICHHOOK_DEBUG="1")
    if plugin:
        folder = tmp_path / "plugins"
        folder.mkdir()
        (folder / "kiro.py").write_text(textwrap.dedent("""
            from lichhook import hookimpl

            class Kiro:
                provider = "kiro"
                verdict = ""
                sample = {"kiro_session": "k-0"}

                def session_id(self, payload, environ):
                    return payload.get("kiro_session")

            @hookimpl
            def lichhook_adapters():
                return [Kiro()]
        """), encoding="utf-8")
        env["LICHHOOK_PLUGIN_DIR"] = str(folder)
    server = fault_server()
    env.update(lich_env_for(server))
    outcomes = []
    for archive in ("hooks.pyz", "lichhook.pyz"):
        done = subprocess.run([sys.executable, str(copy_folder / archive), *args], input=stdin, env=env,
                              capture_output=True, timeout=60)
        path = str(copy_folder / archive).encode()
        outcomes.append((done.returncode, done.stdout.replace(path, b"ARCHIVE"), done.stderr.replace(path, b"ARCHIVE")))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] in (0, 1), outcomes[0]
