"""The CPython versions newer than pyenv has here, as Debian sid builds them.

``python -m testkit.sidpython`` fetches Debian sid's binary packages of CPython 3.14 and
3.15 (the interpreter, its standard library, ``venv`` with the wheels ``ensurepip``
installs, and the runtime libraries they link) with ``apt-get download`` against apt lists
of its own (the system's apt sources and lists are left alone), unpacks them with
``dpkg-deb -x`` into one folder, and points each interpreter at sid's own loader and
libraries with ``patchelf``, since the host's C library is older than the one sid builds
against. It prints one interpreter path a line.

The folder (``/opt/sid-python``, or ``LICHHOOK_SID_PYTHON``) keeps the packages and a stamp
of what was unpacked: a second run with every interpreter answering does nothing and needs
no network. ``--refresh`` fetches the lists again and rebuilds when sid has moved on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

VERSIONS = ("3.14", "3.15")
ENV_VAR = "LICHHOOK_SID_PYTHON"
DEFAULT_ROOT = Path("/opt/sid-python")
MIRROR = "http://deb.debian.org/debian"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
ARCH_TRIPLET = "x86_64-linux-gnu"
# Debian's package names, per Python; together with their runtime libraries (the closure
# below) they are what an interpreter, its standard library and `-m venv` need.
PER_VERSION = ("python{v}", "python{v}-minimal", "python{v}-venv", "libpython{v}-minimal", "libpython{v}-stdlib")
# The closure follows only packages that ship shared libraries or interpreter files: the
# rest of what sid's Python depends on (tzdata, netbase, media-types, debconf and what it
# pulls in) is configuration the host already has in its own /etc and /usr/share.
FOLLOW_PREFIXES = ("lib", "zlib1g", "python3")
SKIP = frozenset({"libc-gconv-modules-extra", "libdebian-installer4", "libnewt0.52", "libslang2", "libtextwrap1", "libselinux1", "libpcre2-8-0", "libdb5.3t64"})
# ensurepip's wheels; Debian's ensurepip takes them from /usr/share/python-wheels.
WHEELS = ("python3-pip-whl", "python3-setuptools-whl")
STAMP = "stamp"
# Raised whenever build() changes what it makes, so the stamp of an older build no longer matches.
RECIPE = 3
TIMEOUT = 600


class Missing(Exception):
    """Something the interpreters cannot be had without; the message says what and how to fix it."""


def root_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return Path(environ.get(ENV_VAR) or DEFAULT_ROOT)


def interpreter(root: Path, version: str) -> Path:
    return root / "usr" / "bin" / f"python{version}"


def interpreters(environ: Mapping[str, str] = os.environ) -> List[Path]:
    """The interpreters already obtained and runnable here, oldest first (none: [])."""
    root = root_dir(environ) / "root"
    return [interpreter(root, v) for v in VERSIONS if _answers(interpreter(root, v))]


def _answers(python: Path) -> bool:
    if not python.is_file():
        return False
    try:
        done = subprocess.run([str(python), "-c", "import ssl, sqlite3, ctypes, zlib, lzma, bz2"],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _run(argv: Sequence[str], what: str, cwd: Optional[Path] = None) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd, timeout=TIMEOUT)
    except FileNotFoundError:
        raise Missing(f"{what}: {argv[0]} is not installed here (it comes with Debian's apt and dpkg)")
    except subprocess.TimeoutExpired:
        raise Missing(f"{what}: {argv[0]} gave no answer in {TIMEOUT} s (is {MIRROR} reachable?)")
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        raise Missing(f"{what} failed (exit {done.returncode}): " + " | ".join(tail))
    return done.stdout


def host_release() -> str:
    """The host's Debian codename ("bookworm"), or "" when it does not say."""
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


class Apt:
    """apt-get and apt-cache with sid's lists in a folder of their own."""

    def __init__(self, state: Path) -> None:
        self.state = state
        etc = state / "etc"
        for sub in (etc / "sources.list.d", etc / "preferences.d", state / "lists" / "partial",
                    state / "cache" / "archives" / "partial"):
            sub.mkdir(parents=True, exist_ok=True)
        if not KEYRING.is_file():
            raise Missing(f"{KEYRING} is missing: install Debian's debian-archive-keyring package")
        # sid for the interpreters; the host's own release for patchelf, which must run on the host.
        lines = [f"deb [signed-by={KEYRING}] {MIRROR} sid main\n"]
        if host_release():
            lines.append(f"deb [signed-by={KEYRING}] {MIRROR} {host_release()} main\n")
        (etc / "sources.list").write_text("".join(lines), encoding="utf-8")
        self.options = [
            "-o", f"Dir::Etc::SourceList={etc / 'sources.list'}",
            "-o", f"Dir::Etc::SourceParts={etc / 'sources.list.d'}",
            "-o", f"Dir::Etc::Preferences={etc / 'preferences'}",
            "-o", f"Dir::Etc::PreferencesParts={etc / 'preferences.d'}",
            "-o", f"Dir::State::Lists={state / 'lists'}",
            "-o", f"Dir::Cache={state / 'cache'}",
        ]

    def update(self) -> None:
        _run(["apt-get", *self.options, "-qq", "update"], "apt-get update for Debian sid")

    def has_lists(self) -> bool:
        names = [p.name for p in (self.state / "lists").iterdir() if "_Packages" in p.name]
        return all(any(f"_dists_{release}_" in n for n in names) for release in ("sid", host_release()) if release)

    def depends(self, names: Sequence[str]) -> List[str]:
        out = _run(["apt-cache", *self.options, "depends", "--recurse", "--no-recommends", "--no-suggests",
                    "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *names],
                   "apt-cache depends " + " ".join(names))
        return sorted({line.strip() for line in out.splitlines() if line and not line[0].isspace()
                       and not line.startswith("<")})

    def candidates(self, names: Sequence[str]) -> Dict[str, str]:
        """name -> the version apt would take, for those of ``names`` the lists hold (one call)."""
        out = _run(["apt-cache", *self.options, "policy", *names], "apt-cache policy")
        found: Dict[str, str] = {}
        name = ""
        for line in out.splitlines():
            if line and not line[0].isspace() and line.endswith(":"):
                name = line[:-1]
            elif line.strip().startswith("Candidate:") and name:
                version = line.split(":", 1)[1].strip()
                if version != "(none)":
                    found[name] = version
        return found

    def download(self, names: Sequence[str], into: Path) -> None:
        _run(["apt-get", *self.options, "-qq", "download", *names], "apt-get download from Debian sid", cwd=into)


def wanted(apt: Apt, versions: Sequence[str] = VERSIONS) -> Dict[str, str]:
    """package -> sid's version, for every package the interpreters need."""
    top = [name.format(v=v) for v in versions for name in PER_VERSION]
    known = apt.candidates(top)
    missing = [name for name in top if name not in known]
    if missing:
        raise Missing("Debian sid has no package " + ", ".join(missing)
                      + ": set LICHHOOK_SID_VERSIONS to the Pythons sid still builds, or run with --refresh")
    names = [n for n in apt.depends(top) if n.startswith(FOLLOW_PREFIXES) and n not in SKIP]
    names += [w for w in WHEELS if w not in names]
    found = apt.candidates(sorted(set(names)))
    lacking = sorted(set(names) - set(found))
    if lacking:
        raise Missing("Debian sid has no package " + ", ".join(lacking))
    return found


def _patchelf(work: Path) -> Path:
    """patchelf of the host's own Debian release (it runs on the host's C library), through
    the same private lists, unpacked, not installed."""
    found = shutil.which("patchelf")
    if found:
        return Path(found)
    unpacked = work / "patchelf"
    tool = unpacked / "usr" / "bin" / "patchelf"
    if tool.is_file():
        return tool
    debs = work / "patchelf-deb"
    debs.mkdir(parents=True, exist_ok=True)
    release = host_release()
    if not release:
        raise Missing("patchelf is not installed and /etc/os-release names no Debian release: apt-get install patchelf")
    Apt(work / "apt").download([f"patchelf/{release}"], debs)
    for deb in debs.glob("patchelf_*.deb"):
        _run(["dpkg-deb", "-x", str(deb), str(unpacked)], f"dpkg-deb -x {deb.name}")
    if not tool.is_file():
        raise Missing("patchelf could not be had: apt-get install patchelf")
    return tool


def build(base: Path, packages: Mapping[str, str], versions: Sequence[str] = VERSIONS) -> Path:
    """Unpacks the packages into a fresh ``base/root`` and patches each interpreter; returns it."""
    debs = base / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    have = {p.name for p in debs.glob("*.deb")}
    need = [f"{n}={v}" for n, v in packages.items() if not any(h.startswith(f"{n}_") and
                                                              _deb_version(h) == v for h in have)]
    if need:
        Apt(base / "apt").download(need, debs)
    patchelf = _patchelf(base)
    fresh = Path(tempfile.mkdtemp(prefix="root.", dir=base))
    for name, version in packages.items():
        deb = next((p for p in debs.glob(f"{name}_*.deb") if _deb_version(p.name) == version), None)
        if deb is None:
            raise Missing(f"{name} {version} did not download into {debs}")
        _run(["dpkg-deb", "-x", str(deb), str(fresh)], f"dpkg-deb -x {deb.name}")
    libdir = fresh / "usr" / "lib" / ARCH_TRIPLET
    loader = libdir / "ld-linux-x86-64.so.2"
    if not loader.is_file():
        raise Missing(f"sid's libc6 did not unpack its loader at {loader}")
    final = base / "root"
    # The paths written into each binary are where the folder ends up, not where it is built.
    final_lib = final / "usr" / "lib" / ARCH_TRIPLET
    for v in versions:
        python = interpreter(fresh, v)
        # DT_RPATH, not RUNPATH: it also applies to what the extension modules load (libssl, libffi ...).
        _run([str(patchelf), "--set-interpreter", str(final_lib / loader.name), "--force-rpath",
              "--set-rpath", str(final_lib), str(python)], f"patchelf {python.name}")
    _point_ensurepip(fresh, final, versions)
    old = base / "root.old"
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        final.rename(old)
    fresh.rename(final)
    if old.exists():
        shutil.rmtree(old)
    (base / STAMP).write_text(_stamp(packages), encoding="utf-8")
    return final


def _point_ensurepip(fresh: Path, final: Path, versions: Sequence[str]) -> None:
    """Debian's ensurepip takes its wheels from the build's WHEEL_PKG_DIR, /usr/share/python-wheels;
    these interpreters take sid's from their own folder instead of whatever the host has there."""
    wheels = str(final / "usr" / "share" / "python-wheels") + "/"
    for v in versions:
        lib = fresh / "usr" / "lib" / f"python{v}"
        for data in [*lib.glob("_sysconfigdata_*.py"), *lib.glob("_sysconfig_vars_*.json")]:
            if data.is_symlink():  # one of the two names links to the other
                continue
            lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
            data.write_text("".join(line.replace("/usr/share/python-wheels/", wheels) if "WHEEL_PKG_DIR" in line
                                    else line for line in lines), encoding="utf-8")


def _stamp(packages: Mapping[str, str]) -> str:
    return f"recipe {RECIPE}\n" + "".join(f"{n} {v}\n" for n, v in sorted(packages.items()))


def _deb_version(filename: str) -> str:
    # name_version_arch.deb, with the epoch's ':' written as '%3a'.
    return filename.split("_")[1].replace("%3a", ":")


def obtain(base: Path, refresh: bool = False, versions: Sequence[str] = VERSIONS) -> List[Path]:
    root = base / "root"
    stamp = base / STAMP
    current = stamp.is_file() and stamp.read_text(encoding="utf-8").startswith(f"recipe {RECIPE}\n")
    if not refresh and current and all(_answers(interpreter(root, v)) for v in versions):
        return [interpreter(root, v) for v in versions]
    apt = Apt(base / "apt")
    if refresh or not apt.has_lists():
        apt.update()
    packages = wanted(apt, versions)
    same = stamp.is_file() and stamp.read_text(encoding="utf-8") == _stamp(packages)
    if not (same and all(_answers(interpreter(root, v)) for v in versions)):
        root = build(base, packages, versions)
    broken = [str(interpreter(root, v)) for v in versions if not _answers(interpreter(root, v))]
    if broken:
        raise Missing("unpacked but does not run: " + ", ".join(broken)
                      + f" (try again with --refresh, or remove {base})")
    return [interpreter(root, v) for v in versions]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testkit.sidpython", description=__doc__.split("\n\n")[0])
    parser.add_argument("--refresh", action="store_true", help="fetch sid's lists again and rebuild if sid moved on")
    parser.add_argument("--list", action="store_true", help="print the interpreters already here; fetch nothing")
    args = parser.parse_args(argv)
    if args.list:
        for python in interpreters():
            print(python)
        return 0
    versions = tuple(os.environ.get("LICHHOOK_SID_VERSIONS", " ".join(VERSIONS)).split())
    base = root_dir()
    try:
        base.mkdir(parents=True, exist_ok=True)
        found = obtain(base, refresh=args.refresh, versions=versions)
    except (Missing, OSError) as exc:
        print(f"sid-python: {exc}", file=sys.stderr)
        return 1
    for python in found:
        print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
