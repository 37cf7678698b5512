"""``lichhook demo``: every registered adapter's sample, sent through the real report path.

It starts the lich stand-in, runs this same program once per provider as a harness
would (a subprocess, the sample on stdin, the LICH_* environment set) and prints what
each sent, what lich answered and what the hook printed. Exit 0 only when every
built-in report is accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess

from lichhook.debug import Debug
from lichhook.adapters import BUILTIN as BUILTIN_PROVIDERS
from lichhook.host import all_adapters
from lichhook.selfcmd import self_command
from lichhook.standin import StandIn


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lichhook demo", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    found = all_adapters(os.environ, Debug(os.environ))
    command = self_command()
    rows = []
    failed = False
    with StandIn() as standin:
        env = {k: v for k, v in os.environ.items() if k not in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
        env.update(standin.environ())
        for item in found:
            adapter = item.adapter
            before = len(standin.reports)
            try:
                stdin = json.dumps(dict(getattr(adapter, "sample", {}) or {})).encode("utf-8")
                done = subprocess.run(command + [adapter.provider], input=stdin, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=15)
                verdict, code = done.stdout.decode("utf-8", "replace"), done.returncode
            except (subprocess.TimeoutExpired, OSError, TypeError, ValueError) as exc:
                verdict, code = f"<{type(exc).__name__}>", -1
            reports = standin.wait_for(before + 1, timeout=2.0)[before:]
            if reports:
                r = reports[0]
                sent = json.loads(r.body).get("provider_session_id", "?") if r.status != 400 else r.body.decode("utf-8", "replace")
                answer = f"{r.status} {r.verdict}"
                ok = r.status == 204
            else:
                sent, answer, ok = "-", "nothing sent", False
            if code != 0:
                answer += f" (hook exited {code})"
                ok = False
            # A built-in provider must report even when a plugin replaces its adapter.
            builtin = adapter.provider in BUILTIN_PROVIDERS
            if builtin and not ok:
                failed = True
            rows.append((adapter.provider, sent, answer, verdict if verdict else "(nothing)", item.tier, builtin))

    header = ("provider", "id sent", "lich answered", "stdout", "source")
    table = [header] + [r[:5] for r in rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(5)]
    for row in table:
        print("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    builtins_total = sum(1 for r in rows if r[5])
    if failed:
        print(f"\nNot every built-in report was accepted (of {builtins_total}); see LICHHOOK_DEBUG=1 for why.")
        return 1
    print(f"\nAll {builtins_total} built-in reports accepted by the lich stand-in.")
    return 0
