"""The cold-start benchmark runs every case for real; no test here looks at a duration."""

from __future__ import annotations

import importlib.util
import json
import platform
import subprocess
import sys

import pytest

from lichhook.install.copies.target import is_launcher
from testkit.constants import ROOT

BENCH = ROOT / "bench" / "coldstart.py"
BUILTINS = ("claude", "codex", "antigravity", "crush", "opencode", "omp")


def load_bench():
    spec = importlib.util.spec_from_file_location("coldstart", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench_run(pyz, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "results.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--pyz", str(pyz), "--python", sys.executable, "--runs", "2", "--warmup", "1",
         "--names", "2", "--waits", "4", "--hook-waits", "2", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
    )
    return done, json.loads(out.read_text(encoding="utf-8")), pyz


def labels(results: dict) -> list:
    return [i["label"] for i in results["interpreters"]]


def test_benchmark_exits_0_and_prints_its_tables(bench_run):
    done, results, _ = bench_run
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    text = done.stdout.decode()
    assert "| interpreter | empty zipapp ms (cpu) |" in text and "| case | median ms | p10-p90 ms | cpu ms |" in text
    for row in results["results"]:
        assert f"| {row['case']} |" in text
    # This interpreter, named with --python, then the virtual environment whose site is slow.
    mine, slow = results["interpreters"]
    assert mine["version"].startswith(f"{platform.python_implementation()} {platform.python_version()} | ")
    assert "slow .pth" in slow["label"] and "slowstart" in slow["startup_imports"]
    assert results["machine"]["cores"] >= 1 and results["machine"]["cpu"]


EVENTS = [f"event: {provider} {event}" for provider, event, _, _ in load_bench().EVENT_CASES]
REQUIRED = (["python -c pass", "empty zipapp", "no-op: claude, no LICH_*"] + [f"report: {p}" for p in BUILTINS]
            + EVENTS + ["claude-code session-start", "claude-code stop", "wait list", "wait add"])


def test_every_harness_has_its_events_timed():
    assert {e.split()[1] for e in EVENTS} == set(BUILTINS)


def test_every_case_ran_its_rounds_and_did_its_job_with_every_python(bench_run):
    _, results, _ = bench_run
    for label in labels(results):
        rows = {r["case"]: r for r in results["results"] if r["interpreter"] == label}
        for name in REQUIRED:
            row = rows[name]
            assert not row["skipped"], (label, name)
            assert row["runs"] == 2 and len(row["times_ms"]) == 2, (label, name)
            assert row["failures"] == 0, (label, name, row["first_failure"])
            assert 0 < row["p10_ms"] <= row["median_ms"] <= row["p90_ms"], (label, name)
            assert row["ratios"]["empty zipapp"] > 0 and row["cpu_median_ms"] > 0
    for row in results["results"]:
        assert not row["skipped"] and row["failures"] == 0, (row["case"], row["skipped"], row["first_failure"])


def test_every_case_runs_what_install_registers(bench_run):
    _, results, _ = bench_run
    for interp in results["interpreters"]:
        rows = {r["case"]: r for r in results["results"] if r["interpreter"] == interp["label"]}
        for name in REQUIRED[2:]:
            argv = rows[name]["argv"]
            assert argv[:3] == [interp["python"], "-I", "-S"], (name, argv)
            # as registered: through the launcher (the JS modules' starts too)
            hooks = argv[5] if argv[3] == "-c" and is_launcher(argv[4]) else argv[3]
            assert hooks.endswith("/hooks.pyz") and hooks.split("/")[-2].startswith("py3."), argv
        # the baselines start the same way
        assert rows["empty zipapp"]["argv"][:3] == [interp["python"], "-I", "-S"]


def test_each_budget_gets_a_verdict_in_wall_and_cpu_time(bench_run):
    _, results, _ = bench_run
    groups = {r["group"] for r in results["results"]}
    assert {"baseline", "no-op", "report", "event", "hook", "wait"} <= groups
    for row in results["results"]:
        if row["group"] == "baseline":
            continue
        against = {b["against"] for b in row["budgets"]}
        assert "empty zipapp" in against, row
        for budget in row["budgets"]:
            assert budget["verdict"] in {"PASS", "OVER", "n/a"} and budget["cpu_verdict"] in {"PASS", "OVER", "n/a"}


def test_shell_reference_runs_where_sh_and_curl_exist(bench_run):
    import shutil

    _, results, _ = bench_run
    shell = [r for r in results["results"] if r["case"].startswith("sh+curl")]
    if shutil.which("sh") and shutil.which("curl"):
        (row,) = shell
        assert row["failures"] == 0, row["first_failure"]  # its report was accepted too
        report = [r for r in results["results"] if r["case"] == "report: claude"][0]
        assert [b["against"] for b in report["budgets"]] == ["empty zipapp", row["case"]]
    else:
        assert not shell


def test_a_report_the_server_never_got_fails_the_case():
    bench = load_bench()
    server = bench.QuickLich(token=bench.TOKEN, session_id=bench.LICH_SESSION)
    try:
        check = bench.report_check(server, "claude", "abc", "")
        ran = subprocess.run([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)
        assert check(ran) == "no report arrived"
    finally:
        server.close()


def test_a_refused_or_wrong_report_fails_the_case(pyz, base_env):
    bench = load_bench()
    server = bench.QuickLich(token=bench.TOKEN, session_id=bench.LICH_SESSION)
    try:
        check = bench.report_check(server, "codex", "abc", "")
        lich = dict(base_env, LICH_PORT=str(server.port), LICH_TOKEN=bench.TOKEN, LICH_SESSION_ID=bench.LICH_SESSION)
        payload = json.dumps({"session_id": "abc"}).encode()

        def hook(provider, env):
            return subprocess.run([sys.executable, str(pyz), provider], input=payload, env=env, stdout=subprocess.PIPE)

        assert check(hook("codex", lich)) is None
        assert check(hook("claude", lich)) == "reported claude/abc, expected codex/abc"
        refused = check(hook("codex", dict(lich, LICH_TOKEN="not-the-token")))
        assert refused.startswith("report refused (401"), refused
    finally:
        server.close()


@pytest.mark.heavy  # about 15 s: eight node sessions and an install
@pytest.mark.skipif(not sys.platform.startswith("linux") or not __import__("shutil").which("node"),
                    reason="reads /proc; runs node")
def test_the_js_session_bench_runs_every_module_and_checks_its_reports(pyz, tmp_path):
    out = tmp_path / "js.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "js_sessions.py"), "--pyz", str(pyz), "--runs", "1",
                           "--events", "6", "--pace-ms", "1", "--json", str(out)], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    rows = {(r["harness"], r["module"]): r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {(h, m) for h in ("opencode", "omp") for m in ("lichhook", "floor")}
    assert all(r["reports"] == [6] for r in rows.values()), rows
    # the floor's fetches, 1 ms apart, may cross; lichhook's reports may not
    for harness in ("opencode", "omp"):
        assert rows[(harness, "lichhook")]["all_in_order"] and rows[(harness, "lichhook")]["processes"] == 1, rows
