"""An archive assembled from what is installed, for an install that does not run from one.

The registered hooks always run an archive (``PY -I -S HOOKS ...``): it needs no
site-packages, so a hook starts the same whether lichhook came from the release archive,
a wheel or a clone. A lichhook installed with pip or pipx has no archive to copy, so
``install`` assembles one here, in the layout build_zipapp.py writes: the lichhook
package this module belongs to, and each distribution lichhook depends on (pluggy,
platformdirs, tomlkit, and tomli before Python 3.11, as its own metadata lists them)
from this Python's installed copy. A release archive holds the hash-pinned wheels of
vendor.txt instead, resolved for Python 3.9; an assembled one holds whatever versions pip
chose for this Python, which may need a newer one (``oldest_python`` tells), so install
never hands it to an older Python. One assembled on 3.11 or later holds no tomli: a 3.9
or 3.10 harness given it reads TOML with tomlkit alone, right but slower on a large
``config.toml``.
"""

from __future__ import annotations

import operator
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Dict, Mapping, Optional, Tuple

from lichhook.archive import ENTRY_POINT, archive_bytes, members, with_bytecode
from lichhook.install.errors import AssembleError

# What an archive holds of a package folder: its modules and the data files install
# writes (the JS modules for opencode and omp, the skills). build_zipapp.py reads the same list.
MEMBER_SUFFIXES = (".py", ".js", ".cmd", ".ps1", ".json", ".md")
# The lichhook package folder this module belongs to (lichhook/install/copies/assemble.py).
PACKAGE = Path(__file__).resolve().parents[2]

# Files an installer adds to a distribution's .dist-info, which its wheel never had.
_INSTALLER_FILES = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")


def package_members(base: Path, prefix: str = "lichhook") -> Dict[str, bytes]:
    """archive path -> bytes for the package folder ``base``, under ``prefix``."""
    files = {}
    for path in sorted(base.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in MEMBER_SUFFIXES:
            # LF whatever the checkout: a Windows one (core.autocrlf) must build the same bytes.
            files[f"{prefix}/{path.relative_to(base).as_posix()}"] = path.read_bytes().replace(b"\r\n", b"\n")
    return files


def with_entry_point(files: Dict[str, bytes]) -> None:
    """Give the archive ``files`` its ``__main__.py``: lichhook's own (lichhook/__main__.py),
    which the build and install both use."""
    files[ENTRY_POINT] = files["lichhook/__main__.py"]


def dependencies(python: Tuple[int, int] = sys.version_info[:2]) -> list:
    """The names of the distributions lichhook needs at run time on a Python of version
    ``python`` (this one), from its own metadata (the ``dependencies`` of pyproject.toml),
    leaving out every extra's and those whose marker does not hold (tomli, from 3.11 on)."""
    try:
        wanted = metadata.requires("lichhook") or []
    except metadata.PackageNotFoundError:
        raise AssembleError("this lichhook is not an installed distribution (no lichhook metadata on this "
                            "Python's path)")
    names = []
    for line in wanted:
        requirement, _, marker = line.partition(";")
        if "extra" in marker or not marker_holds(marker, python):
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
        if match:
            names.append(match.group(0))
    return names


_PYTHON_VERSION = re.compile(r"""^\s*python_version\s*(<=|>=|==|!=|<|>)\s*(["'])(\d+)\.(\d+)\2\s*$""")
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
            "!=": operator.ne}


def marker_holds(marker: str, python: Tuple[int, int]) -> bool:
    """Whether the environment marker ``marker`` (empty: always) holds on a Python of
    version ``python``. lichhook's own markers are ``python_version`` bounds joined by
    ``and``, all this reads without the ``packaging`` library; any other marker raises
    AssembleError naming it, so a new kind is taught here before it ships."""
    if not marker.strip():
        return True
    for clause in marker.split(" and "):
        found = _PYTHON_VERSION.match(clause)
        if found is None:
            raise AssembleError(f"lichhook's dependency marker {marker.strip()!r} is not one install can judge "
                                "(only python_version bounds joined by 'and'); install lichhook from the release "
                                "archive instead")
        bound = (int(found.group(3)), int(found.group(4)))
        if not _COMPARE[found.group(1)](python, bound):
            return False
    return True


def distribution_members(name: str) -> Dict[str, bytes]:
    """archive path -> bytes for the installed distribution ``name``: its importable files
    and its .dist-info, as its wheel held them."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise AssembleError(f"{name}, which lichhook needs, is not installed in this Python")
    listed = dist.files
    if not listed:
        raise AssembleError(f"the installed {name} lists no files (no RECORD in its .dist-info)")
    files = {}
    for entry in listed:
        parts = entry.parts
        if not parts or parts[0] == ".." or "__pycache__" in parts or entry.name.endswith((".pyc", ".pth")):
            continue  # scripts, bytecode and path hooks are the installer's, not the wheel's
        if parts[0].endswith(".dist-info") and entry.name in _INSTALLER_FILES:
            continue
        path = Path(str(dist.locate_file(entry)))
        try:
            files[entry.as_posix()] = path.read_bytes()
        except OSError as exc:
            raise AssembleError(f"cannot read {path} of the installed {name}: {exc.strerror or exc}")
    return files


def assembled() -> bytes:
    """The complete archive, with bytecode for the running Python, of the lichhook this
    code belongs to and the installed distributions it needs. Raises AssembleError."""
    files: Dict[str, bytes] = {}
    for name in dependencies():
        files.update(distribution_members(name))
    files.update(package_members(PACKAGE))
    with_entry_point(files)
    return archive_bytes(with_bytecode(files))


def where_installed() -> str:
    """The folder this lichhook runs from, for messages."""
    return str(PACKAGE)


_LOWER_BOUND = re.compile(r"^\s*(>=|>|~=|==)\s*(\d+)\.(\d+)")


def oldest_python(archive: bytes) -> Optional[Tuple[Tuple[int, int], str]]:
    """The oldest Python every distribution in ``archive`` accepts (the highest lower
    bound of their Requires-Python), with the distribution that sets it, or None when
    none sets one. Only lower bounds count: an archive is never handed to a Python newer
    than the one that built it."""
    _, files = members(archive)
    return oldest_of({name: data for name, data in files.items() if name.endswith(".dist-info/METADATA")})


def oldest_of(metadata_files: Mapping[str, bytes]) -> Optional[Tuple[Tuple[int, int], str]]:
    """``oldest_python`` over the METADATA files ``metadata_files`` (path -> bytes)."""
    best: Optional[Tuple[Tuple[int, int], str]] = None
    for path, data in sorted(metadata_files.items()):
        text = data.decode("utf-8", "replace")
        found = re.search(r"^Requires-Python:(.*)$", text, re.MULTILINE)
        if not found:
            continue
        for clause in found.group(1).split(","):
            bound = _LOWER_BOUND.match(clause)
            if bound:
                version = (int(bound.group(2)), int(bound.group(3)))
                if best is None or version > best[0]:
                    best = (version, path.split("/", 1)[0][: -len(".dist-info")])
    return best
