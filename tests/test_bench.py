"""The cold-start benchmark runs every case for real; no test here looks at a duration."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile

import pytest

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
        [sys.executable, str(BENCH), "--pyz", str(pyz), "--runs", "2", "--warmup", "1",
         "--names", "2", "--waits", "4", "--hook-waits", "2", "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
    )
    return done, json.loads(out.read_text(encoding="utf-8")), pyz


def test_benchmark_exits_0_and_prints_a_table(bench_run):
    done, results, _ = bench_run
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    text = done.stdout.decode()
    assert "| case | median ms | p10-p90 ms |" in text
    for row in results["results"]:
        assert f"| {row['case']} |" in text
    assert results["interpreter"]["version"].startswith("CPython") or results["interpreter"]["version"]
    assert results["machine"]["cores"] >= 1 and results["machine"]["cpu"]


def test_every_case_ran_its_rounds_and_did_its_job(bench_run):
    _, results, _ = bench_run
    rows = {r["case"]: r for r in results["results"]}
    required = ["python -c pass", "empty zipapp", "no-op: claude, no LICH_*"] + [f"report: {p}" for p in BUILTINS]
    for name in required:
        row = rows[name]
        assert not row["skipped"], name
        assert row["runs"] == 2 and len(row["times_ms"]) == 2, name
        assert row["failures"] == 0, (name, row["first_failure"])
        assert 0 < row["p10_ms"] <= row["median_ms"] <= row["p90_ms"], name
        assert row["ratios"]["python -c pass"] > 0 and row["ratios"]["empty zipapp"] > 0
    for row in results["results"]:
        # Whatever could not run yet says why; whatever ran, ran clean.
        if row["skipped"]:
            assert len(row["skipped"]) > 10
        else:
            assert row["failures"] == 0, (row["case"], row["first_failure"])


def test_each_budget_gets_a_verdict(bench_run):
    _, results, _ = bench_run
    groups = {r["group"] for r in results["results"]}
    assert {"baseline", "no-op", "report", "hook", "wait"} <= groups
    for row in results["results"]:
        if row["group"] == "baseline":
            continue
        verdict = row["budget"]["verdict"]
        assert verdict in ({"SKIP"} if row["skipped"] else {"PASS", "OVER", "n/a"}), row


def test_shell_reference_runs_where_sh_and_curl_exist(bench_run):
    import shutil

    _, results, _ = bench_run
    labels = [r["case"] for r in results["results"] if r["group"] == "baseline"]
    if shutil.which("sh") and shutil.which("curl"):
        assert any(label.startswith("sh+curl") for label in labels)
        (row,) = [r for r in results["results"] if r["case"].startswith("sh+curl")]
        assert row["failures"] == 0, row["first_failure"]  # its report was accepted too
        report = [r for r in results["results"] if r["case"] == "report: claude"][0]
        assert report["budget"]["verdict"] in ("PASS", "OVER")
    else:
        assert not any(label.startswith("sh+curl") for label in labels)


def test_waits_and_hooks_run_once_their_commands_exist(bench_run):
    _, results, pyz = bench_run
    with zipfile.ZipFile(pyz) as zf:
        names = set(zf.namelist())
    rows = {r["case"]: r for r in results["results"]}
    if "lichhook/waits/cli.py" not in names:
        assert "not in this archive" in rows["wait list"]["skipped"]
    if "lichhook/claude_code/__init__.py" not in names and "lichhook/claude_code.py" not in names:
        assert "not in this archive" in rows["claude-code stop"]["skipped"]


def test_the_loopback_server_refuses_what_lich_refuses():
    bench = load_bench()
    good = json.dumps({"session_id": bench.LICH_SESSION, "provider_session_id": "abc", "provider": "claude"}).encode()
    headers = {"content-type": "application/json", "x-lich-plugin": "0.18.0"}
    target = f"/session-start?token={bench.TOKEN}"

    def status(method="POST", target=target, headers=headers, body=good):
        return bench.judge(method, target, headers, body, bench.Report())

    assert status() == 204
    assert status(target="/session-start?token=nope") == 401
    assert status(method="GET") == 405
    assert status(headers={"content-type": "application/json"}) == 400
    bad_id = json.dumps({"session_id": bench.LICH_SESSION, "provider_session_id": "../x", "provider": "claude"})
    assert status(body=bad_id.encode()) == 400
    legacy = json.dumps({"session_id": bench.LICH_SESSION, "claude_session_id": "abc", "provider": "claude"})
    assert status(body=legacy.encode()) == 400


def test_a_report_the_server_never_got_fails_the_case(tmp_path):
    bench = load_bench()
    server = bench.LoopbackServer()
    try:
        check = bench.report_check(server, "claude", "abc", "")
        ran = subprocess.run([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)
        assert check(ran) == "no report arrived"
    finally:
        server.close()
