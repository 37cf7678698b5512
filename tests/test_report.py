"""The session-start report, through the built archive, against a real loopback server."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.parse
from importlib import import_module

import pytest

from lichhook.adapter import provider_id_ok
from lichhook.adapters import BY_PROVIDER, load
from lichhook.cli import WORDS
from lichhook.contracts import RELEASE
from lichhook.hook import Debug, Hook
from testkit.environment import lich_env

# provider -> (payload on stdin, id lich must receive, stdout verdict)
CASES = {
    "claude": ({"session_id": "9f1c7c1e-8f2a-4c3b-9d5e-2a7b6c4d1e05", "transcript_path": "/t.jsonl",
                "cwd": "/p", "hook_event_name": "SessionStart", "source": "clear"},
               "9f1c7c1e-8f2a-4c3b-9d5e-2a7b6c4d1e05", ""),
    "codex": ({"session_id": "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01", "transcript_path": None, "cwd": "/p",
               "hook_event_name": "SessionStart", "model": "gpt-5-codex", "source": "resume"},
              "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01", ""),
    "antigravity": ({"conversationId": "7bb32ee5-e8e3-42cd-a13c-849723bc4e57", "workspacePaths": [],
                     "transcriptPath": "/x", "invocationNum": 3},
                    "7bb32ee5-e8e3-42cd-a13c-849723bc4e57", "{}"),
    "crush": ({"event": "PreToolUse", "session_id": "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0", "cwd": "/p",
               "tool_name": "bash", "tool_input": {"command": "ls"}},
              "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0", ""),
    "opencode": ({"type": "session.created", "properties": {"sessionID": "ses_011856954ffe5NEMhsYeTuWykR",
                  "info": {"id": "ses_011856954ffe5NEMhsYeTuWykR", "title": "New session"}}},
                 "ses_011856954ffe5NEMhsYeTuWykR", ""),
    "omp": ({"type": "session_switch", "session_id": "019ffb38-ceab-7000-afae-20b8eae145d8"},
            "019ffb38-ceab-7000-afae-20b8eae145d8", ""),
}


def parse_request(raw: bytes) -> tuple[str, dict, bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return lines[0], headers, body


@pytest.mark.parametrize("provider", sorted(CASES))
def test_each_adapter_reports_to_lich(run, standin, provider):
    payload, expected_id, verdict = CASES[provider]
    done = run(provider, stdin=json.dumps(payload), env=lich_env(standin))
    assert done.returncode == 0
    assert done.stdout.decode() == verdict
    assert done.stderr == b""
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 204, report.verdict
    assert report.accepted == {"session_id": "lich-s1", "provider_session_id": expected_id, "provider": provider}
    assert json.loads(report.body) == report.accepted  # exactly the three keys, nothing deprecated
    assert b" " not in report.body  # compact JSON, like lich's own clients


def test_request_line_headers_and_token(run, fault_server):
    server = fault_server("status", 204)
    token = "a&b=c #d é+/?"
    payload, sid, _ = CASES["codex"]
    done = run("codex", stdin=json.dumps(payload), env=lich_env(server, token=token))
    assert done.returncode == 0 and done.stdout == b""
    (raw,) = server.requests
    first, headers, body = parse_request(raw)
    method, target, version = first.split(" ")
    assert (method, version) == ("POST", "HTTP/1.1")
    path, _, query = target.partition("?")
    assert path == "/session-start"
    assert urllib.parse.parse_qs(query) == {"token": [token]}
    assert headers["content-type"] == "application/json"
    assert headers["x-lich-plugin"] == RELEASE
    assert int(headers["content-length"]) == len(body)
    assert json.loads(body) == {"session_id": "lich-s1", "provider_session_id": sid, "provider": "codex"}


def test_no_argument_means_claude(run, standin):
    done = run(stdin=json.dumps({"session_id": "abc-1"}), env=lich_env(standin))
    assert done.returncode == 0 and done.stdout == b""
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider"] == "claude"


@pytest.mark.parametrize("provider", ["aider", "Claude", "../x", "x" * 40])
def test_unknown_provider_sends_nothing(run, fault_server, provider):
    server = fault_server()
    done = run(provider, stdin=json.dumps({"session_id": "abc"}), env=lich_env(server))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert server.requests == []


@pytest.mark.parametrize("missing", [
    {"LICH_PORT": None}, {"LICH_TOKEN": None}, {"LICH_SESSION_ID": None},
    {"LICH_SESSION_ID": ""}, {"LICH_TOKEN": "  "}, {"LICH_PORT": ""},
    {"LICH_PORT": "0"}, {"LICH_PORT": "65536"}, {"LICH_PORT": "-1"}, {"LICH_PORT": "80a"}, {"LICH_PORT": " 8080 "},
])
@pytest.mark.parametrize("provider", ["claude", "antigravity"])
def test_outside_lich_sends_nothing_but_prints_the_verdict(run, fault_server, base_env, missing, provider):
    server = fault_server()
    env = lich_env(server)
    env.update({k: v for k, v in missing.items() if v is not None})
    full = dict(base_env, **env)
    for k, v in missing.items():
        if v is None:
            full.pop(k)
    run.env = full
    payload, _, verdict = CASES[provider]
    done = run(provider, stdin=json.dumps(payload))
    assert (done.returncode, done.stdout.decode(), done.stderr) == (0, verdict, b"")
    assert server.requests == []


@pytest.mark.parametrize("provider,payload", [
    ("claude", {"session_id": ""}),
    ("claude", {"session_id": 42}),
    ("claude", {"session_id": None}),
    ("claude", {"session_id": "../../x"}),
    ("claude", {"session_id": "a/b"}),
    ("claude", {"session_id": "a\\b"}),
    ("claude", {"session_id": "a*"}),
    ("claude", {"session_id": "a?"}),
    ("claude", {"session_id": "[a]"}),
    ("claude", {"session_id": "a..b"}),
    ("claude", {"session_id": "a\nb"}),
    ("claude", {"session_id": "a\x7fb"}),
    ("claude", {"session_id": "x" * 5000}),  # the body would exceed lich's 4 KiB
    ("claude", {"session_id": "a\ud800b"}),  # sent as an escape, lich would keep U+FFFD
    ("claude", {"other": "field"}),
    ("antigravity", {"session_id": "not-the-antigravity-field"}),
    ("opencode", {"type": "session.updated", "properties": {"info": {"id": "ses_1"}}}),
    ("opencode", {"type": "session.created", "properties": {"info": {"id": "ses_child", "parentID": "ses_parent"}}}),
    ("omp", {"type": "turn_start", "session_id": "abc"}),
])
def test_ids_lich_would_refuse_are_not_sent(run, fault_server, provider, payload):
    server = fault_server()
    done = run(provider, stdin=json.dumps(payload), env=lich_env(server))
    assert (done.returncode, done.stdout.decode(), done.stderr) == (0, CASES[provider][2], b"")
    assert server.requests == []


def test_id_with_quote_and_unicode_is_escaped(run, standin):
    sid = 'ab"c\'d é ✓ <x>'
    done = run("claude", stdin=json.dumps({"session_id": sid}), env=lich_env(standin))
    assert done.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 204 and report.accepted["provider_session_id"] == sid


def test_crush_falls_back_to_its_environment(run, standin):
    env = dict(lich_env(standin), CRUSH_SESSION_ID="6f1c0000-0000-4000-8000-000000000001")
    done = run("crush", stdin=json.dumps({"event": "PreToolUse", "tool_name": "bash"}), env=env)
    assert done.returncode == 0 and done.stdout == b""
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "6f1c0000-0000-4000-8000-000000000001"


def test_payload_id_wins_over_crush_environment(run, standin):
    env = dict(lich_env(standin), CRUSH_SESSION_ID="from-env")
    run("crush", stdin=json.dumps({"session_id": "from-payload"}), env=env)
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "from-payload"


@pytest.mark.parametrize("stdin", [
    b"", b"   \n", b"null", b"[1,2]", b"42", b'"text"', b"{", b"\xff\xfe{}", b'{"session_id": "abc"',
])
def test_bad_stdin_sends_nothing(run, fault_server, stdin):
    server = fault_server()
    done = run("antigravity", stdin=stdin, env=lich_env(server))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"{}", b"")
    assert server.requests == []


def test_a_lone_surrogate_is_named_with_debug(run, fault_server):
    server = fault_server()
    done = run("codex", stdin=b'{"session_id": "x\\udc80"}', env=dict(lich_env(server), LICHHOOK_DEBUG="1"))
    assert done.returncode == 0 and server.requests == []
    assert b"not valid Unicode (lone surrogate U+DC80)" in done.stderr


def test_an_integer_longer_than_int_takes_is_still_json(run, standin):
    # Python refuses int() of more than 4300 digits (3.11+, and security releases of 3.9 and 3.10).
    stdin = b'{"session_id": "big-int-1", "size": ' + b"9" * 5000 + b', "neg": -' + b"1" * 4400 + b"}"
    done = run("claude", stdin=stdin, env=lich_env(standin))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "big-int-1"


def test_utf8_bom_is_accepted(run, standin):
    done = run("claude", stdin=b"\xef\xbb\xbf" + json.dumps({"session_id": "bom-1"}).encode(), env=lich_env(standin))
    assert done.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "bom-1"


def test_stdin_over_one_mebibyte_sends_nothing(run, fault_server):
    server = fault_server()
    padding = "x" * (1 << 20)
    done = run("claude", stdin=json.dumps({"session_id": "big", "pad": padding}), env=lich_env(server))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert server.requests == []


def test_stdin_just_under_the_limit_is_read(run, standin):
    padding = "x" * ((1 << 20) - 100)
    done = run("claude", stdin=json.dumps({"session_id": "near-limit", "pad": padding}), env=lich_env(standin))
    assert done.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "near-limit"


def test_stdin_left_open_still_reports_what_was_written(pyz, base_env, standin):
    import subprocess
    import sys

    env = dict(base_env, **lich_env(standin))
    proc = subprocess.Popen([sys.executable, str(pyz), "claude"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(json.dumps({"session_id": "kept-open"}).encode())
        proc.stdin.flush()
        out, err = proc.stdout.read(), proc.stderr.read()  # EOF only once the hook exits
        assert proc.wait(timeout=10) == 0
    finally:
        proc.stdin.close()
        proc.kill()
    assert (out, err) == (b"", b"")
    (report,) = standin.wait_for(1, timeout=5)
    assert report.accepted["provider_session_id"] == "kept-open"


def test_debug_prints_one_line_per_decision_without_the_token(run, fault_server):
    env = dict(lich_env(fault_server("status", 204), token="SECRET-token-123"), LICHHOOK_DEBUG="1")
    done = run("claude", stdin=json.dumps({"session_id": "dbg-1"}), env=env)
    assert done.returncode == 0 and done.stdout == b""
    err = done.stderr.decode()
    assert "dbg-1" in err and "204" in err
    assert err.count("\n") == 1
    assert "SECRET" not in err
    done = run("claude", stdin=b"null", env=env)
    assert "not an object" in done.stderr.decode()


def test_lich_refusals_are_ignored(run, fault_server):
    for status in (400, 401, 500):
        server = fault_server("status", status)
        done = run("antigravity", stdin=json.dumps(CASES["antigravity"][0]), env=lich_env(server))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"{}", b"")
        assert len(server.requests) == 1


def test_proxy_variables_do_not_divert_the_report(run, standin, fault_server):
    proxy = fault_server("silent")
    url = f"http://127.0.0.1:{proxy.port}"
    env = dict(lich_env(standin), HTTP_PROXY=url, http_proxy=url, ALL_PROXY=url, all_proxy=url, NO_PROXY="")
    done = run("codex", stdin=json.dumps(CASES["codex"][0]), env=env)
    assert done.returncode == 0
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 204
    assert proxy.requests == []


# --- resolving a built-in adapter without the pluggy host ------------------------------------

def hook(provider, event=None, environ=None):
    return Hook(provider, event, {} if environ is None else environ, 0.0)


@pytest.mark.parametrize("provider", sorted(BY_PROVIDER))
def test_verdicts_table_matches_each_adapter(provider):
    adapter = load(provider)
    assert hook(provider).verdict() == BY_PROVIDER[provider].verdict() == (adapter.verdict or "")
    # The report path skips the provider-id check for built-ins: they must pass it.
    assert provider_id_ok(provider) and provider not in WORDS
    # Each event's verdict, from the descriptor without the adapter's module, is the adapter's.
    for event in list(BY_PROVIDER[provider].events) + ["permission.asked", "NoSuchEvent"]:
        assert hook(provider, event).verdict() == hook(provider, event).verdict(adapter), (provider, event)


def test_an_unknown_provider_has_no_verdict():
    assert hook("kiro").verdict() == hook("kiro", "Stop").verdict() == ""


@pytest.mark.parametrize("provider", sorted(BY_PROVIDER))
def test_fast_resolver_gives_the_hosts_adapter(provider, tmp_path):
    from lichhook.host import find_adapter

    run = hook(provider, environ={"LICHHOOK_PLUGIN_DIR": str(tmp_path)})
    assert run.unaided()
    fast = run.adapter()
    hosted = find_adapter(provider, run.environ, Debug({}))
    assert fast is hosted is run.adapter(unaided=False) is load(provider)
    assert fast.session_id(fast.sample, {}) == hosted.session_id(hosted.sample, {})


def test_the_host_decides_when_a_plugin_could_replace_a_built_in(tmp_path):
    (tmp_path / "anything.py").write_text("")
    assert not hook("claude", environ={"LICHHOOK_PLUGIN_DIR": str(tmp_path)}).unaided()
    assert not hook("claude", environ={"LICHHOOK_PLUGIN_DIR": "relative"}).unaided()
    assert not hook("kiro", environ={"LICHHOOK_PLUGIN_DIR": str(tmp_path / "none")}).unaided()


def test_fast_resolver_skips_pluggy(pyz, base_env, tmp_path):
    probe = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from lichhook.hook import Hook
        a = Hook("claude", None, {"LICHHOOK_PLUGIN_DIR": sys.argv[2]}, 0.0).adapter()
        print(a.provider, "pluggy" in sys.modules, "json" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", probe, str(pyz), str(tmp_path)], capture_output=True, env=base_env)
    assert done.stdout.decode().split() == ["claude", "False", "False"]
