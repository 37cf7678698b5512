"""`lichhook mcp`: the official MCP SDK client drives the built archive; raw lines test the framing."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from lichhook.jsonint import json_int

NODE = "mcpnode"
TOOL = "claude_code_wait"


def field(obj: object, snake: str, camel: str) -> object:
    """A result field under the SDK's 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


@pytest.fixture
def waits(tmp_path) -> Path:
    return tmp_path / "waits"


@pytest.fixture
def server_env(base_env, waits) -> dict:
    return {**base_env, "LICHHOOK_WAITS_DIR": str(waits), "LICHHOOK_NODE": NODE}


# ---- the SDK as the peer --------------------------------------------------------------------


def sdk_session(pyz: Path, env: dict, script):  # type: ignore[no-untyped-def]
    """Run ``await script(session)`` against a fresh `python <pyz> mcp`, within 60 s."""
    mcp = pytest.importorskip("mcp", reason="the MCP SDK client needs Python 3.10 or newer")
    from mcp.client.stdio import stdio_client

    params = mcp.StdioServerParameters(command=sys.executable, args=[str(pyz), "mcp"], env=env)

    async def main():  # type: ignore[no-untyped-def]
        async with stdio_client(params) as (read, write):
            async with mcp.ClientSession(read, write) as session:
                init = await session.initialize()
                return init, await script(session)

    return asyncio.run(asyncio.wait_for(main(), 60))


def answer_of(result) -> dict:  # type: ignore[no-untyped-def]
    """The JSON answer in a tool result, checked against structuredContent and isError."""
    (block,) = result.content
    assert block.type == "text"
    answer = json.loads(block.text)
    structured = field(result, "structured_content", "structuredContent")
    if structured is not None:
        assert structured == answer
    assert field(result, "is_error", "isError") is (not answer["ok"])
    return answer


def test_sdk_lists_the_tool(pyz, server_env):
    async def script(session):  # type: ignore[no-untyped-def]
        await session.send_ping()
        return await session.list_tools()

    init, listed = sdk_session(pyz, server_env, script)
    info = field(init, "server_info", "serverInfo")
    assert info.name == "lichhook"
    assert field(init, "protocol_version", "protocolVersion") in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    assert init.capabilities.tools is not None
    (tool,) = listed.tools
    assert tool.name == TOOL
    schema = field(tool, "input_schema", "inputSchema")
    assert schema["required"] == ["op", "by", "session"]
    assert schema["properties"]["op"]["enum"] == ["add", "list", "watched", "said", "done", "adopt"]
    assert set(schema["properties"]) == {"op", "by", "session", "what", "family", "id", "note"}


def test_sdk_runs_every_op_with_refusals_and_adopt(pyz, server_env, waits, run):
    async def script(session):  # type: ignore[no-untyped-def]
        async def call(**arguments):  # type: ignore[no-untyped-def]
            return answer_of(await session.call_tool(TOOL, arguments))

        got = {}
        got["add1"] = await call(op="add", by="rev", session="old", what="CI run", family="ci.build")
        got["add2"] = await call(op="add", by="rev", session="old", what="review from bob")
        got["list"] = await call(op="list", by="rev", session="old")
        got["watched"] = await call(op="watched", by="rev", session="old", id="w1", note="watcher pid 7")
        got["said"] = await call(op="said", by="rev", session="old", id="w2")
        got["done"] = await call(op="done", by="rev", session="old", id="w2")
        got["held"] = await call(op="list", by="rev", session="new")
        got["bad_session"] = await call(op="list", by="rev", session="../../x")
        got["bad_name"] = await call(op="list", by="a/b", session="old")
        got["no_what"] = await call(op="add", by="rev", session="old")
        got["gone"] = await call(op="done", by="rev", session="old", id="w2")
        got["adopt"] = await call(op="adopt", by="rev", session="new")
        got["told"] = await call(op="add", by="rev", session="old", what="x")
        got["after"] = await call(op="list", by=f"rev@{NODE}", session="new")
        got["missing"] = await call(op="list", by="rev")
        got["extra"] = await call(op="list", by="rev", session="new", colour="red")
        got["bad_op"] = await call(op="close", by="rev", session="new")
        await session.send_ping()  # still connected after all that
        return got

    _, got = sdk_session(pyz, server_env, script)
    assert got["add1"]["ok"] and got["add1"]["wait"]["id"] == "w1" and got["add1"]["wait"]["family"] == "ci.build"
    assert got["add2"]["wait"]["id"] == "w2"
    assert [w["id"] for w in got["list"]["waits"]] == ["w1", "w2"]
    assert got["watched"]["wait"]["watched"]["note"] == "watcher pid 7"
    assert got["said"]["wait"]["said"]["at"].endswith("Z")
    assert got["done"]["ok"] and got["done"]["open"] == 1
    assert got["held"]["held_by"] == "old" and "adopt" in got["held"]["error"]
    assert "session id" in got["bad_session"]["error"]
    assert got["bad_name"]["ok"] is False and "name" in got["bad_name"]["error"]
    assert "needs what" in got["no_what"]["error"]
    assert "no open wait 'w2'" in got["gone"]["error"]
    assert got["adopt"]["previous_session"] == "old" and [w["id"] for w in got["adopt"]["waits"]] == ["w1"]
    assert got["told"]["adopted_by"] == "new" and "adopted by session 'new'" in got["told"]["error"]
    assert got["after"]["ok"] and got["after"]["name"] == f"rev@{NODE}"
    assert "session is required" in got["missing"]["error"]
    assert "unknown argument 'colour'" in got["extra"]["error"]
    assert "not an op" in got["bad_op"]["error"]

    # the tool and the command line are one module: same store, same sentences
    done = run("wait", "list", "--by", "rev", "--session", "new", env={"LICHHOOK_WAITS_DIR": str(waits), "LICHHOOK_NODE": NODE})
    assert done.returncode == 0 and [w["id"] for w in json.loads(done.stdout)["waits"]] == ["w1"]
    done = run("wait", "add", "--by", "rev", "--session", "old", "--what", "x",
               env={"LICHHOOK_WAITS_DIR": str(waits), "LICHHOOK_NODE": NODE})
    assert done.returncode == 1 and json.loads(done.stdout)["error"] == got["told"]["error"]
    session_file = json.loads((waits / "sessions" / "new.json").read_text(encoding="utf-8"))
    assert session_file["name"] == f"rev@{NODE}" and [w["id"] for w in session_file["waits"]] == ["w1"]


def test_sdk_unknown_tool_is_an_error_not_a_hangup(pyz, server_env):
    async def script(session):  # type: ignore[no-untyped-def]
        outcome = None
        try:
            result = await session.call_tool("no_such_tool", {})
            outcome = ("result", field(result, "is_error", "isError"))
        except Exception as exc:  # the SDK raises the JSON-RPC error
            outcome = ("error", str(exc))
        await session.send_ping()
        return outcome

    _, outcome = sdk_session(pyz, server_env, script)
    assert outcome[0] == "error" and "no_such_tool" in outcome[1]


# ---- raw lines ------------------------------------------------------------------------------


def converse(pyz: Path, env: dict, lines: list, timeout: float = 30) -> tuple[list, subprocess.CompletedProcess]:
    data = b"".join((line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n" for line in lines)
    done = subprocess.run([sys.executable, str(pyz), "mcp"], input=data, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return [json.loads(line, parse_int=json_int) for line in done.stdout.splitlines()], done


def req(id_, method, params=None) -> str:  # type: ignore[no-untyped-def]
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def test_garbage_lines_get_errors_and_the_server_survives(pyz, server_env):
    lines = [
        "this is not json",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"",  # cut short
        b"\xff\xfe{}",
        "[]",
        json.dumps([json.loads(req(2, "ping"))]),
        "42",
        "\"ping\"",
        json.dumps({"jsonrpc": "1.0", "id": 3, "method": "ping"}),
        json.dumps({"id": 4, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 5}),
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": 7}),
        json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
        req(8, "no/such/method"),
        req(9, "tools/call", ["claude_code_wait"]),
        req(10, "tools/call", {"name": "claude_code_wait", "arguments": "op=list"}),
        req(11, "tools/call", {"arguments": {}}),
        req(12, "initialize", {"capabilities": {}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/whatever"}),  # no answer
        json.dumps({"jsonrpc": "2.0", "method": "no/such/method"}),  # a notification: no answer
        json.dumps({"jsonrpc": "2.0", "id": 99, "result": {}}),  # a response: no answer
        "",
        "   ",
        req(13, "ping"),
    ]
    answers, done = converse(pyz, server_env, lines)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    codes = [(a.get("id"), a.get("error", {}).get("code")) for a in answers]
    assert codes == [
        (None, -32700), (None, -32700), (None, -32700),
        (None, -32600), (None, -32600),  # empty and non-empty batches
        (None, -32600), (None, -32600),  # not objects
        (3, -32600), (4, -32600), (5, -32600), (6, -32600), (None, -32600),
        (8, -32601),
        (9, -32602), (10, -32602), (11, -32602), (12, -32602),
        (13, None),
    ]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[-1]["result"] == {}


def strict_json(line: bytes) -> object:
    def refuse(word: str) -> object:
        raise ValueError(f"{word} in an answer")
    return json.loads(line, parse_constant=refuse)


def test_numbers_json_does_not_have_are_never_echoed(pyz, server_env):
    lines = [
        '{"jsonrpc": "2.0", "id": NaN, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": Infinity, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
        req(2, "ping"),
    ]
    data = "".join(line + "\n" for line in lines).encode()
    done = subprocess.run([sys.executable, str(pyz), "mcp"], input=data, env=server_env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    answers = [strict_json(line) for line in done.stdout.splitlines()]
    codes = [(a["id"], a.get("error", {}).get("code")) for a in answers]
    assert codes == [(None, -32700), (None, -32700), (1.5, None), (2, None)]


def test_a_number_id_is_echoed_as_written(pyz, server_env):
    # JSON-RPC answers with the id it was given; read as a Python float, -1e-400 would
    # come back as -0.0, 1e400 as Infinity (not JSON), 1.10 as 1.1.
    ids = ["-1e-400", "1e400", "-1e400", "1.10", "1E+2", "-0", "-0.0", "9" * 5000, "7", "-12"]
    lines = ['{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % i for i in ids]
    lines.append('{"jsonrpc": "2.0", "id": 2.50, "method": "no/such"}')
    data = "".join(line + "\n" for line in lines).encode()
    done = subprocess.run([sys.executable, str(pyz), "mcp"], input=data, env=server_env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    answers = done.stdout.decode().splitlines()
    assert [line.split('"id": ')[1].split(",")[0] for line in answers] == ids + ["2.50"], answers
    codes = [json.loads(line, parse_int=str, parse_float=str).get("error", {}).get("code") for line in answers]
    assert codes == [None] * len(ids) + ["-32601"]


def test_lone_surrogates_are_answered_and_the_server_survives(pyz, server_env, waits):
    call = {"name": TOOL, "arguments": {"op": "add", "by": "r", "session": "s", "what": "SURROGATE"}}
    lines = [
        '{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}',
        '{"jsonrpc": "2.0", "id": "\\udc00", "method": "ping"}',
        req(3, "tools/call", call).replace("SURROGATE", "x\\ud800"),  # the escape, as a client sends it
        req(4, "ping"),
    ]
    data = "".join(line + "\n" for line in lines).encode()
    done = subprocess.run([sys.executable, str(pyz), "mcp"], input=data, env=server_env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-800:]
    answers = [strict_json(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, "\udc00", 3, 4]
    assert answers[0]["error"]["code"] == -32601 and answers[1]["result"] == {}
    refused = answers[2]["result"]
    assert refused["isError"] is True and "half of a character" in refused["structuredContent"]["error"]
    assert not (waits / "store.json").exists()


def test_handshake_and_version_negotiation(pyz, server_env, waits):
    init = {"capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    for asked, expected in [("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"),
                            ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
                            ("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")]:
        call = {"name": TOOL, "arguments": {"op": "list", "by": "v", "session": "s1"}}
        answers, done = converse(pyz, server_env, [
            req(1, "initialize", {**init, "protocolVersion": asked}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            req("two", "tools/call", call),
        ])
        assert [a["id"] for a in answers] == [1, "two"]
        result = answers[0]["result"]
        assert result["protocolVersion"] == expected
        assert result["capabilities"] == {"tools": {"listChanged": False}}
        assert result["serverInfo"]["name"] == "lichhook" and result["serverInfo"]["version"]
        called = answers[1]["result"]
        assert called["isError"] is False
        # structuredContent exists from 2025-06-18 on; older clients get the text alone
        assert ("structuredContent" in called) is (expected >= "2025-06-18")
        assert json.loads(called["content"][0]["text"])["name"] == f"v@{NODE}"


def test_tool_refusal_carries_the_cli_sentence(pyz, server_env, run, waits):
    env = {"LICHHOOK_WAITS_DIR": str(waits), "LICHHOOK_NODE": NODE}
    assert run("wait", "add", "--by", "r", "--session", "a", "--what", "x", env=env).returncode == 0
    cli = run("wait", "list", "--by", "r", "--session", "b", env=env)
    answers, _ = converse(pyz, server_env, [
        req(1, "tools/call", {"name": TOOL, "arguments": {"op": "list", "by": "r", "session": "b"}})])
    result = answers[0]["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == json.loads(cli.stdout)


def test_a_bad_session_is_what_the_caller_hears_first(pyz, server_env, waits):
    calls = [{"session": "../../x"}, {"session": "a/b", "op": "list", "by": "r", "colour": "red"},
             {"session": "CON", "by": "r"}, {"op": "list", "by": "r"}]
    answers, _ = converse(pyz, server_env, [
        req(i, "tools/call", {"name": TOOL, "arguments": arguments}) for i, arguments in enumerate(calls)])
    errors = [json.loads(a["result"]["content"][0]["text"])["error"] for a in answers]
    assert all(a["result"]["isError"] for a in answers)
    assert [e.startswith("session id") for e in errors[:3]] == [True, True, True], errors
    assert errors[3].startswith("session is required"), errors
    assert not waits.exists()


def test_an_over_long_line_is_refused_and_skipped(pyz, server_env):
    huge = "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": {\"x\": \"" + "a" * (1 << 21) + "\"}}"
    answers, done = converse(pyz, server_env, [huge, req(2, "ping")])
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [(None, -32600), (2, None)]


def test_waits_dir_argument_and_usage(pyz, server_env, tmp_path, run):
    other = tmp_path / "other"
    env = {**server_env}
    done = subprocess.run([sys.executable, str(pyz), "mcp", "--waits-dir", str(other)],
                          input=(req(1, "tools/call", {"name": TOOL, "arguments": {"op": "add", "by": "r", "session": "s", "what": "x"}}) + "\n").encode(),
                          env=env, stdout=subprocess.PIPE, timeout=30)
    assert json.loads(done.stdout)["result"]["isError"] is False
    assert (other / "sessions" / "s.json").exists()
    bad = run("mcp", "--frobnicate")
    assert bad.returncode == 2 and bad.stdout == b"" and b"usage" in bad.stderr


def test_big_integers_are_json_and_the_server_survives(pyz, server_env, waits):
    big = "7" * 5000  # more digits than int() takes (Python 3.11+ and security releases)
    lines = [
        req(1, "tools/call", {"name": TOOL, "arguments": {"op": "list", "by": "r", "session": "s"}})
        .replace('"by"', f'"n": {big}, "by"'),
        '{"jsonrpc": "2.0", "id": ' + big + ', "method": "ping"}',
        req(3, "ping"),
    ]
    answers, done = converse(pyz, server_env, lines)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    # Parsed, so refused for what it is (an unknown argument), not as "not JSON".
    refused = answers[0]["result"]
    assert refused["isError"] is True and "unknown argument 'n'" in refused["structuredContent"]["error"]
    assert (answers[1]["id"], answers[1]["result"]) == (Decimal(big), {})  # the id echoed as given
    assert answers[2] == {"jsonrpc": "2.0", "id": 3, "result": {}}


# ---- the archive replaced under a running server ------------------------------------------


def test_a_running_server_outlives_the_archive_being_replaced(pyz, server_env, tmp_path):
    import os

    from lichhook import __version__
    from lichhook.archive import read_archive, with_bytecode, write_archive

    live = tmp_path / "lichhook.pyz"
    live.write_bytes(pyz.read_bytes())
    # What install does: a rebuilt archive, laid out differently, moved over the old one.
    shebang, files = read_archive(pyz)
    files["lichhook/_version.py"] = files["lichhook/_version.py"].replace(
        f'"{__version__}"'.encode(), b'"9.9.9-replaced"')
    assert b"9.9.9-replaced" in files["lichhook/_version.py"]
    files["AAAA/shifts-every-offset.txt"] = b"x" * 4096
    rebuilt = tmp_path / "rebuilt.pyz"
    write_archive(with_bytecode({n: d for n, d in files.items() if not n.endswith(".pyc")}), rebuilt, shebang)

    proc = subprocess.Popen([sys.executable, str(live), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=server_env)

    def ask(line: str) -> dict:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        assert ask(req(1, "ping"))["result"] == {}  # started: only the first modules are loaded
        os.replace(rebuilt, live)
        init = ask(req(2, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
        assert init["result"]["serverInfo"]["version"] == __version__  # the version it started as
        calls = [{"op": "add", "what": "the review"}, {"op": "list"}, {"op": "watched", "id": "w1"},
                 {"op": "said", "id": "w1", "note": "told"}, {"op": "done", "id": "w1"}, {"op": "adopt"},
                 {"op": "bogus"}]
        for n, arguments in enumerate(calls, start=3):
            answer = ask(req(n, "tools/call", {"name": TOOL, "arguments": {"by": "rev", "session": "s-9", **arguments}}))
            assert "error" not in answer, answer
            result = answer["result"]["structuredContent"]
            assert result["ok"] is (arguments["op"] != "bogus"), result
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr.read()
    fresh = subprocess.run([sys.executable, str(live), "--version"], capture_output=True, env=server_env)
    assert b"9.9.9-replaced" in fresh.stdout  # the replacement did take effect for new processes
