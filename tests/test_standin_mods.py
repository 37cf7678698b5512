"""The stand-in's mod endpoints (``listen``, ``demo``): lich's long poll, acks, usage,
status and answer, with lich's rules; a person queues a command by typing it at ``listen``."""

from __future__ import annotations

import json
import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from lichhook.standin import StandIn
from lichhook.standin_mods import GRACE
from testkit.servers import post

TOKEN = "tk-mods"


def get(port: int, path: str, session: str | None = "s1", token: str = TOKEN, timeout: float = 40):
    """One GET as a mod sends it: (status, body)."""
    query = f"?token={token}" + (f"&session_id={session}" if session is not None else "")
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}{query}", headers={"X-Lich-Plugin": "0.20.0"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def in_background(fn, *args) -> "queue.Queue":
    out: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: out.put(fn(*args)), daemon=True).start()
    return out


def ack(port: int, **fields) -> tuple:
    return post(port, "/mod/acks", TOKEN, json.dumps(dict({"session_id": "s1"}, **fields)).encode())


def test_listen_queues_what_a_person_types_for_the_mod_polling_it(pyz, base_env):
    proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--port", "0", "--token", TOKEN, "--session", "s1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base_env,
                            text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()

    said: list = []  # everything listen printed so far: its threads may print in either order

    def until(pattern: str) -> str:
        deadline = time.monotonic() + 15
        while not re.search(pattern, "".join(said)):
            said.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
        return "".join(said)

    def typed(line: str) -> None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/.*/mod/commands", until("/mod/commands")).group(1))
        until("prompt <text>")
        typed("prompt run the tests")  # no mod has polled: lich refuses it as detached
        assert "not queued: the session cannot take commands: no mod is polling" in until("not queued")
        poll = in_background(get, port, "/mod/commands")
        time.sleep(1)
        assert poll.empty()  # held: nothing is queued
        typed("prompt run the tests")
        assert '"id": "m1"' in until("queued m1 prompt")
        status, body = poll.get(timeout=10)
        assert (status, json.loads(body)) == (200, [{"id": "m1", "kind": "prompt", "text": "run the tests"}])
        until("200 answered  mod-commands  m1 prompt")
        typed("command /compact keep the plan")
        typed("command model opus")  # lich refuses /model as a command
        assert "/model is refused as a command" in until("model is refused")
        typed("dance")
        assert "type one of: prompt <text>" in until("type one of")
        status, body = get(port, "/mod/commands")
        assert json.loads(body) == [{"id": "m2", "kind": "command", "name": "compact", "args": "keep the plan"}]
        assert ack(port, id="m1", kind="prompt", ok=True)[0] == 204
        assert "204 accepted  mod-acks  m1 prompt ok" in until("mod-acks")
        typed('status {"owed": [{"ticket": "t1", "from": "docs", "asked": "the plan?"}]}')
        until("/mod/status now answers")
        status, body = get(port, "/mod/status")
        assert json.loads(body) == {"owed": [{"ticket": "t1", "from": "docs", "asked": "the plan?"}], "open": [],
                                    "ready": []}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_listen_before_compacting_answers_it_400_as_an_older_lich(pyz, base_env):
    for flags, expected in (([], 204), (["--before-compacting"], 400)):
        proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--token", TOKEN, *flags],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=base_env, text=True)
        try:
            port = int(re.search(r"127\.0\.0\.1:(\d+)/", proc.stdout.readline()).group(1))
            status, reason = post(port, "/hook", TOKEN, b'{"session_id":"s1","state":"compacting"}')
            assert status == expected, reason
            if expected == 400:
                assert reason == b'hook has unknown state "compacting"\n'
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_an_empty_poll_is_held_25_seconds_then_answered_empty():
    with StandIn(token=TOKEN) as lich:
        started = time.monotonic()
        status, body = get(lich.port, "/mod/commands")
        held = time.monotonic() - started
        assert (status, body) == (200, b"[]\n")
        assert 24 <= held < 30, held  # lich's modPollWait, under Claude Code's 30 s fetch cap


def test_a_mod_is_detached_once_it_has_not_polled_for_the_hold_and_grace():
    with StandIn(token=TOKEN, poll_wait=0.2) as lich:
        assert get(lich.port, "/mod/commands")[1] == b"[]\n"
        assert lich.enqueue({"kind": "abort"}, "s1")["id"] == "m1"
        time.sleep(0.2 + GRACE + 0.3)
        # The queued abort is older than the attach window: dropped, not handed to a later mod.
        assert get(lich.port, "/mod/commands")[1] == b"[]\n"
        time.sleep(0.2 + GRACE + 0.3)
        with pytest.raises(ValueError, match="no mod is polling"):
            lich.enqueue({"kind": "abort"}, "s1")


def test_a_poll_whose_client_hung_up_takes_nothing():
    with StandIn(token=TOKEN) as lich:
        conn = socket.create_connection(("127.0.0.1", lich.port))
        conn.sendall(f"GET /mod/commands?token={TOKEN}&session_id=s1 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        time.sleep(0.5)
        conn.close()
        time.sleep(0.5)
        lich.enqueue({"kind": "prompt", "text": "once"}, "s1")
        status, body = get(lich.port, "/mod/commands")
        assert json.loads(body) == [{"id": "m1", "kind": "prompt", "text": "once"}]
        gone = [r for r in lich.of("mod-commands") if r.verdict != "answered"]
        assert [r.verdict for r in gone] == ["the client went away: nothing drained"]


def test_several_parked_polls_wake_and_the_first_takes_the_commands():
    with StandIn(token=TOKEN, poll_wait=5) as lich:
        polls = [in_background(get, lich.port, "/mod/commands") for _ in range(3)]
        time.sleep(0.5)
        lich.enqueue({"kind": "model", "model": "opus"}, "s1")
        lich.enqueue({"kind": "effort"}, "s1")
        got = sorted(json.loads(p.get(timeout=10)[1]) for p in polls)
        assert got == [[], [], [{"id": "m1", "kind": "model", "model": "opus"}, {"id": "m2", "kind": "effort"}]]


@pytest.mark.parametrize("command,reason", [
    ({"kind": "compact"}, "unknown mod command kind"),
    ({"kind": "command", "name": "/Effort high"}, "/effort is refused as a command"),
    ({"kind": "command", "name": " "}, "needs the name of a slash command"),
    ({"kind": "abort", "text": "x"}, "carries a field that belongs to another kind"),
    ({"kind": "prompt", "text": " \n"}, "prompt command has no text"),
    ({"kind": "ask", "question": "x" * 8193}, "over 8192 bytes"),
    ({"kind": "prompt", "text": "x", "notification": {"status": "done", "summary": "s"}}, "a notification has"),
])
def test_lich_refuses_to_queue_what_it_refuses(command, reason):
    with StandIn(token=TOKEN, poll_wait=0.1) as lich:
        get(lich.port, "/mod/commands")
        with pytest.raises(ValueError, match=re.escape(reason)):
            lich.enqueue(command, "s1")


def test_each_mod_endpoint_answers_as_lich_does():
    big_answer = "é" * 20000  # 40 KB of UTF-8: over the 4 KiB of a hook, inside an ack's 64 KiB
    cases = [
        # (method, path, token, body, status, reason)
        ("POST", "/mod/commands", TOKEN, b"", 405, b"method not allowed\n"),
        ("GET", "/mod/acks", "wrong", b"", 405, b"method not allowed\n"),  # the method before the token
        ("GET", "/mod/status", "wrong", b"", 401, b"invalid token\n"),
        ("POST", "/mod/answer", "wrong", b'{"session_id":"s1","text":"x"}', 401, b"invalid token\n"),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","id":"m1","kind":"ask","ok":true,"answer":'
         + json.dumps(big_answer, ensure_ascii=False).encode() + b"}", 204, b""),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","id":"m1","kind":"abort","answer":"x"}', 400,
         b"mod ack carries an answer, which only an ok ask may\n"),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","id":"m1","kind":"dance","ok":true}', 400,
         b'mod ack has unknown kind "dance"\n'),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","kind":"abort"}', 400, b"mod ack missing id\n"),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","id":"m9","kind":"abort","ok":"yes"}', 400,
         b"invalid mod ack body: ok is not a boolean\n"),
        ("POST", "/mod/acks", TOKEN, b'{"session_id":"s1","id":"m1","kind":"ask","ok":true,"answer":"'
         + b"x" * 70000 + b'"}', 400, b"invalid mod ack body: not JSON\n"),  # cut at 64 KiB
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":200000,'
         b'"tokens":43592,"percent":22},"rate_limits":[{"kind":"five_hour","percent_used":140,'
         b'"resets_at":"2026-10-05T00:30:00.000Z"}],"cost_usd":0.0977631}', 204, b""),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","context":{"window":1}}', 400,
         b"mod usage missing conversation_id\n"),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":0}}', 400,
         b"mod usage context.window must be positive, got 0\n"),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":9,'
         b'"percent":22.5}}', 400, b"invalid mod usage body: percent is not a whole number\n"),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":9,'
         b'"percent":101}}', 400, b"mod usage context.percent must be 0 to 100, got 101\n"),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":9},'
         b'"rate_limits":[{"kind":"seven_day","percent_used":1,"resets_at":"tomorrow"}]}', 400,
         b"mod usage rate limit seven_day resets_at is not RFC 3339\n"),
        ("POST", "/mod/usage", TOKEN, b'{"session_id":"s1","conversation_id":"c","context":{"window":9},"x":"'
         + b"y" * 5000 + b'"}', 400, b"invalid mod usage body: not JSON\n"),  # cut at 4 KiB
        ("POST", "/mod/answer", TOKEN, b'{"session_id":"s1","text":" \\n "}', 400, b"mod answer text is blank\n"),
        ("POST", "/mod/answer", TOKEN, b'{"session_id":"s1","unanswered":"blank"}', 204, b""),
        ("POST", "/mod/answer", TOKEN, b'{"session_id":"s1","text":"' + b"x" * 60000 + b'"}', 204, b""),
        ("GET", "/mod/commands", TOKEN, None, 400, b"session_id is required\n"),
    ]
    with StandIn(token=TOKEN) as lich:
        for method, path, token, body, status, reason in cases:
            if method == "GET":
                got = get(lich.port, path, session=None if body is None else "s1", token=token)
            else:
                got = post(lich.port, path, token, body, method=method)
            assert got == (status, reason), (path, body[:80] if body else body)
        assert lich.errors == []
        accepted = {r.contract: r.accepted for r in reversed(lich.reports) if r.accepted}
        assert accepted["mod-usage"]["context"] == {"window": 200000, "tokens": 43592, "percent": 22}
        assert accepted["mod-acks"]["answer"] == big_answer
