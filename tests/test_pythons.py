"""The Pythons lichhook says it supports are the ones CI tests: one list, and every place
that states it agrees with it."""

from __future__ import annotations

import os
import re

from lichhook._version import TESTED_PYTHONS
from testkit import matrix, sidpython
from testkit.constants import ROOT


def test_the_list_is_every_minor_version_from_the_oldest_to_the_newest():
    minors = [int(v.split(".")[1]) for v in TESTED_PYTHONS]
    assert all(v.startswith("3.") for v in TESTED_PYTHONS)
    assert minors == list(range(minors[0], minors[-1] + 1))


def test_pyproject_requires_the_oldest_tested_python():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'requires-python = ">={TESTED_PYTHONS[0]}"' in text


def test_the_sid_builds_are_tested_pythons():
    assert set(sidpython.VERSIONS) <= set(TESTED_PYTHONS)


def test_readme_and_testing_doc_state_the_tested_range():
    stated = f"Python {TESTED_PYTHONS[0]} to {TESTED_PYTHONS[-1]}"
    for page in (ROOT / "README.md", ROOT / "docs" / "testing.md"):
        assert stated in page.read_text(encoding="utf-8"), page


def test_the_ci_runs_the_matrix_on_every_tested_python():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m testkit.sidpython" in ci and "python -m testkit.matrix --skip-running --spread" in ci


def test_a_deb_file_name_gives_its_version_with_the_epoch():
    assert sidpython._deb_version("zlib1g_1%3a1.3.dfsg-4_amd64.deb") == "1:1.3.dfsg-4"
    assert sidpython._deb_version("python3.15_3.15.2-1_amd64.deb") == "3.15.2-1"


def test_the_matrix_finds_a_pyenv_python_by_its_highest_patch_release(tmp_path):
    for name in ("3.12.1", "3.12.10", "3.12.2", "3.12.10-dev"):
        folder = tmp_path / "versions" / name / "bin"
        folder.mkdir(parents=True)
        (folder / "python3.12").write_text("")
    found = matrix.find("3.12", {"PYENV_ROOT": str(tmp_path), "LICHHOOK_SID_PYTHON": str(tmp_path / "none"),
                                 "PATH": ""})
    assert found == str(tmp_path / "versions" / "3.12.10" / "bin" / "python3.12")
    assert re.fullmatch(r".*/python3\.12", found)


def test_the_pythons_between_share_the_suite_and_the_ends_run_it_all():
    plan = matrix.shares(["3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15"], running="3.11")
    assert plan == {"3.9": None, "3.10": "1/4", "3.12": "2/4", "3.13": "3/4", "3.14": "4/4", "3.15": None}
    assert matrix.shares(["3.9", "3.10", "3.11"], running="3.9") == {"3.10": "1/1", "3.11": None}
    ids = [f"tests/test_x.py::test_{i}[{i % 7}]" for i in range(500)]
    placed = [[k for k in range(1, 5) if matrix.in_share(nodeid, f"{k}/4")] for nodeid in ids]
    assert all(len(p) == 1 for p in placed)  # every test in exactly one share
    assert all(60 < sum(p == [k] for p in placed) < 190 for k in range(1, 5))  # and no share empty or most


def test_a_share_of_the_suite_runs_only_its_tests(tmp_path):
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    (tmp_path / "test_many.py").write_text("import pytest\n\n@pytest.mark.parametrize('i', range(40))\n"
                                           "def test_one(i):\n    pass\n")
    counts = []
    for k in (1, 2, 3):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, LICHHOOK_SHARE=f"{k}/3", PYTHONPATH=str(ROOT)))
        assert done.returncode == 0, done.stdout + done.stderr
        counts.append(int(re.search(r"(\d+) passed", done.stdout).group(1)))
    assert sum(counts) == 40 and all(counts)
