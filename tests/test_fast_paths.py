"""The shortcuts the hot paths take give the results the long way would."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from importlib import import_module

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lichhook import fastjson
from lichhook.adapter import SUBCOMMANDS, provider_id_ok
from lichhook.adapters import BUILTIN, VERDICTS

QUICK = settings(max_examples=200, deadline=None)


@pytest.mark.parametrize("provider", sorted(BUILTIN))
def test_verdicts_table_matches_each_adapter(provider):
    adapter = import_module(f"lichhook.adapters.{BUILTIN[provider]}").ADAPTER
    assert VERDICTS.get(provider, "") == (adapter.verdict or "")
    # The report path skips the provider-id check for built-ins: they must pass it.
    assert provider_id_ok(provider) and provider not in SUBCOMMANDS


def test_verdicts_table_names_only_builtins():
    assert set(VERDICTS) <= set(BUILTIN)


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
)


@QUICK
@given(texts)
def test_loads_is_json_loads(text):
    assert outcome(fastjson.loads, text) == outcome(json.loads, text)


@pytest.mark.parametrize("text", ["", "  ", "[1,", '{"a":1} x', "\ufeff{}", "NaN", "-Infinity", '"\x01"',
                                  '{"a":"\\ud800"}', "[" * 5000 + "]" * 5000, "1e999", '{"a":1,"a":2}'])
def test_loads_edge_cases(text):
    assert outcome(fastjson.loads, text) == outcome(json.loads, text)


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


# --- what each path imports, and how it exits -----------------------------------------------

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


HEAVY = {"json", "re", "typing", "enum", "pluggy", "platformdirs", "importlib.metadata", "http.client",
         "socket", "email", "logging", "subprocess", "argparse", "encodings.utf_8_sig", "lichhook.host"}


def test_no_op_loads_no_adapter_and_nothing_heavy(pyz, base_env):
    loaded = modules_loaded(pyz, base_env, "antigravity", stdin=b'{"conversationId": "x"}')
    assert not loaded & HEAVY
    assert "lichhook.adapter" not in loaded and "lichhook.adapters.antigravity" not in loaded
    assert "__future__" not in loaded


def test_report_loads_nothing_heavy(pyz, base_env, fault_server):
    from testkit.environment import lich_env

    server = fault_server()
    env = dict(base_env, **lich_env(server))
    loaded = modules_loaded(pyz, env, "claude", stdin=b'{"session_id": "abc"}')
    assert len(server.requests) == 1
    assert not loaded & HEAVY


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
