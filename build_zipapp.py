"""Build dist/lichhook.pyz: lichhook, its adapters and vendored pluggy, platformdirs, tomlkit and tomli.

    python build_zipapp.py [--out dist/lichhook.pyz]

The archive is byte-reproducible (sorted entries, fixed times and modes) and carries a
legacy unchecked-hash ``.pyc`` beside every ``.py``: zipimport never reads
``__pycache__`` and never writes bytecode, so without them every run recompiles every
module, and timestamp ``.pyc`` go stale when the user's time zone differs from the
build's. The ``.pyc`` match the Python that builds, compiled exactly as install compiles
each Python's copy (``lichhook.archive.compile_for``); other versions fall back to
the ``.py`` beside them until install compiles a copy for them. The format itself is
``lichhook.archive``'s, shared with install.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # imported by path from elsewhere (bench/, tests)
    sys.path.insert(0, str(ROOT))

from lichhook.archive import CompileError, compile_for, write_archive  # noqa: E402
from lichhook.install.copies.assemble import package_members, with_entry_point  # noqa: E402  (install assembles the same layout)

PINS = ROOT / "vendor.txt"
WHEEL_CACHE = ROOT / "build" / "wheels"
OLDEST_PYTHON = "3.9"


def pinned_wheels(pins: Path = PINS) -> dict:
    """name==version -> sha256, from the pins file."""
    wanted = {}
    for line in pins.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, _, digest = line.partition(" --hash=sha256:")
        wanted[spec.strip()] = digest.strip()
    return wanted


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download_wheels(cache: Path = WHEEL_CACHE, pins: Path = PINS) -> list:
    """The pinned wheels, fetched with pip once and checked against their hashes."""
    wanted = pinned_wheels(pins)
    cache.mkdir(parents=True, exist_ok=True)

    def matching() -> list:
        by_hash = {sha256_of(p): p for p in cache.glob("*.whl")}
        return [by_hash.get(digest) for digest in wanted.values()]

    found = matching()
    if None in found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--only-binary=:all:", "--platform", "any", "--implementation", "py",
             "--python-version", OLDEST_PYTHON, "--require-hashes", "-r", str(pins), "-d", str(cache)],
            check=True,
        )
        found = matching()
    missing = [spec for spec, path in zip(wanted, found) if path is None]
    if missing:
        raise SystemExit(f"build_zipapp: no wheel matching the pinned hash for {', '.join(missing)} in {cache}")
    return found


def wheel_members(wheel: Path) -> dict:
    """archive path -> bytes for a wheel's importable files and its dist-info."""
    files = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.endswith("/") or "/__pycache__/" in name or name.endswith((".pyc", "RECORD")):
                continue
            files[name] = zf.read(name)
    return files


def source_members(root: Path = ROOT) -> dict:
    """archive path -> bytes for lichhook/ (its adapters included)."""
    files = package_members(root / "lichhook")
    with_entry_point(files)
    return files


def build(out: Path, wheel_cache: Path = WHEEL_CACHE) -> Path:
    files = {}
    for wheel in download_wheels(wheel_cache):
        files.update(wheel_members(wheel))
    files.update(source_members())
    with tempfile.TemporaryDirectory(prefix="lichhook-build-") as tmp:
        sources = Path(tmp) / "sources.pyz"
        write_archive(files, sources)
        try:
            compiled = compile_for(sys.executable, sources)
        except CompileError as exc:
            raise SystemExit(f"build_zipapp: {exc}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(compiled)
    write_release(out)
    return out


def release_dir(out: Path) -> Path:
    """The release in lich-plugin's layout, beside the archive: dist/lich-plugin/."""
    return out.parent / "lich-plugin"


def write_release(out: Path) -> Path:
    """lichhook in lich-plugin's layout (lichhook.install.harnesses.release), around the archive
    just built, as reproducible as it: a folder written afresh, files in a fixed order,
    the same bytes from the same tree."""
    import shutil

    from lichhook.install.harnesses import release
    from lichhook.install.plugin import lichplugin

    folder = release_dir(out)
    if folder.exists():
        if not (folder / lichplugin.OURS_FILE).is_file():
            raise SystemExit(f"build_zipapp: {folder} is not a release this build wrote; move it away and build again")
        shutil.rmtree(folder)
    release.write(str(folder), release.contents(out.read_bytes()))
    return folder


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the lichhook zipapp.")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "lichhook.pyz", help="where to write the archive")
    parser.add_argument("--wheel-cache", type=Path, default=WHEEL_CACHE, help="folder for the pinned wheels")
    args = parser.parse_args(argv)
    out = build(args.out, args.wheel_cache)
    print(f"wrote {out} ({out.stat().st_size} bytes, sha256 {sha256_of(out)})")
    print(f"wrote {release_dir(out)} (lichhook in lich-plugin's layout: docs/lich-plugin.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
