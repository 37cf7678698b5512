"""What one loopback POST costs a fresh process, by HTTP client: the figures behind the
choice of a plain socket for lichhook's report.

    python bench/http_clients.py [--python /usr/bin/python3] [--runs 25] [--requests-path DIR]

Each case is a new process (``python -c ...``) timed whole, interleaved with the others
after warm-up, like ``coldstart.py``. ``--requests-path`` names a folder holding requests
and its dependencies (for instance ``pip install --target DIR requests``); requests is
never part of lichhook, so without it those rows are left out. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coldstart import DEFAULT_PYZ, LICH_SESSION, ROOT, TOKEN, _children_cpu, interpreter, machine, spread, start_standin  # noqa: E402

sys.path.insert(0, str(ROOT))
from lichhook.contracts import RELEASE  # noqa: E402

BODY = json.dumps({"session_id": LICH_SESSION, "provider_session_id": "abc", "provider": "claude"})
HEADERS = {"Content-Type": "application/json", "X-Lich-Plugin": RELEASE}


def cases(port: int, pyz: Path, requests_path: str | None) -> list:
    url_path = f"/session-start?token={TOKEN}"
    found = [
        ("python -c pass", "pass"),
        ("import _socket", "import _socket"),
        ("import socket", "import socket"),
        ("import json", "import json"),
        ("import http.client", "import http.client"),
        ("import urllib.request", "import urllib.request"),
        ("POST: lichhook's plain socket",
         f"import sys; sys.path.insert(0, {str(pyz)!r}); from lichhook import client; "
         f"from lichhook.contracts import session_start; "
         f"assert client.post({port}, client.build_request({port}, {TOKEN!r}, session_start.PATH, "
         f"session_start.body({LICH_SESSION!r}, 'abc', 'claude'))) == 204"),
        ("POST: http.client",
         f"import http.client, json; c = http.client.HTTPConnection('127.0.0.1', {port}, timeout=1); "
         f"c.request('POST', {url_path!r}, body=json.dumps({json.loads(BODY)!r}, separators=(',', ':')), headers={HEADERS!r}); "
         f"assert c.getresponse().status == 204"),
    ]
    if requests_path:
        found += [
            ("import requests", f"import sys; sys.path.insert(0, {requests_path!r}); import requests"),
            ("POST: requests",
             f"import sys; sys.path.insert(0, {requests_path!r}); import requests; s = requests.Session(); "
             f"s.trust_env = False; r = s.post('http://127.0.0.1:{port}{url_path}', data={BODY!r}, headers={HEADERS!r}, timeout=1); "
             f"assert r.status_code == 204"),
        ]
    return found


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pyz", type=Path, default=DEFAULT_PYZ)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--requests-path", help="folder holding requests and its dependencies")
    args = parser.parse_args(argv)
    if not args.pyz.is_file():
        print(f"http_clients: {args.pyz} does not exist; build it first with: python build_zipapp.py", file=sys.stderr)
        return 2
    server = start_standin()
    try:
        todo = cases(server.port, args.pyz.resolve(), args.requests_path)
        times: dict = {name: [] for name, _ in todo}
        cpu: dict = {name: [] for name, _ in todo}
        failed: dict = {}

        def once(name: str, code: str) -> float:
            import time

            before = _children_cpu()
            start = time.perf_counter()
            done = subprocess.run([args.python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - start
            if before is not None:
                cpu[name].append(_children_cpu() - before)
            if done.returncode != 0:
                failed.setdefault(name, done.stderr.decode(errors="replace").strip()[-300:])
            return elapsed

        for _ in range(args.warmup):
            for name, code in todo:
                once(name, code)
        for name in cpu:
            cpu[name].clear()
        for r in range(args.runs):
            k = r % len(todo)
            for name, code in todo[k:] + todo[:k]:
                times[name].append(once(name, code))
    finally:
        server.stop()

    info, m = interpreter(args.python), machine()
    print(f"interpreter: {info['executable']} ({info['version'].split(' | ')[0]})")
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['system']}; load {m['load']}")
    print(f"{args.runs} interleaved rounds after {args.warmup} warm-up; whole processes\n")
    base = statistics.median(times["python -c pass"])
    print("| case | median ms | p10-p90 ms | cpu ms | minus `python -c pass` ms | x `python -c pass` |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in todo:
        med = statistics.median(times[name])
        p10, p90 = spread(times[name])
        used = f"{statistics.median(cpu[name]) * 1e3:.1f}" if cpu[name] else "-"
        print(f"| {name} | {med * 1e3:.1f} | {p10 * 1e3:.1f}-{p90 * 1e3:.1f} | {used} | {(med - base) * 1e3:+.1f} | {med / base:.2f}x |")
    for name, why in failed.items():
        print(f"\n{name} FAILED: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
