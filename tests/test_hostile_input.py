"""Hostile and odd input: property tests over the pure parsers, then concrete cases
through the built archive that tests/test_report.py does not already cover.

Properties (hypothesis), each also run far longer under ``-m heavy``:
- the stdin parser returns a dict or raises PayloadError, nothing else;
- every built-in adapter returns None or a string, and every id that passes lich's gate
  holds no path separator, ``..``, glob character or control character;
- ``wait_session_id``/``wait_who``/``wait_node`` return the value or raise BadId, and what
  they accept is a plain file name on every OS;
- every body built parses as JSON with exactly the three contract keys;
- the token's query encoding round-trips and can never break the request line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit.environment import lich_env
from testkit.hostile import FILE_UNSAFE_IDS, FRAGMENTS, NOT_STRINGS, ODD_LEGAL_IDS
from lichhook import client, contracts
from lichhook.contracts import session_start
from lichhook.adapters import BY_PROVIDER, load
from lichhook.contracts import provider_session_id_problem
from lichhook.ids import BadId, wait_node, wait_session_id, wait_who
from lichhook.lichenv import parse_port
from lichhook.payload import PayloadError, parse_payload

QUICK = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HANG_GUARD = 10

# ---------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------

# Any code point, surrogates included (json.loads can produce a lone surrogate).
any_char = st.characters(codec=None, categories=None)
hostile_text = st.one_of(
    st.text(alphabet=any_char, max_size=40),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=any_char, max_size=3)), max_size=12).map("".join),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)),
    max_leaves=16,
)

# Keys the built-in adapters read, so generated payloads actually reach their id logic.
ADAPTER_KEYS = ["session_id", "conversationId", "type", "properties", "info", "id", "sessionID", "parentID"]
TYPES = ["session.created", "session.updated", "session_start", "session_switch", "turn_start"]


def id_like() -> st.SearchStrategy:
    return st.one_of(hostile_text, json_values)


@st.composite
def adapter_payloads(draw) -> dict:
    """Payloads shaped like every harness's, with hostile values where ids live."""
    payload = draw(st.dictionaries(st.sampled_from(ADAPTER_KEYS) | hostile_text, json_values, max_size=4))
    if draw(st.booleans()):
        payload["type"] = draw(st.sampled_from(TYPES) | id_like())
    for key in ("session_id", "conversationId"):
        if draw(st.booleans()):
            payload[key] = draw(id_like())
    if draw(st.booleans()):
        info = {"id": draw(id_like())}
        if draw(st.booleans()):
            info["parentID"] = draw(id_like())
        props = {"info": info} if draw(st.booleans()) else draw(json_values)
        if isinstance(props, dict) and draw(st.booleans()):
            props["sessionID"] = draw(id_like())
        payload["properties"] = props
    return payload


environs = st.one_of(st.just({}), st.fixed_dictionaries({"CRUSH_SESSION_ID": hostile_text}))

ADAPTERS = {p: load(p) for p in BY_PROVIDER}


def is_control(ch: str) -> bool:
    return ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0


def assert_safe_for_lich(sid: str) -> None:
    """What issue 2 says an id sent to lich can never hold."""
    assert isinstance(sid, str) and sid
    assert "/" not in sid and "\\" not in sid
    assert ".." not in sid
    assert not set("*?[]") & set(sid)
    assert not any(is_control(c) for c in sid)
    sid.encode("utf-8")  # valid Unicode: no lone surrogate, which lich would keep as U+FFFD


FILE_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


def assert_plain_file_name(value: str, max_len: int) -> None:
    assert 1 <= len(value) <= max_len
    assert set(value) <= FILE_NAME_CHARS  # no separator, glob, control, space or non-ASCII
    assert not value.startswith(".") and ".." not in value
    assert value.split(".", 1)[0].upper() not in DEVICES
    assert os.path.basename(value) == value and os.path.normpath(value) == value


# ---------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------

def _parse_any_bytes(raw: bytes) -> None:
    try:
        value = parse_payload(raw)
    except PayloadError as exc:
        assert str(exc)  # always a sentence saying why
    else:
        assert isinstance(value, dict)


raw_inputs = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass")),
    st.tuples(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b" \n"]), json_values).map(
        lambda t: t[0] + json.dumps(t[1], ensure_ascii=False).encode("utf-8", "surrogatepass")),
    st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 5000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
)

test_parse_payload_never_raises_anything_else = QUICK(given(raw_inputs)(_parse_any_bytes))
test_parse_payload_never_raises_anything_else_long = pytest.mark.heavy(LONG(given(raw_inputs)(_parse_any_bytes)))


@QUICK
@given(st.dictionaries(hostile_text, json_values, max_size=5), st.booleans())
def test_parse_payload_round_trips_objects(obj, bom):
    raw = json.dumps(obj).encode("ascii")
    # json.loads, not obj: JSON itself joins an escaped surrogate pair into one character.
    assert parse_payload((b"\xef\xbb\xbf" if bom else b"") + raw) == json.loads(raw)


def test_parse_payload_refuses_deep_nesting_cleanly():
    for raw in (b"[" * 200_000, b'{"a":' * 200_000 + b"1" + b"}" * 200_000):
        with pytest.raises(PayloadError):
            parse_payload(raw)


def _adapters_extract_safely(payload: dict, environ: dict) -> None:
    for provider, adapter in ADAPTERS.items():
        sid = adapter.session_id(payload, environ)  # must not raise on any payload
        assert sid is None or isinstance(sid, str), (provider, sid)
        if sid is not None and provider_session_id_problem(sid) is None:
            assert_safe_for_lich(sid)


test_adapters_extract_safely = QUICK(given(adapter_payloads(), environs)(_adapters_extract_safely))
test_adapters_extract_safely_long = pytest.mark.heavy(LONG(given(adapter_payloads(), environs)(_adapters_extract_safely)))


def _gate(value: object) -> None:
    problem = provider_session_id_problem(value)
    if problem is None:
        assert_safe_for_lich(value)
    else:
        assert isinstance(problem, str) and problem


test_provider_gate = QUICK(given(id_like())(_gate))
test_provider_gate_long = pytest.mark.heavy(LONG(given(id_like())(_gate)))


def _wait_ids(value: object) -> None:
    for check, max_len in ((wait_session_id, 128), (wait_who, 64)):
        try:
            accepted = check(value)
        except BadId as exc:
            assert str(exc)
        else:
            # Session ids are folded: no two accepted ids share a file where case is ignored.
            assert accepted == (value.lower() if check is wait_session_id else value)
            assert_plain_file_name(accepted, max_len)
    try:
        node = wait_node(value)
    except BadId as exc:
        assert str(exc)
    else:
        assert node == value.lower()
        assert set(node) <= set("abcdefghijklmnopqrstuvwxyz0123456789-.")
        assert not node.startswith(".") and ".." not in node and node.split(".")[0].upper() not in DEVICES


wait_values = st.one_of(id_like(), st.binary(max_size=10), st.from_regex(r"[A-Za-z0-9_.\-]{1,130}", fullmatch=True))
test_wait_ids = QUICK(given(wait_values)(_wait_ids))
test_wait_ids_long = pytest.mark.heavy(LONG(given(wait_values)(_wait_ids)))


def test_wait_session_id_refuses_the_named_cases():
    for bad in FILE_UNSAFE_IDS + NOT_STRINGS + [b"abc"]:
        with pytest.raises(BadId):
            wait_session_id(bad)
    assert wait_session_id("x" * 128) == "x" * 128


def _body(lich_session: str, sid: str, provider: str) -> None:
    if provider_session_id_problem(sid):
        return
    body = session_start.body(lich_session, sid, provider)
    assert body.isascii()  # \u-escaped: no raw newline or quote can break out
    parsed = json.loads(body)
    # JSON spells two lone surrogates side by side as it spells the one character they
    # pair into; an environment cannot hold such a pair (only surrogateescape's lone ones).
    as_json = json.loads(json.dumps(lich_session))
    assert parsed == {"session_id": as_json, "provider_session_id": sid, "provider": provider}
    assert list(parsed) == ["session_id", "provider_session_id", "provider"]


providers = st.sampled_from(sorted(BY_PROVIDER)) | st.from_regex(r"[a-z][a-z0-9_-]{0,31}", fullmatch=True)
test_every_body_is_the_three_keys = QUICK(given(hostile_text, hostile_text, providers)(_body))
test_every_body_is_the_three_keys_long = pytest.mark.heavy(LONG(given(hostile_text, hostile_text, providers)(_body)))


@QUICK
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_token_encoding_round_trips_and_cannot_break_the_request(token):
    encoded = client.percent_encode(token)
    assert urllib.parse.unquote(encoded, errors="strict") == token
    assert urllib.parse.parse_qs(f"token={encoded}", keep_blank_values=True).get("token", [""]) == [token]
    assert set(encoded) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%")
    request = client.build_request(1234, token, "/session-start", b"{}")
    head = request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    assert len(head) == 6 and head[0].startswith(b"POST /session-start?token=") and head[0].endswith(b" HTTP/1.1")


@QUICK
@given(st.one_of(st.text(alphabet=any_char, max_size=8), st.integers(-99999, 999999).map(str)))
def test_parse_port_accepts_only_decimal_ports(text):
    port = parse_port(text)
    if port is not None:
        assert 1 <= port <= 65535
        assert text.isascii() and text.isdigit() and int(text) == port


# ---------------------------------------------------------------------------------------
# Concrete cases through the built archive
# ---------------------------------------------------------------------------------------

def hook_popen(pyz, env, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(pyz), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def wait_while_writing(proc: subprocess.Popen, write) -> tuple:
    """Run ``write(stop)`` on the hook's stdin in a thread until the hook exits; return
    its exit code, stdout and stderr. A closed pipe simply ends the writer."""
    stop = threading.Event()

    def writer() -> None:
        try:
            write(stop)
        except (BrokenPipeError, ValueError, OSError):
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        code = proc.wait(timeout=HANG_GUARD)
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        stop.set()
        proc.kill()
        thread.join(2)
    return code, out, err


def assert_quiet(done, verdict: bytes = b"") -> None:
    assert done.returncode == 0
    assert done.stdout == verdict
    assert done.stderr == b""


def test_ten_mebibytes_of_json_sends_nothing(run, fault_server):
    server = fault_server()
    big = json.dumps({"session_id": "ten-mib", "pad": ["x" * 1024] * (10 * 1024)}).encode()
    assert len(big) > 10 * (1 << 20)
    assert_quiet(run("antigravity", stdin=big, env=lich_env(server), timeout=HANG_GUARD), b"{}")
    assert server.requests == []


@pytest.mark.parametrize("provider,verdict", [("claude", b""), ("antigravity", b"{}")])
def test_stdin_that_never_closes_and_says_nothing(pyz, base_env, fault_server, provider, verdict):
    server = fault_server()
    proc = hook_popen(pyz, dict(base_env, **lich_env(server)), provider)
    try:
        start = time.monotonic()
        code = proc.wait(timeout=HANG_GUARD)  # stdin is never written or closed
        elapsed = time.monotonic() - start
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert (code, out, err) == (0, verdict, b"")
    assert elapsed < 5
    assert server.requests == []


def test_stdin_that_trickles_forever(pyz, base_env, fault_server):
    """A writer that sends a byte now and then and never finishes: the time bound ends it."""
    server = fault_server()
    proc = hook_popen(pyz, dict(base_env, **lich_env(server)), "claude")

    def trickle(stop: threading.Event) -> None:
        proc.stdin.write(b'{"session_id": "trickle-')
        proc.stdin.flush()
        while not stop.is_set():
            proc.stdin.write(b"x")
            proc.stdin.flush()
            time.sleep(0.05)

    code, out, err = wait_while_writing(proc, trickle)
    assert (code, out, err) == (0, b"", b"")
    assert server.requests == []


def test_stdin_that_floods_forever(pyz, base_env, fault_server):
    """A writer that never stops writing: the size bound ends it, nothing is sent."""
    server = fault_server()
    proc = hook_popen(pyz, dict(base_env, **lich_env(server)), "antigravity")

    def flood(stop: threading.Event) -> None:
        chunk = b'{"session_id": "flood", "pad": "' + b"y" * 65536
        while not stop.is_set():
            proc.stdin.write(chunk)

    code, out, err = wait_while_writing(proc, flood)
    assert (code, out, err) == (0, b"{}", b"")
    assert server.requests == []


@pytest.mark.skipif(sys.platform == "win32", reason="closing fd 0 before exec is POSIX-only")
def test_stdin_closed_outright(pyz, base_env, fault_server):
    server = fault_server()
    done = subprocess.run([sys.executable, str(pyz), "antigravity"], env=dict(base_env, **lich_env(server)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD,
                          preexec_fn=lambda: os.close(0))
    assert_quiet(done, b"{}")
    assert server.requests == []


@pytest.mark.parametrize("stdin", [
    b'{"session_id": "ab\xffcd"}',  # invalid UTF-8 inside a string
    b"\xef\xbb\xbf",  # a BOM and nothing else
    b"\xef\xbb\xbf\xef\xbb\xbf{}",  # two BOMs
    b"\xff\xfe{\x00}\x00",  # UTF-16
    b"\x00" * 64,
    b"[" * 100_000,  # nested past the parser's recursion limit
    b'{"session_id": "a"} {"session_id": "b"}',  # two objects
    b'{"session_id": NaN}',
    b'{"session_id": "\\ud800"} trailing',
], ids=["bad-utf8-in-string", "bom-only", "two-boms", "utf16", "nuls", "deep", "two-objects", "nan", "trailing"])
def test_more_bad_stdin_sends_nothing(run, fault_server, stdin):
    server = fault_server()
    assert_quiet(run("antigravity", stdin=stdin, env=lich_env(server), timeout=HANG_GUARD), b"{}")
    assert server.requests == []


def test_bad_stdin_is_explained_with_debug(run, fault_server):
    server = fault_server()
    env = dict(lich_env(server), LICHHOOK_DEBUG="1")
    done = run("claude", stdin=b"[" * 100_000, env=env, timeout=HANG_GUARD)
    assert done.returncode == 0 and done.stdout == b""
    assert b"nested too deeply" in done.stderr and b"Traceback" not in done.stderr


def test_an_id_of_ten_thousand_characters_is_not_sent(run, fault_server):
    server = fault_server()
    env = dict(lich_env(server), LICHHOOK_DEBUG="1")
    done = run("claude", stdin=json.dumps({"session_id": "a" * 10_000}), env=env, timeout=HANG_GUARD)
    assert done.returncode == 0 and done.stdout == b""
    assert b"exceeds lich's 4096" in done.stderr
    assert len(done.stderr) < 300  # the debug line does not echo the 10,000 characters
    assert server.requests == []


def test_the_longest_id_that_fits_is_sent(run, standin):
    body_overhead = len(session_start.body("lich-s1", "", "claude"))
    sid = "b" * (contracts.BODY_LIMIT - body_overhead)
    assert_quiet(run("claude", stdin=json.dumps({"session_id": sid}), env=lich_env(standin)))
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 204 and report.accepted["provider_session_id"] == sid


def test_odd_but_legal_ids_arrive_exactly(run, standin):
    for sid in ODD_LEGAL_IDS:
        assert_quiet(run("codex", stdin=json.dumps({"session_id": sid}), env=lich_env(standin)))
    reports = standin.wait_for(len(ODD_LEGAL_IDS), timeout=5)
    assert [(r.status, r.accepted["provider_session_id"]) for r in reports] == [(204, sid) for sid in ODD_LEGAL_IDS]


@pytest.mark.parametrize("sid", ["back\\slash", "new\nline", "cr\rhere", "nul\x00", "c1\x85", "del\x7f",
                                 "tab\there", "..", "a/../b"])
def test_ids_with_escapes_lich_refuses_are_not_sent(run, fault_server, sid):
    server = fault_server()
    for provider, payload, verdict in [("claude", {"session_id": sid}, b""),
                                       ("antigravity", {"conversationId": sid}, b"{}"),
                                       ("opencode", {"type": "session.created", "properties": {"info": {"id": sid}}}, b""),
                                       ("omp", {"type": "session_start", "session_id": sid}, b"")]:
        assert_quiet(run(provider, stdin=json.dumps(payload), env=lich_env(server)), verdict)
    assert server.requests == []


def test_crush_environment_id_is_gated_too(run, fault_server):
    server = fault_server()
    env = dict(lich_env(server), CRUSH_SESSION_ID="../../etc/passwd")
    assert_quiet(run("crush", stdin=json.dumps({"tool_name": "bash"}), env=env))
    assert server.requests == []


def test_a_patch_naming_45_000_files_ends_the_hook_in_time(run, standin):
    # Each file of an apply_patch is named once on the card: found in one pass, not by
    # comparing each name with every earlier one (half a minute for this patch, far past
    # Codex's own timeout).
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: {i}\n" for i in range(45_000))
    payload = {"session_id": "codex-big-patch", "cwd": "/p", "tool_name": "apply_patch",
               "tool_input": {"command": patch + "*** Update File: 0\n*** End Patch\n"}}
    assert len(json.dumps(payload)) < 1 << 20  # within what the hook reads
    assert_quiet(run("codex", "PreToolUse", stdin=json.dumps(payload), env=lich_env(standin), timeout=HANG_GUARD))
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 204
    assert report.accepted["tool"] == "apply_patch"
    assert report.accepted["detail"].startswith("0, 1, 2, 3, ")


@pytest.mark.parametrize("port_text", [" {port} ", "{port} ", "+{port}", "0{port}0", "{port}.0", "0x{hexport}",
                                       "{fullwidth}", "{arabic}", "{port}\n", "-{port}"])
def test_lich_port_that_only_looks_like_the_real_port_sends_nothing(run, fault_server, port_text):
    """Each value would reach the listening server if the hook were lenient (int() takes
    spaces, signs and non-ASCII digits); the hook must be strict."""
    server = fault_server()
    port = str(server.port)
    text = port_text.format(port=port, hexport=format(server.port, "x"),
                            fullwidth="".join(chr(0xFF10 + int(d)) for d in port),
                            arabic="".join(chr(0x0660 + int(d)) for d in port))
    env = dict(lich_env(server), LICH_PORT=text)
    assert_quiet(run("antigravity", stdin=json.dumps({"conversationId": "c1"}), env=env), b"{}")
    assert server.requests == []


@pytest.mark.parametrize("port_text", ["0", "-1", "99999", "80a", " 8080 ", "65536", "", "１２３"])
def test_bad_lich_port_is_explained_with_debug(run, port_text):
    env = {"LICH_PORT": port_text, "LICH_TOKEN": "t", "LICH_SESSION_ID": "s", "LICHHOOK_DEBUG": "1"}
    done = run("antigravity", stdin=json.dumps({"conversationId": "c1"}), env=env)
    assert done.returncode == 0 and done.stdout == b"{}"
    assert b"LICH_PORT" in done.stderr and b"Traceback" not in done.stderr


def request_token(raw: bytes) -> tuple[str, list]:
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    target = head[0].split(b" ")[1].decode("ascii")
    query = target.partition("?")[2]
    return query, head[1:]


@pytest.mark.parametrize("token", [
    "a&b=c#d e",
    "ü€😀 ünïcode",
    "plus+percent%20semi;colon",
    "line\r\nX-Injected: 1",
    "?token=other&token=again",
    " leading and trailing ",
], ids=["query-syntax", "unicode", "plus-percent", "crlf", "second-token", "spaces"])
def test_token_arrives_byte_exact(run, fault_server, token):
    server = fault_server("status", 204)
    assert_quiet(run("claude", stdin=json.dumps({"session_id": "tok-1"}), env=lich_env(server, token=token)))
    (raw,) = server.requests
    query, headers = request_token(raw)
    name, _, value = query.partition("=")
    assert name == "token" and "&" not in value and "#" not in value
    assert urllib.parse.unquote_to_bytes(value) == token.encode("utf-8")
    assert urllib.parse.parse_qs(query, keep_blank_values=True) == {"token": [token]}
    assert not any(h.lower().startswith(b"x-injected") for h in headers)


def test_token_is_accepted_by_the_stand_in(run, standin):
    """The stand-in's token is itself hostile ("t&k=n #ü"); lich's check passes end to end."""
    assert_quiet(run("omp", stdin=json.dumps({"type": "session_start", "session_id": "o1"}), env=lich_env(standin)))
    assert [r.status for r in standin.wait_for(1, timeout=5)] == [204]


@pytest.mark.parametrize("lich_session", ['quo"te', "new\nline", "üñí", "back\\slash"])
def test_odd_lich_session_ids_are_escaped_not_mangled(run, fault_server, lich_session):
    server = fault_server("status", 204)
    env = lich_env(server, session_id=lich_session)
    assert_quiet(run("claude", stdin=json.dumps({"session_id": "p1"}), env=env))
    (raw,) = server.requests
    body = raw.split(b"\r\n\r\n", 1)[1]
    assert json.loads(body) == {"session_id": lich_session, "provider_session_id": "p1", "provider": "claude"}


@pytest.mark.skipif(sys.platform == "win32", reason="undecodable environment bytes are a POSIX case")
def test_an_undecodable_token_byte_is_survived(pyz, base_env, fault_server):
    server = fault_server("status", 204)
    env = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in base_env.items()}
    env.update({b"LICH_PORT": str(server.port).encode(), b"LICH_SESSION_ID": b"s1",
                b"LICH_TOKEN": b"QZX-secret-\xff-tail", b"LICHHOOK_DEBUG": b"1"})
    done = subprocess.run([sys.executable, str(pyz), "claude"], input=b'{"session_id": "u1"}', env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD)
    assert done.returncode == 0 and done.stdout == b""
    assert b"Traceback" not in done.stderr
    assert b"QZX-secret" not in done.stderr and b"tail" not in done.stderr


def test_the_stand_in_answers_400_to_a_body_nested_too_deeply(standin):
    """lich's decoder refuses such a body; the stand-in must answer as lich, not drop the line."""
    import urllib.error
    import urllib.request

    token = urllib.parse.quote(standin.token, safe="")
    req = urllib.request.Request(f"http://127.0.0.1:{standin.port}/session-start?token={token}",
                                 data=b"[" * 3000, method="POST", headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(req, timeout=5)
    assert refused.value.code == 400
    (report,) = standin.wait_for(1, timeout=5)
    assert report.status == 400 and "JSON object" in report.verdict


@pytest.mark.parametrize("command", [["install", "claude"], ["doctor"]])
def test_a_harness_config_nested_too_deeply_is_named_not_a_traceback(run, home, command):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(b'{"hooks": ' + b"[" * 100_000)
    before = settings.read_bytes()
    done = run(*command, timeout=60)
    assert done.returncode != 0
    assert b"Traceback" not in done.stderr + done.stdout
    assert str(settings).encode() in done.stderr + done.stdout
    assert settings.read_bytes() == before
