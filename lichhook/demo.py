"""``lichhook demo``: each harness's session, start to end, sent through the real report path.

It starts the lich stand-in and, for every registered adapter, runs this same program
once per event of a realistic session (the adapter's ``life``: start, busy, a tool, a
wait, a title, files touched, done), as the harness would: a subprocess with the event
word, the payload on stdin and the LICH_* environment set. It prints what each event
sent, what lich answered and what the hook printed. An adapter with only a ``sample``
runs it once, with the bare command. Exit 0 only when every built-in harness's hooks
exited 0 and sent something, and lich accepted all of it. (A step may rightly send
nothing: a title that has not changed.)
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import tempfile
from typing import List, Optional, Tuple

from lichhook import contracts, titles
from lichhook.adapters import BY_PROVIDER
from lichhook.cli import WORDS
from lichhook.hook import Debug
from lichhook.host import all_adapters
from lichhook.selfcmd import self_command
from lichhook.standin import Report, StandIn
from lichhook.textout import tolerant_stdio


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="lichhook demo", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("providers", nargs="*", help="only these providers (default: every one)")
    args = parser.parse_args(argv)
    tolerant_stdio()
    found = [f for f in all_adapters(os.environ, Debug(os.environ), WORDS)
             if not args.providers or f.adapter.provider in args.providers]
    command = self_command()
    failed: List[str] = []
    accepted = 0
    with StandIn() as standin, tempfile.TemporaryDirectory(prefix="lichhook-demo-") as work:
        base = {k: v for k, v in os.environ.items() if k not in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
        for item in found:
            adapter = item.adapter
            builtin = adapter.provider in BY_PROVIDER
            folder = os.path.join(work, adapter.provider)
            os.makedirs(folder)
            # A card of its own per harness and run, so titles from an earlier run do not count.
            session = f"demo-{adapter.provider}-{secrets.token_hex(4)}"
            env = dict(base, **standin.environ())
            env["LICH_SESSION_ID"] = session
            print(f"{adapter.provider} ({item.tier}: {item.origin})")
            rows: List[Tuple[str, str, str, str]] = []
            for event, payload in life_of(adapter, folder):
                before = len(standin.reports)
                verdict, code = run_hook(command, adapter.provider, event, payload, env, folder)
                reports = standin.reports[before:]
                stdout = verdict if verdict else "(nothing)"
                if code != 0:
                    stdout += f" (hook exited {code})"
                    failed.append(f"{adapter.provider} {event}: hook exited {code}")
                if not reports:
                    rows.append((event or "(bare)", "nothing sent", "-", stdout))
                for n, report in enumerate(reports):
                    rows.append((event or "(bare)" if n == 0 else "", sent(report), answer(report),
                                 stdout if n == 0 else ""))
                    if report.status == 204:
                        accepted += 1
                    elif builtin:
                        failed.append(f"{adapter.provider} {event}: {report.status} {report.verdict}")
            print(table(rows))
            print()
            if builtin and all(row[1] == "nothing sent" for row in rows):
                failed.append(f"{adapter.provider}: nothing sent for its whole session")
            if builtin:
                titles.forget(env, session)
    if failed:
        print("Not every built-in report was accepted; see LICHHOOK_DEBUG=1 for why:")
        for line in failed:
            print(f"  {line}")
        return 1
    print(f"Every built-in harness's session reported: {accepted} reports accepted by the lich stand-in.")
    return 0


def life_of(adapter: object, folder: str) -> List[Tuple[Optional[str], dict]]:
    """The adapter's session, as (event, payload) pairs; one bare run of its ``sample``
    when it has no life to show."""
    life = getattr(adapter, "life", None)
    steps: List[Tuple[Optional[str], dict]] = []
    if callable(life):
        try:
            steps = [(str(event), dict(payload)) for event, payload in life(folder) or ()]
        except Exception:  # a plugin's demo must not stop the others
            steps = []
    return steps or [(None, dict(getattr(adapter, "sample", {}) or {}))]


def run_hook(command: List[str], provider: str, event: Optional[str], payload: dict, env: dict,
             folder: str) -> Tuple[str, int]:
    argv = command + [provider] + ([event] if event else [])
    try:
        done = subprocess.run(argv, input=json.dumps(payload).encode("utf-8"), env=env, cwd=folder,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=15)
    except (subprocess.TimeoutExpired, OSError, TypeError, ValueError) as exc:
        return f"<{type(exc).__name__}>", -1
    return done.stdout.decode("utf-8", "replace"), done.returncode


def sent(report: Report) -> str:
    """What a report said, in a few words."""
    if report.accepted is None:
        try:
            body = json.loads(report.body)
        except ValueError:
            return f"{report.contract or '?'} {report.body[:60]!r}"
        return f"{report.contract or '?'} {json.dumps(body)[:70]}"
    a = report.accepted
    if report.contract == contracts.START:
        return f"start {a['provider_session_id']}"
    if report.contract == contracts.STATE:
        words = [a["state"]] + [f"{k}={a[k]}" for k in ("tool", "detail", "reason") if a[k]]
        return "  ".join(words)
    if report.contract == contracts.TITLE:
        return f"title {a['title']!r}"
    return "touched"


def answer(report: Report) -> str:
    return str(report.status) if report.status == 204 else f"{report.status} {report.verdict}"


def table(rows: List[Tuple[str, str, str, str]]) -> str:
    header = ("event", "sent", "lich", "stdout")
    cells = [header] + rows
    widths = [max(len(row[i]) for row in cells) for i in range(3)]
    return "\n".join("  " + "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip()
                     for row in cells)
