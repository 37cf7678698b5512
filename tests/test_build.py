"""The build: reproducible, bytecode that zipimport really uses, vendored for Python 3.9."""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import build_zipapp
from testkit.archive import same_copy
from testkit.constants import ROOT
from testkit.environment import lich_env, other_pythons


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_version(run):
    done = run("--version")
    assert done.returncode == 0
    from lichhook import __version__

    assert done.stdout.decode().startswith(f"lichhook {__version__}")


@pytest.mark.parametrize("args", [["--help"], ["mcp", "--help"]])
def test_help_spells_the_interpreter_as_this_os_names_it(run, args):
    # python3 on macOS, Debian and Ubuntu (where `python` may not exist); py on Windows.
    word = "py" if sys.platform == "win32" else "python3"
    done = run(*args)
    assert done.returncode == 0 and done.stdout.decode().startswith(f"usage: {word} lichhook.pyz ")


def test_two_builds_are_byte_identical(pyz, tmp_path):
    again = tmp_path / "again.pyz"
    # Touch a source file: mtimes must not leak into the archive.
    os.utime(ROOT / "lichhook" / "cli.py")
    subprocess.run([sys.executable, str(ROOT / "build_zipapp.py"), "--out", str(again)], check=True,
                   stdout=subprocess.DEVNULL)
    assert same_copy(again.read_bytes(), pyz.read_bytes())  # byte for byte from 3.11 on


def test_every_module_has_a_legacy_pyc_beside_its_source(pyz):
    with zipfile.ZipFile(pyz) as zf:
        names = set(zf.namelist())
    sources = {n for n in names if n.endswith(".py")}
    assert "lichhook/adapters/claude.py" in sources and "pluggy/__init__.py" in sources
    assert not [n for n in names if "__pycache__" in n]
    assert {s[:-3] + ".pyc" for s in sources} <= names


def test_the_entry_point_is_the_first_member_stored_as_is(pyz):
    """A hook started just before an upgrade may read its entry point from the new archive
    at the old one's offset (lichhook/__main__.py): it comes first, uncompressed (no zlib
    before lichhook's code runs), and is lichhook's own __main__.py, in the complete
    archive and in the hooks archive alike."""
    from lichhook.hotset import hooks_archive

    for data in (pyz.read_bytes(), hooks_archive(pyz.read_bytes())):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            first = zf.infolist()[0]
            assert (first.filename, first.compress_type) == ("__main__.py", zipfile.ZIP_STORED)
            assert zf.read(first) == (ROOT / "lichhook" / "__main__.py").read_bytes()


def test_vendored_for_the_oldest_python(pyz):
    with zipfile.ZipFile(pyz) as zf:
        names = zf.namelist()
    pins = build_zipapp.pinned_wheels()
    for spec in pins:
        name, version = spec.split("==")
        assert f"{name}-{version}.dist-info/METADATA" in names


def test_every_dependency_is_vendored_whatever_its_marker(pyz):
    """The archive runs on every Python from 3.9: it carries each distribution lichhook
    needs on any of them (tomli, needed before 3.11 only, too), pinned in vendor.txt."""
    from importlib import metadata

    pinned = {spec.split("==")[0].lower() for spec in build_zipapp.pinned_wheels()}
    needed = {re.match(r"[A-Za-z0-9._-]+", line).group(0).lower()
              for line in metadata.requires("lichhook") or [] if "extra" not in line}
    assert "tomli" in needed and needed == pinned


TOML_READER = """
import sys
sys.path.insert(0, sys.argv[1])
from lichhook.install.config import tomlconfig
print(tomlconfig.tomllib.__name__, tomlconfig.tomllib.__file__)
"""


@pytest.mark.parametrize("python", [sys.executable, *other_pythons()])
def test_the_archive_reads_toml_values_with_tomllib_or_its_vendored_tomli(pyz, python):
    """tomlkit takes seconds to read thousands of tables: every Python must find the fast
    reader, the standard one from 3.11 on and the archive's tomli before."""
    done = subprocess.run([python, "-I", "-S", "-c", TOML_READER, str(pyz)], capture_output=True, check=True)
    name, where = done.stdout.decode().split()
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 11))"], capture_output=True,
                             check=True).stdout.strip()
    if version == b"True":
        assert name == "tomllib" and str(pyz) not in where
    else:
        assert name == "tomli" and where.startswith(str(pyz))


PROBE = """
import sys, json
sys.path.insert(0, sys.argv[1])
import lichhook.cli, lichhook.report, lichhook.adapters.claude, pluggy, platformdirs, lichhook.host
mods = {m: getattr(sys.modules[m], '__file__', '') for m in
        ['lichhook.cli', 'lichhook.report', 'lichhook.adapters.claude', 'pluggy', 'platformdirs', 'lichhook.host']}
print(json.dumps(mods))
"""


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_modules_load_from_pyc_in_any_time_zone(pyz, tz):
    env = dict(os.environ, TZ=tz)
    done = subprocess.run([sys.executable, "-c", PROBE, str(pyz)], env=env, capture_output=True, check=True)
    files = json.loads(done.stdout)
    assert all(f.endswith(".pyc") and str(pyz) in f for f in files.values()), files


@pytest.mark.skipif(not other_pythons(), reason="no other Python version installed here")
@pytest.mark.parametrize("python", other_pythons())
def test_other_python_versions_fall_back_to_source_and_report(run, standin, python):
    done = run("codex", stdin=json.dumps({"session_id": "other-python"}), env=lich_env(standin), python=python)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    (report,) = standin.wait_for(1, timeout=10)
    assert report.accepted["provider_session_id"] == "other-python"
    listing = subprocess.run([python, str(run.pyz), "adapters"], capture_output=True, env=run.env)
    assert listing.returncode == 0 and b"antigravity" in listing.stdout


def test_pip_step_asks_for_hash_checked_pure_wheels_for_3_9(fp, tmp_path, pyz):
    real_cache = ROOT / "build" / "wheels"  # filled by the real build of the pyz fixture
    cache = tmp_path / "wheels"
    calls = []

    def fake_download(process):
        calls.append(process.args)
        dest = Path(process.args[process.args.index("-d") + 1])
        for wheel in real_cache.glob("*.whl"):
            shutil.copy(wheel, dest)

    fp.register([sys.executable, "-m", "pip", "download", fp.any()], callback=fake_download)
    assert list(real_cache.glob("*.whl")), f"the real build left no wheels in {real_cache}"
    wheels = build_zipapp.download_wheels(cache)
    (args,) = calls
    for flag in ("--no-deps", "--only-binary=:all:", "--require-hashes"):
        assert flag in args
    assert args[args.index("--python-version") + 1] == "3.9"
    assert args[args.index("--platform") + 1] == "any"
    assert args[args.index("--implementation") + 1] == "py"
    assert sorted(sha256(w) for w in wheels) == sorted(build_zipapp.pinned_wheels().values())
    assert all(w.parent == cache for w in wheels)
    # A second call finds the cache and does not run pip again.
    build_zipapp.download_wheels(cache)
    assert len(calls) == 1


def test_a_wheel_with_the_wrong_hash_is_refused(fp, tmp_path):
    cache = tmp_path / "wheels"

    def fake_download(process):
        (cache / "pluggy-1.6.0-py3-none-any.whl").write_bytes(b"tampered")

    fp.register([sys.executable, "-m", "pip", "download", fp.any()], callback=fake_download)
    with pytest.raises(SystemExit) as refused:
        build_zipapp.download_wheels(cache)
    assert "pinned hash" in str(refused.value)


# ---- bytecode for the interpreter a hook runs with (lichhook.archive) ----------------------

from lichhook import archive  # noqa: E402


def compiled_for(python: str, source: Path, out: Path) -> Path:
    """``source`` compiled for ``python`` as install and the build compile it."""
    out.write_bytes(archive.compile_for(python, source))
    return out


def test_compiling_with_the_building_python_gives_the_archive_back(pyz, tmp_path):
    again = compiled_for(sys.executable, pyz, tmp_path / "again.pyz")
    assert same_copy(again.read_bytes(), pyz.read_bytes())
    assert archive.bytecode_magic(again) == archive.bytecode_magic(pyz)


def test_the_archive_says_which_python_its_bytecode_is_for(pyz, tmp_path):
    import importlib.util

    assert archive.bytecode_magic(pyz) == importlib.util.MAGIC_NUMBER
    mine = archive.Bytecode("{}.{}".format(*sys.version_info[:2]), importlib.util.MAGIC_NUMBER)
    assert archive.running_bytecode() == archive.interpreter_bytecode(sys.executable) == mine
    assert archive.bytecode_mismatch(pyz, sys.executable) is None
    other = archive.Bytecode("3.99", (3999).to_bytes(2, "little") + b"\r\n")  # as a newer Python would answer
    problem = archive.bytecode_mismatch(pyz, "/opt/py/bin/python3", other)
    assert problem and "(Python 3.99)" in problem and "install again" in problem
    (tmp_path / "plain.zip").write_bytes(b"not a zip")
    assert archive.bytecode_magic(tmp_path / "plain.zip") is None
    problem = archive.bytecode_mismatch(pyz, str(tmp_path / "no-python"))
    assert problem and "cannot be run" in problem
    assert archive.interpreter_bytecode(str(tmp_path / "no-python")) is None


@pytest.mark.skipif(not other_pythons(), reason="no other Python version installed here")
@pytest.mark.parametrize("python", other_pythons())
def test_recompiled_for_another_python_its_modules_load_from_bytecode(pyz, tmp_path, python):
    problem = archive.bytecode_mismatch(pyz, python)
    theirs = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                            capture_output=True, check=True).stdout.decode().strip()
    assert problem and f"Python {theirs}" in problem and "install again" in problem
    before = json.loads(subprocess.run([python, "-c", PROBE, str(pyz)], capture_output=True, check=True).stdout)
    assert all(f.endswith(".py") for f in before.values()), before  # compiled from source at every run

    out = compiled_for(python, pyz, tmp_path / "for-other.pyz")
    assert archive.bytecode_mismatch(out, python) is None
    assert archive.interpreter_bytecode(python) == archive.Bytecode(theirs, archive.bytecode_magic(out))
    after = json.loads(subprocess.run([python, "-c", PROBE, str(out)], capture_output=True, check=True).stdout)
    assert all(f.endswith(".pyc") and str(out) in f for f in after.values()), after
    with zipfile.ZipFile(pyz) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        assert all(a.read(n) == b.read(n) for n in a.namelist() if not n.endswith(".pyc"))
    assert out.read_bytes().startswith(b"#!/usr/bin/env python3\n")


ASK = ("import sys; sys.path.insert(0, sys.argv[1]); from lichhook.install.copies.stable import prepared_for; "
       "from lichhook.hotset import hooks_archive; copy = prepared_for(sys.argv[2], sys.argv[3]); "
       "sys.stdout.buffer.write(b'%012d' % len(copy) + copy + hooks_archive(copy))")


@pytest.mark.parametrize("python", [sys.executable] + other_pythons())
def test_each_pythons_copy_is_the_same_whoever_installs_it_from_whichever_build(pyz, tmp_path, python):
    # install run by this Python or another, from this build or one whose bytecode is
    # another Python's: the copy for ``python`` and its hooks archive, byte for byte.
    askers = [sys.executable] + [p for p in other_pythons() if p != python][:1]
    elsewhere = [p for p in other_pythons() if p != python][:1] or [sys.executable]
    sources = [pyz, compiled_for(elsewhere[0], pyz, tmp_path / "built-elsewhere.pyz")]
    answers = {subprocess.run([asker, "-I", "-c", ASK, str(pyz), python, str(source)], capture_output=True,
                              check=True, timeout=300).stdout
               for asker in askers for source in sources}
    bytecode = archive.interpreter_bytecode(python)
    assert bytecode is not None
    pairs = []
    for answer in answers:
        size = int(answer[:12])
        pairs.append((answer[12:12 + size], answer[12 + size:]))
    if tuple(int(part) for part in bytecode.version.split(".")) >= (3, 11):
        assert len(answers) == 1
    else:
        # 3.9 and 3.10 mark a string in the bytecode as shared when anything else in the
        # compiling process holds it, which varies from run to run: the program is the
        # same, and install compares programs (archive.serves), never these flags.
        assert len({archive.members(copy)[0] for copy, _ in pairs}) == 1
        first = archive.members(pairs[0][0])[1]
        assert all(archive.same_program(archive.members(copy)[1], first) for copy, _ in pairs)
    copy, hooks = pairs[0]
    assert archive.members(copy)[1].keys() > archive.members(hooks)[1].keys()
    assert archive.bytecode_of(archive.members(copy)[1]) == bytecode.magic


def test_compiling_keeps_the_archives_own_member_times(pyz, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = compiled_for(sys.executable, pyz, tmp_path / "again.pyz")
    with zipfile.ZipFile(pyz) as a, zipfile.ZipFile(out) as b:
        assert {i.date_time for i in b.infolist()} == {i.date_time for i in a.infolist()} == {archive.FIXED_TIME}


def test_a_copy_serves_a_python_when_it_holds_the_same_program_compiled_for_it(pyz, tmp_path):
    import importlib.util

    magic = importlib.util.MAGIC_NUMBER
    shebang, files = archive.read_archive(pyz)
    assert archive.bytecode_of(files) == magic
    assert archive.serves(pyz, pyz, magic)
    assert not archive.serves(pyz, pyz, (3413).to_bytes(2, "little") + b"\r\n")  # another Python's
    changed = tmp_path / "changed.pyz"
    archive.write_archive(dict(files, **{"lichhook/NEWS.txt": b"news"}), changed, shebang)
    assert not archive.serves(changed, pyz, magic) and not archive.serves(pyz, changed, magic)
    without = {n: d for n, d in files.items() if n != "lichhook/cli.pyc"}
    assert archive.bytecode_of(without) is None  # a module without bytecode: not compiled for anyone
    assert not archive.serves(tmp_path / "absent.pyz", pyz, magic)


def test_an_archive_write_that_fails_leaves_no_temporary_file(tmp_path):
    out = tmp_path / "lichhook.pyz"
    out.mkdir()  # a folder where the archive goes: the final rename fails
    (out / "kept").write_text("mine")
    with pytest.raises(OSError):
        archive.write_archive({"__main__.py": b"print(1)\n"}, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lichhook.pyz"]
    assert (out / "kept").read_text() == "mine"


def test_a_checkout_with_crlf_line_ends_builds_the_same_members(tmp_path):
    """A Windows checkout without .gitattributes' eol=lf (core.autocrlf) holds CRLF sources."""
    for folder in ("lichhook", "adapters"):
        if not (ROOT / folder).is_dir():
            continue
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                copy = tmp_path / path.relative_to(ROOT)
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    crlf = build_zipapp.source_members(tmp_path)
    assert b"\r\n" in (tmp_path / "lichhook" / "cli.py").read_bytes()
    assert crlf == build_zipapp.source_members(ROOT)  # so the archive, compiled from these, is too


def test_gitattributes_checks_every_text_file_out_with_lf():
    done = subprocess.run(["git", "check-attr", "eol", "--", "lichhook/cli.py", "windows/install.ps1",
                           "tests/fixtures"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    assert all(line.endswith(": eol: lf") for line in done.stdout.splitlines()), done.stdout
