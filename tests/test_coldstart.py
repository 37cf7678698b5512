"""The cold-start layer (lichhook/coldstart/) gives what the plain way would, each hot
command imports only what its allow-list names, and only the hot set
(lichhook.hotset) is written in the cold-start style."""

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

from lichhook import coldstart
from lichhook import hotset as hot
from lichhook.coldstart import quickjson
from lichhook.jsonint import json_int

QUICK = settings(max_examples=200, deadline=None)
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="Windows asks platformdirs and reads stdin in a thread")


# --- folders: platformdirs without platformdirs -----------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="on Windows the folders follow the configs' home (test_paths.py)")
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


# --- quickjson against json ---------------------------------------------------------------

def outcome(fn, *args, **kwargs):
    try:
        value = fn(*args, **kwargs)
    except Exception as exc:  # the type and message must match json's own
        return ("raised", type(exc).__name__, str(exc))
    return ("value", canonical(value))


def canonical(value):
    """``value`` as a flat list of tokens, equal for equal parses (NaN != NaN, so it becomes
    "NaN"). Flat and built without recursion: json parses nesting deeper than the recursion
    limit (5000-deep arrays since 3.13), and the comparison must not fail where json did not."""
    tokens = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and math.isnan(item):
            tokens.append("NaN")
        elif isinstance(item, list):
            tokens.append(("list", len(item)))
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            tokens.append(("dict", len(item)))
            for key, member in reversed(list(item.items())):
                stack.append(member)
                stack.append(("key", key))
        elif isinstance(item, tuple):  # a key pushed above; json yields no tuples
            tokens.append(item)
        else:
            tokens.append((type(item).__name__, item))
    return tokens


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
    assert outcome(quickjson.loads, text) == outcome(json.loads, text)


@QUICK
@given(texts)
def test_loads_with_parse_int_is_json_loads_with_it(text):
    assert outcome(quickjson.loads, text, parse_int=json_int) == outcome(json.loads, text, parse_int=json_int)


@pytest.mark.parametrize("text", ["", "  ", "[1,", '{"a":1} x', "\ufeff{}", "NaN", "-Infinity", '"\x01"',
                                  '{"a":"\\ud800"}', "[" * 5000 + "]" * 5000, "1e999", '{"a":1,"a":2}',
                                  "1" * 4301, "-" + "9" * 5000])
def test_loads_edge_cases(text):
    assert outcome(quickjson.loads, text) == outcome(json.loads, text)
    assert outcome(quickjson.loads, text, parse_int=json_int) == outcome(json.loads, text, parse_int=json_int)


def test_loads_deep_nesting_raises_like_json():
    deep = "[" * 200_000
    assert outcome(quickjson.loads, deep)[:2] == outcome(json.loads, deep)[:2] == ("raised", "RecursionError")


@QUICK
@given(json_values | st.dictionaries(st.integers() | st.booleans() | st.none(), json_values, max_size=3),
       st.sampled_from([None, (", ", ": "), (",", ":")]), st.booleans(), st.sampled_from([None, None, 0, 2, 4]))
def test_dumps_is_json_dumps(value, separators, ensure_ascii, indent):
    assert quickjson.dumps(value, separators=separators, ensure_ascii=ensure_ascii, indent=indent) == json.dumps(
        value, separators=separators, ensure_ascii=ensure_ascii, indent=indent)


@pytest.mark.parametrize("value", [{"a": object()}, {(1,): 2}, [1, {1, 2}]])
def test_dumps_refuses_like_json(value):
    assert outcome(quickjson.dumps, value) == outcome(json.dumps, value)


@pytest.mark.parametrize("indent", [None, 2])
def test_dumps_circular_raises_like_json(indent):
    loop: list = []
    loop.append(loop)
    assert outcome(quickjson.dumps, loop, indent=indent) == outcome(json.dumps, loop, indent=indent)


@pytest.mark.parametrize("value", [{"n": float("nan")}, [float("inf")], {1: "int key"}, {None: 1, 2.5: 2},
                                   [True, False, None, 0, -1, 1.25], {"deep": [[[[[[{"x": ()}]]]]]]},
                                   [[[[[[[[[[[1]]]]]]]]]]] * 2])
def test_indented_dumps_match_json(value):
    for indent in (0, 2):
        for ensure_ascii in (True, False):
            assert quickjson.dumps(value, indent=indent, ensure_ascii=ensure_ascii) == json.dumps(
                value, indent=indent, ensure_ascii=ensure_ascii)




# Each way quickjson hands a text or a value to json, made to happen: the result is
# json's, and json was imported for it.
HANDED_OVER = {
    "NaN": "[NaN]",
    "a BOM": '\ufeff{"a": 1}',
    "an unknown escape": '"\\x"',
    "a control character": '"a\tb"',
    "a number json cannot take": "[" + "7" * 5000 + "]",
    "nesting deeper than the limit": "[" * 150 + "]" * 150,
    "many strings": json.dumps({f"k{i}": "v" for i in range(quickjson.MAX_STEPS)}),
    "trailing data": '{"a": 1} x',
}


@pytest.mark.parametrize("why", sorted(HANDED_OVER))
def test_loads_hands_what_it_cannot_tell_to_json(why):
    text = HANDED_OVER[why]
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); sys.modules.pop('json'); "
             "from lichhook.coldstart import quickjson\n"
             "try:\n    value = repr(quickjson.loads(sys.argv[2]))\n"
             "except Exception as exc:\n    value = type(exc).__name__ + ': ' + str(exc)\n"
             "print('json' in sys.modules); print(value)")
    from testkit.constants import ROOT

    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(ROOT), text], capture_output=True, check=True,
                          timeout=60)
    imported, value = done.stdout.decode("utf-8", "replace").split("\n", 1)
    assert imported == "True", why
    expected = outcome(json.loads, text)
    assert outcome(quickjson.loads, text) == expected
    if expected[0] == "raised":
        assert value.startswith(expected[1]), (why, value)


@pytest.mark.parametrize("value", [{"n": float("nan")}, {1: "int key"}, [1, {1, 2}], [[[[1]]]] * 2])
def test_dumps_hands_what_it_cannot_write_to_json(value, monkeypatch):
    calls = []
    real = json.dumps
    monkeypatch.setattr(json, "dumps", lambda *a, **kw: calls.append(a) or real(*a, **kw))
    assert outcome(quickjson.dumps, value) == outcome(real, value)
    assert calls or value == [[[[1]]]] * 2  # plain data is written without json


def test_a_plain_payload_and_body_need_no_json():
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from lichhook.coldstart import quickjson; "
             "v = quickjson.loads('{\"session_id\": \"s\\u00e9\", \"n\": [1, 2.5, true, null]}'); "
             "print(quickjson.dumps(v, separators=(',', ':')), quickjson.dumps(v, indent=2, ensure_ascii=False) != '', "
             "'json' in sys.modules, 're' in sys.modules)")
    from testkit.constants import ROOT

    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(ROOT)], capture_output=True, check=True,
                          timeout=60)
    assert done.stdout.decode().split() == ['{"session_id":"s\\u00e9","n":[1,2.5,true,null]}', "True", "False", "False"]


# --- integers longer than int() takes ----------------------------------------------------

def test_json_int_keeps_every_digit():
    digits = "12345678901234567890" * 300  # 6000 digits: more than int() takes
    assert json_int(digits) == Decimal(digits) and str(json_int(digits)) == digits
    assert json_int("-42") == -42 and type(json_int("-42")) is int
    assert json.loads("[" + digits + "]", parse_int=json_int) == [Decimal(digits)]


# --- string annotations without __future__ --------------------------------------------------

# Hot modules a hook imports only off its usual path (an integer longer than int() takes;
# Windows' folder permissions), which may import __future__.
# (contracts.inputs: named by annotations alone, never imported when a hook runs;
# failures: imported only when a hook has failed)
OFF_THE_USUAL_PATH = {"lichhook.jsonint", "lichhook.winacl", "lichhook.contracts.gojson",
                      "lichhook.contracts.release", "lichhook.contracts.inputs", "lichhook.failures"}


def hot_modules() -> list:
    """Every module of the hot set, as this checkout holds it."""
    import pkgutil

    import lichhook
    import lichhook.adapters

    names = {"lichhook"} | {m.name for m in pkgutil.walk_packages(lichhook.__path__, "lichhook.")
                            if not m.name.startswith("lichhook.mcp")}
    names |= {m.name for m in pkgutil.iter_modules(lichhook.adapters.__path__, "lichhook.adapters.")}
    return sorted(n for n in names if hot.is_hot(n) and not n.endswith("__main__"))


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
@pytest.mark.parametrize("name", hot_modules())
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
    assert checked or not functions or name.startswith("lichhook.adapters."), f"{name} has no annotated functions"


@pytest.mark.parametrize("name", sorted(set(hot_modules()) - OFF_THE_USUAL_PATH))
def test_a_hot_module_has_no_future_import(name):
    # A `from __future__ import ...` leaves its feature among the module's names.
    features = [v for v in vars(import_module(name)).values() if isinstance(v, __future__._Feature)]
    assert features == [], (f"{name} imports from __future__, which a hook's path may not: see the hot style in "
                            "lichhook/hotset.py's docstring")


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


def test_code_that_could_register_an_exit_handler_asks_for_the_orderly_exit(pyz, base_env):
    # atexit not imported at all means no handler; once anything imports it, the orderly
    # exit runs whatever it registered.
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from lichhook.coldstart import only_own_code_ran as own; "
             "a = own(); import atexit; b = own(); print(a, b)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(pyz)], env=base_env, capture_output=True,
                          check=True, timeout=60)
    assert done.stdout.split()[:2] == [b"True", b"False"]


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
NO_OP = CORE | {"lichhook.report", "lichhook.hook", "lichhook.lichenv", "lichhook.adapters"}
# What every report shares: reading stdin, an adapter, the transport.
SENDING = NO_OP | {"select", "_socket", "lichhook.client", "lichhook.selfcmd", "lichhook.coldstart.quickjson", "lichhook.payload",
                   "lichhook.adapters._fields", "lichhook.adapter", "lichhook.contracts"}
REPORT = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_start"}
STATE = SENDING | {"lichhook.adapters.claude", "lichhook.contracts.session_state"}
# After a tool: busy, touched, and the title read from the transcript and recorded (a
# write, atomic, the first time only: that is where diskio comes in).
AFTER_TOOL = STATE | {"lichhook.contracts.session_touched", "lichhook.contracts.session_title", "lichhook.titles",
                      "lichhook.transcripts", "lichhook.diskio", "lichhook.trust"}
CLAUDE_CODE = CORE | {"select", "lichhook.coldstart.quickjson", "lichhook.waits.hooks", "lichhook.waits.hooks.text",
                      "lichhook.waits", "lichhook.waits.view", "lichhook.diskio", "lichhook.trust",
                      "lichhook.ids", "lichhook.payload", "lichhook.selfcmd"}
WAIT = CORE | {"fcntl", "lichhook.coldstart.quickjson", "lichhook.diskio", "lichhook.ids",
               "lichhook.waits", "lichhook.waits.api", "lichhook.waits.cli", "lichhook.waits.folder",
               "lichhook.waits.lock", "lichhook.waits.names", "lichhook.waits.rules", "lichhook.waits.view",
               "lichhook.trust"}
ALLOWED = {
    "no-op": NO_OP,
    "no-op: event": NO_OP,
    "report": REPORT,
    "event: busy": STATE,
    "event: tool": STATE,
    "event: after a tool": AFTER_TOOL,
    "event: opencode": STATE - {"lichhook.adapters.claude"} | {"lichhook.adapters.opencode"},
    "session-start": CLAUDE_CODE | {"lichhook.waits.hooks.start"},
    "stop": CLAUDE_CODE | {"lichhook.waits.hooks.stop"},
    "wait add": WAIT | {"lichhook.waits.fields"},  # list takes no argument to check
    "wait list": WAIT,
}
# Never on a hot path, whatever the allow-lists say.
HEAVY = {"json", "re", "enum", "typing", "pluggy", "platformdirs", "importlib.metadata", "http.client", "socket", "email", "logging",
         "subprocess", "argparse", "encodings.utf_8_sig", "lichhook.host", "decimal", "site", "threading",
         "signal", "__future__", "zipfile", "lichhook.archive", "lichhook.hotset"}


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
    assert [m for m in loaded if m.startswith("lichhook") and not hot.is_hot(m)] == [], \
        f"{command} imports modules outside the hot set (lichhook.hotset)"
    if server is not None:
        assert len(server.requests) == (3 if command == "event: after a tool" else 1)
    if command.startswith("no-op"):
        assert "lichhook.adapters.antigravity" not in loaded and "__future__" not in loaded
    if command in ("report", "event: busy", "event: tool", "event: opencode"):
        assert "__future__" not in loaded


# --- the hooks archive: what hot commands import, the rest beside it ---------------------------


def test_every_lichhook_module_an_allow_list_names_is_in_the_hot_set():
    for command, allowed in ALLOWED.items():
        assert [n for n in sorted(allowed) if n.startswith("lichhook") and not hot.is_hot(n)] == [], command


def test_the_hooks_archive_holds_the_hot_set_as_the_complete_archive_holds_it(pyz):
    from pathlib import Path

    from lichhook.archive import bytecode_magic, bytecode_of, members

    data = Path(pyz).read_bytes()
    shebang, files = members(hot.hooks_archive(data))
    complete_shebang, complete = members(data)
    assert shebang == complete_shebang
    assert files == {name: body for name, body in complete.items() if hot.is_hot_member(name)}
    assert {"__main__.py", "__main__.pyc", "lichhook/__init__.pyc", "lichhook/cli.pyc", "lichhook/waits/api.pyc",
            "lichhook/adapters/claude.pyc", "lichhook/contracts/session_state.pyc"} <= set(files)
    assert not [n for n in files if n.startswith(("lichhook/install/", "lichhook/mcp/", "pluggy/", "tomlkit/",
                                                    "tomli/"))]
    assert not [n for n in files if n.startswith("lichhook/hotset.")]  # install reads it, hooks do not
    assert bytecode_of(files) == bytecode_of(complete) is not None
    assert bytecode_magic(pyz) == bytecode_of(files)
    assert hot.hooks_archive(data) == hot.hooks_archive(data)  # its bytes follow from the complete archive's


def test_a_hot_module_is_top_level_or_in_a_package_hot_as_a_whole():
    # A hooks run finds a package's modules in the hooks archive alone.
    assert [m for m in hot.HOT_MODULES if m.count(".") > 1] == []
    assert [m for m in hot.HOT_MODULES if m != "lichhook" and not os.path.isfile(
        os.path.join(os.path.dirname(hot.__file__), m.split(".")[1] + ".py"))] == []


def test_hot_members_are_named_by_their_modules():
    assert [hot.module_of(m) for m in ("lichhook/waits/__init__.pyc", "lichhook/cli.py", "__main__.pyc",
                                       "lichhook/js/omp/extension.js")] == \
        ["lichhook.waits", "lichhook.cli", "__main__", "lichhook.js.omp"]
    assert hot.is_hot_member("lichhook/adapters/claude.py") and hot.is_hot_member("lichhook/__init__.pyc")
    assert not hot.is_hot_member("lichhook/install/cli.pyc") and not hot.is_hot_member("lichhookx/cli.py")
    assert not hot.is_hot("lichhook.waitsx") and hot.is_hot("lichhook.waits.view")


@pytest.fixture
def copy_folder(pyz, tmp_path):
    """A folder as install makes it: the complete archive and its hooks archive."""
    from pathlib import Path

    folder = tmp_path / "data" / "py3.x"
    folder.mkdir(parents=True)
    (folder / "lichhook.pyz").write_bytes(Path(pyz).read_bytes())
    (folder / "hooks.pyz").write_bytes(hot.hooks_archive(Path(pyz).read_bytes()))
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
        said = [done.stdout, done.stderr]
        for name in ("hooks.pyz", "lichhook.pyz"):  # doctor names the archive to run it again with
            said = [text.replace(str(copy_folder / name).encode(), b"ARCHIVE") for text in said]
        outcomes.append((done.returncode, *said))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] in (0, 1), outcomes[0]


# --- when a shortcut cannot serve, the plain way does ------------------------------------------


@POSIX_ONLY
def test_a_hooks_archive_with_bytecode_for_another_python_runs_from_its_sources(copy_folder, base_env, fault_server):
    from lichhook.archive import archive_bytes, members, stamp

    hooks = copy_folder / "hooks.pyz"
    shebang, files = members(hooks.read_bytes())
    other = (3413).to_bytes(2, "little") + b"\r\n"  # no Python lichhook supports
    files = {name: other + body[4:] if name.endswith(".pyc") else body for name, body in files.items()}
    hooks.write_bytes(archive_bytes(files, shebang, stamp(hooks.read_bytes())))
    server = fault_server()
    env = dict(base_env, LICHHOOK_NODE="node", **lich_env_for(server))
    loaded = modules_loaded(hooks, env, "claude", stdin=b'{"session_id": "abc"}', files=True)
    assert [f for f in loaded if f.endswith("report.py")] and not [f for f in loaded if f.endswith(".pyc")]
    assert len(server.requests) == 1


@POSIX_ONLY
def test_a_hooks_archive_alone_still_reports(copy_folder, base_env, fault_server):
    # The complete archive beside it is only for what hooks do not import.
    (copy_folder / "lichhook.pyz").unlink()
    server = fault_server()
    env = dict(base_env, LICHHOOK_NODE="node", **lich_env_for(server))
    done = subprocess.run([sys.executable, "-I", "-S", str(copy_folder / "hooks.pyz"), "claude"],
                          input=b'{"session_id": "abc"}', env=env, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert len(server.requests) == 1


# --- the cold-start style belongs to the hot set alone -------------------------------------------


def source_modules() -> list:
    """(module, file) for every module of lichhook and its adapters in this checkout."""
    from testkit.constants import ROOT

    found = []
    for folder, prefix in ((ROOT / "lichhook", "lichhook"), (ROOT / "adapters", "lichhook.adapters")):
        for path in sorted(folder.rglob("*.py")):
            parts = [prefix, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found.append((".".join(parts), path))
    return found


def cold_start_style(module: str, path) -> list:
    """Where ``path`` uses the cold-start style: an import inside a function, a
    TYPE_CHECKING guard, an annotation spelt as a string."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "TYPE_CHECKING":
            found.append(f"{module}:{node.lineno}: TYPE_CHECKING")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.append(f"{module}:{inner.lineno}: an import inside {node.name}()")
            arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs + [node.args.vararg,
                                                                                         node.args.kwarg]
            annotations = [a.annotation for a in arguments if a is not None] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        else:
            continue
        for annotation in annotations:
            for part in ast.walk(annotation) if annotation is not None else ():
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.append(f"{module}:{part.lineno}: the annotation {part.value!r} spelt as a string")
    return found


def test_only_the_hot_set_is_written_in_the_cold_start_style():
    modules = source_modules()
    assert len(modules) > 80 and len([m for m, _ in modules if hot.is_hot(m)]) > 30
    cold = [(module, path) for module, path in modules if not hot.is_hot(module)]
    assert [place for module, path in cold for place in cold_start_style(module, path)] == []


def test_the_style_check_finds_each_cold_start_habit(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent('''
        TYPE_CHECKING = False
        if TYPE_CHECKING:
            from typing import List


        def f(x: "List[int]") -> int:
            import json

            return len(json.dumps(x))
    '''), encoding="utf-8")
    assert sorted(place.split(": ", 1)[1] for place in cold_start_style("probe", probe)) == [
        "TYPE_CHECKING", "TYPE_CHECKING", "an import inside f()", "the annotation 'List[int]' spelt as a string"]
