"""The report path under server faults: lich down, failing, mute, slow, or a proxy in the way.

Every case runs the built archive as a harness would and holds it to the hook's rules:
exit 0, stdout exactly the adapter's verdict, silent stderr, and back within a hang guard
(the client bounds the exchange to about 1 s; the guard only catches a hang).
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from testkit.environment import lich_env
from testkit.servers import free_port

# A socket's time-out is TimeoutError from 3.10 on; 3.9 names it socket.timeout.
TIMEOUT_NAME = type(socket.timeout()).__name__.encode()

HANG_GUARD = 10  # subprocess timeout: a hook that hangs fails here, not the whole run
RETURN_GUARD = 5.0  # far above the 1 s bound plus start-up; catches a missing bound only

# provider -> (payload, exact stdout the harness must see)
CASES = {
    "claude": ({"session_id": "9f1c7c1e-8f2a-4c3b", "hook_event_name": "SessionStart"}, b""),
    "antigravity": ({"conversationId": "a1604c72-3091-449e"}, b"{}"),
    "crush": ({"session_id": "db3492a0", "tool_name": "bash"}, b""),
}


def timed(run, provider: str, env: dict, debug: bool = False):
    payload, _ = CASES[provider]
    if debug:
        env = dict(env, LICHHOOK_DEBUG="1")
    start = time.monotonic()
    result = run(provider, stdin=json.dumps(payload), env=env, timeout=HANG_GUARD)
    return result, time.monotonic() - start


def assert_hook_rules(result, provider: str, elapsed: float, debug: bool = False) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stdout == CASES[provider][1]
    if not debug:
        assert result.stderr == b""
    assert b"Traceback" not in result.stderr
    assert elapsed < RETURN_GUARD, f"hook took {elapsed:.1f}s: the exchange is not bounded"


@pytest.mark.parametrize("provider", sorted(CASES))
def test_port_refused(run, provider):
    env = {"LICH_PORT": str(free_port()), "LICH_TOKEN": "tok", "LICH_SESSION_ID": "lich-s1"}
    result, elapsed = timed(run, provider, env)
    assert_hook_rules(result, provider, elapsed)


def test_port_refused_is_named_with_debug(run):
    env = {"LICH_PORT": str(free_port()), "LICH_TOKEN": "tok", "LICH_SESSION_ID": "lich-s1"}
    result, elapsed = timed(run, "claude", env, debug=True)
    assert_hook_rules(result, "claude", elapsed, debug=True)
    assert b"no answer" in result.stderr and b"ConnectionRefused" in result.stderr


@pytest.mark.parametrize("status", [500, 401, 400])
@pytest.mark.parametrize("provider", sorted(CASES))
def test_lich_answers_an_error(run, fault_server, provider, status):
    server = fault_server("status", status=status)
    result, elapsed = timed(run, provider, lich_env(server))
    assert_hook_rules(result, provider, elapsed)
    assert len(server.requests) == 1  # the report really went out and was refused


@pytest.mark.parametrize("status", [500, 401, 400])
def test_error_status_is_visible_with_debug(run, fault_server, status):
    server = fault_server("status", status=status)
    result, elapsed = timed(run, "antigravity", lich_env(server), debug=True)
    assert_hook_rules(result, "antigravity", elapsed, debug=True)
    assert f"lich answered {status}".encode() in result.stderr


@pytest.mark.parametrize("provider", ["antigravity", "claude"])
def test_lich_accepts_and_never_answers(run, fault_server, provider):
    server = fault_server("silent")
    result, elapsed = timed(run, provider, lich_env(server))
    assert_hook_rules(result, provider, elapsed)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", ["antigravity", "claude"])
def test_lich_answers_past_the_bound(run, fault_server, provider):
    server = fault_server("slow", status=204, delay=3.0)
    result, elapsed = timed(run, provider, lich_env(server), debug=True)
    assert_hook_rules(result, provider, elapsed, debug=True)
    assert len(server.requests) == 1
    # The hook gave up waiting rather than reading the late 204.
    assert b"no answer" in result.stderr and b"answered 204" not in result.stderr


def test_a_silent_listener_that_never_accepts(run):
    """A socket that listens but whose backlog is never drained: connect may succeed or
    stall, the answer never comes; the hook still returns."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(0)
    try:
        env = {"LICH_PORT": str(s.getsockname()[1]), "LICH_TOKEN": "tok", "LICH_SESSION_ID": "lich-s1"}
        result, elapsed = timed(run, "antigravity", env)
        assert_hook_rules(result, "antigravity", elapsed)
    finally:
        s.close()


PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


@pytest.mark.parametrize("provider", sorted(CASES))
def test_a_black_hole_proxy_is_bypassed(run, standin, fault_server, provider):
    proxy = fault_server("silent")
    url = f"http://127.0.0.1:{proxy.port}"
    env = dict(lich_env(standin), **{v: url for v in PROXY_VARIABLES}, NO_PROXY="", no_proxy="")
    result, elapsed = timed(run, provider, env)
    assert_hook_rules(result, provider, elapsed)
    reports = standin.wait_for(1, timeout=5)
    assert [r.status for r in reports] == [204]
    assert reports[0].accepted["provider_session_id"] == CASES[provider][0].get(
        "session_id", CASES[provider][0].get("conversationId"))
    assert proxy.requests == []


def test_a_socks_proxy_is_bypassed(run, standin, fault_server):
    proxy = fault_server("silent")
    env = dict(lich_env(standin), ALL_PROXY=f"socks5://127.0.0.1:{proxy.port}",
               all_proxy=f"socks5h://127.0.0.1:{proxy.port}")
    result, elapsed = timed(run, "claude", env)
    assert_hook_rules(result, "claude", elapsed)
    assert [r.status for r in standin.wait_for(1, timeout=5)] == [204]
    assert proxy.requests == []


def test_a_fault_then_recovery_sends_each_report_once(run, fault_server, standin):
    """A failed report is not retried or queued: the next run sends its own, once."""
    down = fault_server("status", status=500)
    timed(run, "claude", lich_env(down))
    result, elapsed = timed(run, "claude", lich_env(standin))
    assert_hook_rules(result, "claude", elapsed)
    assert len(down.requests) == 1
    assert [r.status for r in standin.wait_for(1, timeout=5)] == [204]
    time.sleep(0.2)
    assert len(standin.reports) == 1


# Both bounds used to run one after the other: 1 s for stdin, then 1 s for lich. One
# deadline now covers both; this is far under the 2 s they took together, and far over
# the 1 s the deadline gives, so only a second bound would cross it.
ONE_DEADLINE_GUARD = 1.8


@pytest.mark.parametrize("provider", ["antigravity", "claude"])
def test_stdin_left_open_and_lich_silent_share_one_deadline(pyz, base_env, fault_server, provider):
    import subprocess
    import sys

    server = fault_server("silent")
    env = dict(base_env, **lich_env(server), LICHHOOK_DEBUG="1")
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(pyz), provider], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(json.dumps(CASES[provider][0]).encode())
        proc.stdin.flush()  # and never closed while the hook runs
        out, err = proc.stdout.read(), proc.stderr.read()  # EOF only once the hook exits
        assert proc.wait(timeout=HANG_GUARD) == 0
        elapsed = time.monotonic() - start
    finally:
        proc.stdin.close()
        proc.kill()
    assert out == CASES[provider][1]
    assert len(server.requests) == 1
    assert b"no answer (%s" % TIMEOUT_NAME in err, err
    assert elapsed < ONE_DEADLINE_GUARD, f"stdin and lich took {elapsed:.2f}s: two bounds, not one"


def test_a_status_of_100000_digits_is_a_reply_without_a_status_not_a_failure(run, fault_server, home):
    # A status is three digits; anything longer is a bad reply, bounded like a missing one
    # (read at most 8 KiB of it), and no failure of the hook's to record.
    server = fault_server("status", status="9" * 100_000)  # type: ignore[arg-type]
    result, elapsed = timed(run, "antigravity", lich_env(server), debug=True)
    assert_hook_rules(result, "antigravity", elapsed, debug=True)
    assert b"lich answered without an HTTP status line" in result.stderr, result.stderr[-2000:]
    assert not (home / ".local" / "state" / "lichhook" / "failures.jsonl").exists()
