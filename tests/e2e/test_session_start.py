"""Every runnable harness, with lichhook installed for real: one headless session sends
exactly one session-start report naming the harness's own id; outside lich, nothing."""

from __future__ import annotations

import pytest

from testkit.environment import shadowing_project

pytestmark = pytest.mark.e2e

RUNNABLE = ("claude", "codex", "opencode", "omp")


@pytest.mark.parametrize("name", RUNNABLE)
def test_one_session_sends_one_report_with_the_harness_own_id(sandbox, name):
    box = sandbox(name)
    box.install()
    done = box.run(box.harness.headless("Say hello."))
    shown = box.harness.session_id(done)
    assert box.accepted(1) == [(name, shown)], box.describe(done)
    files = box.harness.session_files(box, shown)
    if name != "opencode":  # opencode keeps sessions in a database, not a file per session
        assert files, f"{name} wrote no session file named {shown}"


@pytest.mark.parametrize("name", RUNNABLE)
def test_outside_lich_the_same_run_completes_and_sends_nothing(sandbox, name):
    box = sandbox(name)
    box.install()
    done = box.run(box.harness.headless("Say hello."), lich=False)
    assert box.harness.session_id(done)
    assert box.model.model_requests(), "the harness never asked the model"
    assert box.reports(0) == []


@pytest.mark.parametrize("name", RUNNABLE)
def test_a_projects_python_path_stays_out_of_the_registered_hook(sandbox, name):
    """The harness hands its environment to the hooks it runs; with the project's own
    select.py, json.py, _socket.py and fcntl.py on PYTHONPATH (and the project as the
    working folder), lichhook, registered as <python> -I -S <archive>, runs none of them."""
    box = sandbox(name)
    box.install()
    doctor = box.lichhook("doctor", "--verbose").stdout.decode()
    commands = [line for line in doctor.splitlines() if line.strip().startswith("command:")]
    assert commands and all(" -I -S " in line for line in commands), doctor
    _, markers = shadowing_project(box.project.parent)
    done = box.run(box.harness.headless("Say hello."), PYTHONPATH=str(box.project))
    assert box.accepted(1) == [(name, box.harness.session_id(done))], box.describe(done)
    assert sorted(p.name for p in markers.iterdir()) == []
