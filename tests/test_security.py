"""Security properties of the built archive, each shown by running it.

- the lich token never appears in anything any subcommand prints;
- reports go to 127.0.0.1 only, whatever the environment says;
- no path is built from an unchecked id: hostile ids create and change nothing on disk;
- the waits folder is private and its files are not world-readable;
- the archive runs no code from the working folder or the waits folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from testkit.environment import lich_env
from testkit.hostile import FILE_UNSAFE_IDS, QUICK_FILE_UNSAFE_IDS
from testkit.servers import free_port

HANG_GUARD = 20
NODE = "testnode"
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="file modes and umask are POSIX-only")

# Distinctive enough that no other output could contain it by chance; the core is checked
# on its own too, so a partly encoded or cut token is caught as well.
TOKEN_CORE = "Zq7x9Wv4Kp"
TOKEN = f"lich-{TOKEN_CORE}-s3cr3t&=# ü"
TOKEN_FORMS = [TOKEN, TOKEN_CORE, urllib.parse.quote(TOKEN, safe=""), TOKEN.encode("unicode_escape").decode()]


def sh(pyz: Path, env: dict, *args: str, stdin: bytes = b"", cwd: Path | None = None,
       timeout: float = HANG_GUARD, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run([python, str(pyz), *args], input=stdin, env=env, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def assert_no_token(done: subprocess.CompletedProcess, what: str) -> None:
    for stream, data in (("stdout", done.stdout), ("stderr", done.stderr)):
        text = data.decode("utf-8", "replace")
        for form in TOKEN_FORMS:
            assert form not in text, f"{what}: the token ({form!r}) appears on {stream}"


# ---------------------------------------------------------------------------------------
# The token never leaks
# ---------------------------------------------------------------------------------------

SAMPLES = {
    "claude": {"session_id": "9f1c7c1e-8f2a", "hook_event_name": "SessionStart"},
    "codex": {"session_id": "018f9c5a-0000"},
    "antigravity": {"conversationId": "a1604c72-3091"},
    "crush": {"session_id": "db3492a0"},
    "opencode": {"type": "session.created", "properties": {"info": {"id": "ses_0118"}}},
    "omp": {"type": "session_start", "session_id": "019ffb38"},
}


@pytest.fixture
def secret_env(base_env, tmp_path) -> dict:
    return dict(base_env, LICH_TOKEN=TOKEN, LICH_SESSION_ID="lich-s1", LICHHOOK_DEBUG="1",
                LICHHOOK_NODE=NODE, LICHHOOK_WAITS_DIR=str(tmp_path / "waits"))


@pytest.mark.parametrize("mode", ["accepted", "refused-401", "lich-failed-500", "silent", "port-refused"])
def test_token_absent_from_every_report_outcome(pyz, secret_env, fault_server, mode):
    samples = SAMPLES if mode != "silent" else {p: SAMPLES[p] for p in ("claude", "antigravity")}  # 1 s each
    if mode == "port-refused":
        port = free_port()
    elif mode == "silent":
        port = fault_server("silent").port
    else:
        port = fault_server("status", {"accepted": 204, "refused-401": 401, "lich-failed-500": 500}[mode]).port
    env = dict(secret_env, LICH_PORT=str(port))
    for provider, payload in samples.items():
        done = sh(pyz, env, provider, stdin=json.dumps(payload).encode())
        assert done.returncode == 0
        assert done.stderr, "debug output is on: the test must see the decision lines"
        assert_no_token(done, f"{provider} ({mode})")


@pytest.mark.parametrize("case", ["bad-port", "bad-stdin", "bad-id", "unknown-provider", "huge-stdin",
                                  "token-only-spaces-around"])
def test_token_absent_from_every_refusal(pyz, secret_env, fault_server, case):
    server = fault_server()
    env = dict(secret_env, LICH_PORT=str(server.port))
    stdin = json.dumps({"session_id": "ok-1"}).encode()
    provider = "claude"
    if case == "bad-port":
        env["LICH_PORT"] = TOKEN  # a port variable holding the token by mistake is not echoed
    elif case == "bad-stdin":
        stdin = TOKEN.encode() + b"\xff"
    elif case == "bad-id":
        stdin = json.dumps({"session_id": "../" + TOKEN}).encode()
    elif case == "unknown-provider":
        provider = "nosuch"
    elif case == "huge-stdin":
        stdin = json.dumps({"session_id": "x", "pad": TOKEN * 100_000}).encode()
    elif case == "token-only-spaces-around":
        env["LICH_TOKEN"] = f"  {TOKEN}  "
    done = sh(pyz, env, provider, stdin=stdin)
    assert done.returncode == 0
    assert_no_token(done, case)


def subcommand_runs(pyz: Path, tmp_path: Path) -> list:
    """Every subcommand the archive has, with arguments that make it do its real work."""
    session_payload = json.dumps({"session_id": "sess-1", "hook_event_name": "SessionStart", "source": "startup"})
    stop_payload = json.dumps({"session_id": "sess-1", "hook_event_name": "Stop", "stop_hook_active": False})
    runs = [
        (["--version"], b""),
        (["--help"], b""),
        (["adapters"], b""),
        (["demo"], b""),
        (["wait", "add", "--by", "rev", "--session", "sess-1", "--what", "CI run"], b""),
        (["wait", "list", "--by", "rev", "--session", "sess-1"], b""),
        (["wait", "list", "--by", "rev", "--session", "other-2"], b""),  # refused: held
        (["wait", "done", "--by", "rev", "--session", "sess-1", "--id", "w99"], b""),  # refused
        (["wait", "bogus"], b""),  # usage error
        (["wait", "list", "--by", "../x", "--session", "sess-1"], b""),
        (["claude-code", "session-start"], session_payload.encode()),
        (["claude-code", "stop"], stop_payload.encode()),
        (["claude-code", "stop"], b"not json"),
        (["claude-code", "bogus"], b""),
        (["install", "--dry-run", "--all"], b""),
        (["install", "--dry-run", "claude", "codex"], b""),
        (["install", "claude", "codex", "crush", "antigravity", "opencode", "omp"], b""),  # real, in the tmp home
        (["doctor"], b""),
        (["uninstall", "--dry-run", "--all"], b""),
        (["uninstall", "--all"], b""),
        (["install", "nosuchharness"], b""),
        (["doctor"], b""),
        (["doctor", "extra"], b""),
        (["mcp"], b""),  # stdin at EOF: the server ends
    ]
    return runs


def test_token_absent_from_every_subcommand(pyz, secret_env, fault_server, tmp_path):
    env = dict(secret_env, LICH_PORT=str(fault_server("status", 204).port))
    seen = []
    for args, stdin in subcommand_runs(pyz, tmp_path):
        try:
            done = sh(pyz, env, *args, stdin=stdin, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(args)} did not finish")
        assert b"Traceback" not in done.stderr, (args, done.stderr[-2000:])
        assert_no_token(done, " ".join(args))
        seen.append(args[0])
    assert {"doctor", "wait", "claude-code", "install", "demo"} <= set(seen)
    # Nor was it written into any file: harness configs, the waits folder, the home.
    for dirpath, _, filenames in os.walk(tmp_path):
        for f in filenames:
            data = Path(dirpath, f).read_bytes()
            assert TOKEN_CORE.encode() not in data, os.path.join(dirpath, f)


def test_doctor_says_the_token_is_set_without_showing_it(pyz, secret_env, fault_server):
    env = dict(secret_env, LICH_PORT=str(fault_server().port))
    done = sh(pyz, env, "doctor", "--verbose", timeout=60)
    assert_no_token(done, "doctor")
    assert b"LICH_TOKEN" in done.stdout  # it does talk about the token, just never its value


def test_token_is_not_in_the_lichtarget_repr():
    from lichhook.lichenv import lich_target

    target = lich_target({"LICH_PORT": "1234", "LICH_TOKEN": TOKEN, "LICH_SESSION_ID": "s"})
    assert TOKEN_CORE not in repr(target) and TOKEN_CORE not in str(target)


# ---------------------------------------------------------------------------------------
# Loopback only
# ---------------------------------------------------------------------------------------

DIVERTING_ENV = {
    "LICH_HOST": "127.0.0.2", "LICH_ADDR": "127.0.0.2", "LICH_URL": "http://127.0.0.2/", "HOST": "127.0.0.2",
    "HTTP_PROXY": "http://127.0.0.2:{port}", "http_proxy": "http://127.0.0.2:{port}",
    "HTTPS_PROXY": "http://127.0.0.2:{port}", "ALL_PROXY": "socks5://127.0.0.2:{port}",
    "all_proxy": "http://127.0.0.2:{port}", "NO_PROXY": "", "no_proxy": "example.invalid",
    "HOSTALIASES": "{aliases}", "RES_OPTIONS": "ndots:15", "LOCALDOMAIN": "invalid",
}


class Catcher:
    """A listener that records whether anyone connected to it."""

    def __init__(self, family: int, host: str, port: int) -> None:
        self.sock = socket.socket(family)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(8)
        self.sock.settimeout(0.5)

    def connected(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return False
        conn.close()
        return True

    def close(self) -> None:
        self.sock.close()


def test_reports_go_to_127_0_0_1_whatever_the_environment_says(pyz, base_env, fault_server, tmp_path):
    server = fault_server("status", 204)  # on 127.0.0.1:<port>
    catchers = []
    for family, host in ((socket.AF_INET, "127.0.0.2"), (socket.AF_INET6, "::1"), (socket.AF_INET, "0.0.0.0")):
        try:
            catchers.append(Catcher(family, host, server.port))
        except OSError:
            pass  # that address is not configured here, or the port cannot be shared on it
    aliases = tmp_path / "hostaliases"
    aliases.write_text("localhost example.invalid\n127.0.0.1 example.invalid\n")
    env = dict(base_env, **lich_env(server),
               **{k: v.format(port=server.port, aliases=aliases) for k, v in DIVERTING_ENV.items()})
    try:
        for provider, payload in SAMPLES.items():
            done = sh(pyz, env, provider, stdin=json.dumps(payload).encode())
            assert done.returncode == 0
        assert len(server.requests) == len(SAMPLES)
        for raw in server.requests:
            host_line = [line for line in raw.split(b"\r\n") if line.lower().startswith(b"host:")]
            assert host_line == [f"Host: 127.0.0.1:{server.port}".encode()]
        assert not any(c.connected() for c in catchers), "a report went somewhere other than 127.0.0.1"
    finally:
        for c in catchers:
            c.close()


def test_the_client_takes_no_host_from_anyone():
    """The sending functions accept a port and bytes, never an address: nothing a caller,
    the environment or a payload says can point them elsewhere."""
    import inspect

    from lichhook import client

    assert list(inspect.signature(client.post).parameters) == ["port", "request", "timeout"]
    assert "host" not in inspect.signature(client.build_request).parameters
    # And the one request it builds names 127.0.0.1 whatever the environment holds.
    os.environ["LICH_HOST"] = "203.0.113.9"
    try:
        request = client.build_request(4242, "t", "/session-start", b"{}")
    finally:
        del os.environ["LICH_HOST"]
    assert b"\r\nHost: 127.0.0.1:4242\r\n" in request


# ---------------------------------------------------------------------------------------
# No path from an unchecked id
# ---------------------------------------------------------------------------------------

HOSTILE_IDS = FILE_UNSAFE_IDS


def snapshot(root: Path) -> dict:
    """Every path under ``root`` with a digest of its content (folders as None)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            seen[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            seen[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return seen


@pytest.fixture
def waits_tree(tmp_path, base_env, pyz):
    """A waits folder three levels down in tmp_path, holding one real wait, and a victim
    folder beside it; returns (root, waits, env)."""
    root = tmp_path / "root"
    waits = root / "a" / "b" / "waits"
    (root / "victim").mkdir(parents=True)
    (root / "victim" / "keep.txt").write_text("untouched")
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(waits), LICHHOOK_NODE=NODE)
    done = sh(pyz, env, "wait", "add", "--by", "rev", "--session", "good-1", "--what", "a real wait")
    assert done.returncode == 0, done.stdout + done.stderr
    return root, waits, env


QUICK_HOSTILE = QUICK_FILE_UNSAFE_IDS


def test_hostile_ids_to_wait_change_nothing_on_disk(pyz, waits_tree):
    hostile_ids_to_wait(pyz, waits_tree, QUICK_HOSTILE)


@pytest.mark.heavy
def test_every_hostile_id_to_wait_changes_nothing_on_disk(pyz, waits_tree):
    hostile_ids_to_wait(pyz, waits_tree, HOSTILE_IDS)


def hostile_ids_to_wait(pyz, waits_tree, hostile_ids) -> None:
    root, waits, env = waits_tree
    before = snapshot(root)
    tmp_before = set(os.listdir("/tmp")) if os.path.isdir("/tmp") else set()
    for hostile in hostile_ids:
        ops = [
            ["list", "--by", "rev", "--session", hostile],
            ["add", "--by", "rev", "--session", hostile, "--what", "x"],
            ["adopt", "--by", "rev", "--session", hostile],
            ["add", "--by", f"{hostile}@{NODE}", "--session", "good-1", "--what", "x"],
            ["adopt", "--by", f"rev@{hostile}", "--session", "good-2"],
            ["done", "--by", "rev", "--session", "good-1", "--id", hostile],
            ["said", "--by", "rev", "--session", "good-1", "--id", "w1", "--note", "ok"] if hostile == "" else
            ["add", "--by", "rev", "--session", "good-1", "--what", "x", "--family", hostile + "\x01"],
        ]
        for op in ops:
            done = sh(pyz, env, "wait", *op)
            assert done.returncode in (1, 2) or (op[0] == "said" and done.returncode == 0), (op, done.stdout)
            assert b"Traceback" not in done.stderr
            if done.returncode == 1:
                assert json.loads(done.stdout)["ok"] is False
    after = snapshot(root)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # Only the one legal said op may have changed anything, and only inside the waits folder.
    assert all(k.startswith(os.path.join("a", "b", "waits") + os.sep) for k in changed), changed
    assert "escape" not in " ".join(after) and "planted" not in " ".join(after)
    if os.path.isdir("/tmp"):
        assert not {n for n in set(os.listdir("/tmp")) - tmp_before if "lichhook-abs-escape" in n}


def test_hostile_session_ids_to_the_api_change_nothing_on_disk(waits_tree):
    """Through the Python API the MCP server calls: non-strings and NUL bytes too."""
    from lichhook.waits.api import run_op

    root, waits, env = waits_tree
    before = snapshot(root)
    for hostile in HOSTILE_IDS + ["nul\x00byte", None, 7, ["a"], {"a": 1}, b"bytes"]:
        for op in ("list", "add", "adopt", "done", "watched", "said"):
            answer = run_op(op, by="rev", session=hostile, what="x", id="w1", waits_dir=str(waits),
                            environ={"LICHHOOK_NODE": NODE})
            assert answer["ok"] is False and answer["error"], (op, hostile)
            answer = run_op(op, by=hostile, session="good-1", what="x", id="w1", waits_dir=str(waits),
                            environ={"LICHHOOK_NODE": NODE})
            assert answer["ok"] is False and answer["error"], (op, hostile)
    assert snapshot(root) == before


@pytest.mark.parametrize("hook", ["session-start", "stop"])
def test_hostile_session_ids_to_claude_code_hooks_change_nothing(pyz, waits_tree, hook):
    root, waits, env = waits_tree
    # A planted file at the place a traversal would read: the hook must not read it either.
    (root / "a" / "escape.json").write_text(json.dumps({"session": "x", "name": "evil@n", "waits": [
        {"id": "w1", "what": "PLANTED", "family": None, "created": "2026-01-01T00:00:00Z",
         "watched": None, "said": None}], "updated": "x"}))
    before = snapshot(root)
    for hostile in HOSTILE_IDS + ["nul\x00byte", "../../../escape", "../../escape\x00"]:
        payload = json.dumps({"session_id": hostile, "hook_event_name": "Stop", "source": "startup"})
        done = sh(pyz, env, "claude-code", hook, stdin=payload.encode())
        assert done.returncode == 0
        assert b"Traceback" not in done.stderr
        assert b"PLANTED" not in done.stdout
        if hook == "stop":
            out = json.loads(done.stdout) if done.stdout.strip() else {}
            assert out.get("decision") != "block", hostile  # a hostile id never holds the turn
    assert snapshot(root) == before


# ---------------------------------------------------------------------------------------
# Private waits folder
# ---------------------------------------------------------------------------------------

def run_with_umask(pyz, env, umask, *args):
    return subprocess.run([sys.executable, str(pyz), *args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=HANG_GUARD, preexec_fn=lambda: os.umask(umask))


@POSIX_ONLY
@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_waits_folder_is_private_and_files_not_world_readable(pyz, base_env, tmp_path, umask):
    waits = tmp_path / "state" / "waits"
    env = dict(base_env, LICHHOOK_WAITS_DIR=str(waits), LICHHOOK_NODE=NODE)
    for args in (["add", "--by", "rev", "--session", "s-1", "--what", "one"],
                 ["add", "--by", "ops", "--session", "s-2", "--what", "two"],
                 ["adopt", "--by", "rev", "--session", "s-3"],
                 ["said", "--by", "rev", "--session", "s-3", "--id", "w1"],
                 ["done", "--by", "ops", "--session", "s-2", "--id", "w1"]):
        done = run_with_umask(pyz, env, umask, "wait", *args)
        assert done.returncode == 0, done.stdout
    assert stat.S_IMODE(waits.stat().st_mode) == 0o700
    checked = 0
    for dirpath, dirnames, filenames in os.walk(waits):
        for d in dirnames:
            mode = stat.S_IMODE(os.stat(os.path.join(dirpath, d)).st_mode)
            assert mode & 0o077 == 0, (d, oct(mode))
        for f in filenames:
            mode = stat.S_IMODE(os.stat(os.path.join(dirpath, f)).st_mode)
            assert mode & 0o007 == 0, f"{f} is {oct(mode)}: readable by everyone"
            checked += 1
    assert checked >= 4  # store, lock, index and session files were all looked at


@POSIX_ONLY
def test_the_default_waits_folder_is_private(pyz, base_env, home):
    env = dict(base_env, LICHHOOK_NODE=NODE)
    done = run_with_umask(pyz, env, 0, "wait", "add", "--by", "rev", "--session", "s-1", "--what", "x")
    assert done.returncode == 0, done.stdout
    if sys.platform == "darwin":
        waits = home / "Library" / "Application Support" / "lichhook" / "waits"
    else:
        waits = Path(env["XDG_STATE_HOME"]) / "lichhook" / "waits"
    assert stat.S_IMODE(waits.stat().st_mode) == 0o700


# ---------------------------------------------------------------------------------------
# No code from the working folder or the waits folder
# ---------------------------------------------------------------------------------------

SHADOWS = ["lichhook.py", "json.py", "pluggy.py", "sitecustomize.py", "usercustomize.py", "adapters.py",
           "platformdirs.py", "select.py", "_socket.py", "fcntl.py", "selectors.py", "typing.py",
           "importlib_metadata.py", "__main__.py", "store.py", "mirror.py"]


def plant(folder: Path, markers: Path, where: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in SHADOWS:
        code = (f"open({str(markers / (where + '-' + name))!r}, 'w').write('ran')\n")
        (folder / name).write_text(code)
    pkg = folder / "lichhook"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text(f"open({str(markers / (where + '-pkg'))!r}, 'w').write('ran')\n")
    (pkg / "cli.py").write_text(f"open({str(markers / (where + '-pkgcli'))!r}, 'w').write('ran')\n")


def test_no_code_runs_from_cwd_or_waits_folder(pyz, base_env, standin, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    cwd = tmp_path / "cwd"
    waits = tmp_path / "waits"
    plant(cwd, markers, "cwd")
    # The waits folder is lichhook's own (lichhook refuses a folder of foreign files); the
    # modules are planted in it afterwards.
    seeded = subprocess.run([sys.executable, str(pyz), "wait", "list", "--by", "rev", "--session", "sess-1"],
                            env=dict(base_env, LICHHOOK_WAITS_DIR=str(waits), LICHHOOK_NODE=NODE),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD)
    assert seeded.returncode == 0, seeded.stdout
    plant(waits, markers, "waits")
    plant(waits / "sessions", markers, "sessions")
    # A relative plugin folder would mean "run what is in the working folder": it is refused.
    plant(cwd / "plugins", markers, "relplugins")
    (cwd / "plugins" / "evil_adapter.py").write_text(
        f"open({str(markers / 'relplugins-adapter')!r}, 'w').write('ran')\n")
    local = cwd / "lichhook.pyz"
    local.write_bytes(pyz.read_bytes())
    env = dict(base_env, **lich_env(standin), LICHHOOK_WAITS_DIR=str(waits), LICHHOOK_NODE=NODE,
               LICHHOOK_PLUGIN_DIR="plugins")
    session = json.dumps({"session_id": "sess-1", "source": "startup"}).encode()
    runs = [
        (["claude"], json.dumps({"session_id": "c-1"}).encode()),
        (["antigravity"], json.dumps({"conversationId": "a-1"}).encode()),
        (["wait", "add", "--by", "rev", "--session", "sess-1", "--what", "x"], b""),
        (["wait", "list", "--by", "rev", "--session", "sess-1"], b""),
        (["claude-code", "session-start"], session),
        (["claude-code", "stop"], session),
        (["adapters"], b""),
        (["--version"], b""),
    ]
    for archive in (pyz, Path("lichhook.pyz")):  # absolute, and relative from inside cwd
        for args, stdin in runs:
            done = subprocess.run([sys.executable, str(archive), *args], input=stdin, env=env, cwd=cwd,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG_GUARD)
            assert b"Traceback" not in done.stderr, (args, done.stderr[-1500:])
            assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert sorted(os.listdir(markers)) == []
    # The runs did their real work: two reports per pass reached the stand-in.
    assert [r.status for r in standin.wait_for(4, timeout=5)] == [204] * 4


# ---------------------------------------------------------------------------------------
# The MCP server: hostile messages and hostile ids
# ---------------------------------------------------------------------------------------

def test_mcp_server_survives_hostile_lines_and_ids_and_touches_nothing(pyz, waits_tree):
    root, waits, env = waits_tree
    before = snapshot(root)
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "0"}}}).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
        b"not json at all",
        b"\xff\xfe\x00",
        b"null",
        b"[1, 2, 3]",
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": 2, "method": "' + b"x" * (2 << 20) + b'"}',  # past the line limit
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "not an object"}).encode(),
    ]
    next_id = 10
    for hostile in QUICK_HOSTILE + ["nul\x00byte"]:
        for op in ("add", "list", "adopt", "done"):
            variants = [{"op": op, "by": "rev", "session": hostile, "what": "x", "id": "w1"},
                        {"op": op, "by": hostile, "session": "good-1", "what": "x", "id": "w1"}]
            if op == "done":
                variants.append({"op": op, "by": "rev", "session": "good-1", "id": hostile or "w0"})
            for args in variants:
                lines.append(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                                         "params": {"name": "claude_code_wait", "arguments": args}}).encode())
                next_id += 1
    stdin = b"\n".join(lines) + b"\n"
    done = sh(pyz, dict(env, LICH_TOKEN=TOKEN), "mcp", stdin=stdin, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"Traceback" not in done.stderr
    assert_no_token(done, "mcp")
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["serverInfo"]
    tool_answers = [by_id[i] for i in range(10, next_id)]  # every call answered
    for a in tool_answers:
        # Refused, whether as a tool error or a JSON-RPC error: never a success.
        assert a.get("error") or a["result"]["isError"] is True, a
    assert snapshot(root) == before
