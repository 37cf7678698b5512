"""windows/install.ps1, checked on a machine without PowerShell.

No PowerShell installs here (npm's ``pwsh`` package downloads its binary from outside the
registry at install time; PyPI's ``pwsh`` wraps a .NET runtime this machine lacks), so
the parts of the script that decide something are transcribed to Python below, each
transcription held to the script's own code, and run against real interpreters with the
byte encodings Windows uses. Where ``pwsh`` is on PATH, the last tests run the script
itself.

The rules these tests stand on:
- CPython on Windows encodes ``sys.stdout`` to a pipe with the ANSI code page
  (``locale.getpreferredencoding()``: cp1252 in Western Europe and the Americas, cp1251
  Cyrillic, cp932 Japanese), and only a console gets full Unicode (PEP 528).
  ``PYTHONIOENCODING`` sets that encoding here the way the ANSI page does there.
- PowerShell decodes a native program's output with ``[Console]::OutputEncoding``, which
  defaults to the console's OEM code page (cp437 US, cp850 Western Europe, cp866
  Cyrillic, cp932 Japanese) (about_Character_Encoding).
- Windows PowerShell 5.1, under ``$ErrorActionPreference = 'Stop'``, turns each line a
  native program writes to a redirected stderr into a terminating error, ``2>$null``
  included; PowerShell 7.2 stopped applying the preference to stderr
  (about_Redirection; the PSNotApplyErrorActionToStderr change).
- ``Resolve-Path`` returns a PathInfo whose ``Path`` is provider-qualified outside a
  drive (``Microsoft.PowerShell.Core\\FileSystem::\\\\server\\share\\...``), while
  ``ProviderPath`` is the path the file system knows (about_Providers).
- The Microsoft Store's App Execution Alias stubs are ``python.exe`` and ``python3.exe``
  in ``%LOCALAPPDATA%\\Microsoft\\WindowsApps``; run with arguments they print that Python
  was not found and exit 9009 (or 49); a Store Python answers through aliases in the same
  folder (../shared/reference/harnesses.md, section 7).
"""

from __future__ import annotations

import ntpath
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest

from testkit.constants import ROOT
from testkit.windows import crt_split, windows_powershell_51_line

SCRIPT = ROOT / "windows" / "install.ps1"
PYENV = "/root/.pyenv/versions"


def script_text() -> str:
    return SCRIPT.read_text(encoding="utf-8")


# -- reading the script ----------------------------------------------------------------


def ps_spans(text: str) -> list:
    """(kind, start, end) of each comment and string literal in PowerShell ``text``:
    ``#`` to the end of the line, ``<# ... #>``, '...' with '' for a quote, and "..." with
    the backtick escape and "" for a quote (about_Comments, about_Quoting_Rules)."""
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("<#", i):
            j, kind = text.index("#>", i + 2) + 2, "comment"
        elif c == "#":
            j = text.find("\n", i)
            j, kind = (n if j < 0 else j), "comment"
        elif c in "'\"":
            j, kind = i + 1, "string"
            while True:
                if c == '"' and text[j] == "`":
                    j += 2
                elif text[j] == c and text[j + 1:j + 2] == c:
                    j += 2
                elif text[j] == c:
                    j += 1
                    break
                else:
                    j += 1
        else:
            i += 1
            continue
        spans.append((kind, i, j))
        i = j
    return spans


def without(text: str, kinds: tuple, keep_length: bool) -> str:
    out, at = [], 0
    for kind, start, end in ps_spans(text):
        if kind in kinds:
            out.append(text[at:start])
            out.append("".join(ch if ch == "\n" else " " for ch in text[start:end]) if keep_length else "")
            at = end
    out.append(text[at:])
    return "".join(out)


def ps_function(name: str) -> str:
    """The text of ``function <name>(...) { ... }`` in the script."""
    text = script_text()
    masked = without(text, ("comment", "string"), keep_length=True)
    found = re.search(rf"^[ \t]*function {re.escape(name)}\b", masked, re.M)
    assert found, f"install.ps1 no longer defines {name}"
    depth, i = 0, masked.index("{", found.end())
    for j in range(i, len(masked)):
        depth += {"{": 1, "}": -1}.get(masked[j], 0)
        if depth == 0:
            return text[found.start():j + 1]
    raise AssertionError(f"unbalanced braces in {name}")


def code_of(ps_text: str) -> str:
    """``ps_text`` without comments or blank lines, each line stripped: what runs."""
    lines = [line.strip() for line in without(ps_text, ("comment",), keep_length=False).splitlines()]
    return "\n".join(line for line in lines if line)


def probe() -> str:
    found = re.findall(r"^\s*\$probe = '((?:[^']|'')*)'\s*$", script_text(), re.M)
    assert len(found) == 1, "install.ps1 no longer sets $probe on one line"
    return found[0].replace("''", "'")


def test_the_script_is_ascii_and_balanced():
    """Windows PowerShell 5.1 reads a script without a byte order mark in the ANSI code
    page, so a non-ASCII letter would change meaning; and an unbalanced bracket outside
    strings and comments is a parse error that no test here would otherwise see."""
    raw = SCRIPT.read_bytes()
    assert all(b < 128 for b in raw)
    code = without(script_text(), ("comment", "string"), keep_length=False)
    for opening, closing in ("{}", "()", "[]"):
        assert code.count(opening) == code.count(closing), opening + closing


# -- the transcriptions, held to the script's code ------------------------------------

CONVERT_FROM_UTF8_HEX = r"""
function ConvertFrom-Utf8Hex([string]$Text) {
$hex = $Text.Trim()
if ($hex -notmatch '^([0-9a-f]{2})+$') { return $null }
$bytes = New-Object byte[] ($hex.Length / 2)
for ($i = 0; $i -lt $bytes.Length; $i++) {
$bytes[$i] = [Convert]::ToByte($hex.Substring(2 * $i, 2), 16)
}
return [System.Text.Encoding]::UTF8.GetString($bytes)
}
"""


def convert_from_utf8_hex(text: str):
    """CONVERT_FROM_UTF8_HEX in Python. ``-notmatch`` ignores case, as PowerShell's
    comparison operators do unless spelled -cnotmatch (about_Comparison_Operators)."""
    hexed = text.strip()
    if not re.search(r"^([0-9a-f]{2})+$", hexed, re.I):
        return None
    data = bytes(int(hexed[2 * i:2 * i + 2], 16) for i in range(len(hexed) // 2))
    return data.decode("utf-8", "replace")  # .NET's UTF8.GetString replaces bad bytes too


RESOLVE_PYTHON = r"""
function Resolve-Python([string]$Exe, [string[]]$Prefix) {
$probe = 'import sys; sys.version_info >= (3, 9) and print(sys.executable.encode().hex())'
$ErrorActionPreference = 'Continue'
$PSNativeCommandUseErrorActionPreference = $false
try {
$out = @() | & $Exe @Prefix -c $probe 2>$null
} catch {
return $null
}
if ($LASTEXITCODE -ne 0) { return $null }
$path = ConvertFrom-Utf8Hex ([string](@($out) | Select-Object -Last 1))
if (-not $path -or -not (Test-Path -LiteralPath $path -PathType Leaf)) { return $null }
return $path
}
"""


def resolve_python(argv: list, env: dict, oem: str = "cp437"):
    """RESOLVE_PYTHON in Python: run ``argv`` + ``-c <probe>`` with stderr thrown away,
    let the exit status decide, read stdout as PowerShell does (OEM code page, one string
    per line, the last one kept), decode, and check the file exists. Its stdin is an empty
    pipe (``@() |``)."""
    try:
        proc = subprocess.run([*argv, "-c", probe()], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              input=b"", env=env, timeout=60)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    lines = proc.stdout.decode(oem).splitlines()
    path = convert_from_utf8_hex(lines[-1] if lines else "")
    if not path or not os.path.isfile(path):
        return None
    return path


TEST_STORE_STUB = r"""
function Test-StoreStub([string]$Path) {
if (-not $env:LOCALAPPDATA) { return $false }
$apps = Join-Path $env:LOCALAPPDATA 'Microsoft\WindowsApps'
return ((Split-Path -Parent $Path) -eq $apps) -and ((Split-Path -Leaf $Path) -in @('python.exe', 'python3.exe'))
}
"""


def is_store_stub(path: str, localappdata: str) -> bool:
    """TEST_STORE_STUB in Python; ``-eq`` and ``-in`` ignore case."""
    if not localappdata:
        return False
    apps = ntpath.join(localappdata, "Microsoft\\WindowsApps")
    return (ntpath.dirname(path).lower() == apps.lower()
            and ntpath.basename(path).lower() in ("python.exe", "python3.exe"))




@pytest.mark.parametrize("name,held", [
    ("ConvertFrom-Utf8Hex", CONVERT_FROM_UTF8_HEX),
    ("Resolve-Python", RESOLVE_PYTHON),
    ("Test-StoreStub", TEST_STORE_STUB),
])
def test_the_transcriptions_match_the_script(name, held):
    """A change to one of these functions in install.ps1 must be made to its Python
    transcription here too, or every test below checks something else."""
    assert code_of(ps_function(name)) == held.strip()


# -- 1. the path comes back intact under any code page ---------------------------------

ODD_FOLDER = "Zoë O'Brien ß 日本"
CODE_PAGES = [  # (ANSI code page Python writes a pipe in, OEM code page PowerShell reads)
    ("cp1252", "cp437"), ("cp1252", "cp850"), ("cp1251", "cp866"), ("cp932", "cp932"), ("utf-8", "cp437"),
]


@pytest.fixture
def odd_python(tmp_path) -> str:
    """This Python, reached through a folder a non-English Windows profile could have."""
    folder = tmp_path / ODD_FOLDER
    folder.mkdir()
    link = folder / "python.exe"
    link.symlink_to(os.path.realpath(sys.executable))
    return str(link)


@pytest.mark.parametrize("ansi,oem", CODE_PAGES)
def test_the_probe_brings_a_non_ascii_path_back_intact(odd_python, ansi, oem):
    env = dict(os.environ, PYTHONIOENCODING=ansi)
    assert resolve_python([odd_python], env, oem) == odd_python


def test_a_plain_print_would_be_bent_by_the_code_pages(odd_python):
    """Why the probe prints hex: what the old probe got back for the same interpreter."""
    plain = "import sys; print(sys.executable)"
    for ansi, oem in [("cp1252", "cp437"), ("cp1252", "cp850")]:
        proc = subprocess.run([odd_python, "-c", plain], capture_output=True,
                              env=dict(os.environ, PYTHONIOENCODING=ansi), timeout=60)
        assert proc.returncode != 0 or proc.stdout.decode(oem).strip() != odd_python
    latin = odd_python.replace(" 日本", "")
    os.makedirs(os.path.dirname(latin), exist_ok=True)
    os.symlink(os.path.realpath(sys.executable), latin)
    out = subprocess.run([latin, "-c", plain], capture_output=True, check=True, timeout=60,
                         env=dict(os.environ, PYTHONIOENCODING="cp1252")).stdout.decode("cp437").strip()
    assert "Zoδ O'Brien ▀" in out and resolve_python([latin], dict(os.environ, PYTHONIOENCODING="cp1252")) == latin


def test_the_probe_reaches_python_intact_through_windows_powershell_51():
    argv = ["python.exe", "-c", probe()]
    assert crt_split(windows_powershell_51_line(argv)) == argv


@pytest.mark.parametrize("version", ["2.7.18", "3.6.15", "3.7.16", "3.8.18", "3.9.18", "3.10.13",
                                     "3.11.7", "3.12.1", "3.13.0"])
def test_the_probe_takes_3_9_and_later_only(version):
    python = f"{PYENV}/{version}/bin/python"
    if not os.path.exists(python):
        pytest.skip(f"no Python {version} here")
    found = resolve_python([python], dict(os.environ, PYTHONIOENCODING="cp1252"))
    assert found == (python if tuple(map(int, version.split(".")[:2])) >= (3, 9) else None)


@pytest.mark.parametrize("text,path", [
    ("433a5c5573657273", "C:\\Users"), ("  433A5C  \r", "C:\\"), ("", None), ("433", None),
    ("Python was not found", None), ("43 3a", None), ("zz", None),
])
def test_the_decode_takes_only_whole_hex(text, path):
    assert convert_from_utf8_hex(text) == path


# -- 2. a Store Python is run like any other; the exit status finds the stub -------------


@pytest.fixture
def windows_apps(tmp_path) -> str:
    apps = tmp_path / "Local" / "Microsoft" / "WindowsApps"
    apps.mkdir(parents=True)
    return str(apps)


def test_a_store_python_is_used_and_the_stub_is_refused(windows_apps):
    real = os.path.realpath(sys.executable)
    package = os.path.join(windows_apps, "PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0")
    os.mkdir(package)
    aliases = [os.path.join(windows_apps, "python3.12.exe"), os.path.join(package, "python.exe")]
    for alias in aliases:
        os.symlink(real, alias)
    stub = os.path.join(windows_apps, "python.exe")
    with open(stub, "w") as f:  # what the installer stub does when given arguments
        f.write("#!/bin/sh\necho 'Python was not found; run without arguments to install from the "
                "Microsoft Store, or disable this shortcut from Settings > Manage App Execution Aliases.' >&2\n"
                "exit 9009\n")
    os.chmod(stub, 0o755)
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    for alias in aliases:
        assert resolve_python([alias], env) == alias
    assert resolve_python([stub], env) is None


@pytest.mark.parametrize("path,stub", [
    ("C:\\Users\\zoe\\AppData\\Local\\Microsoft\\WindowsApps\\python.exe", True),
    ("C:\\Users\\zoe\\AppData\\Local\\Microsoft\\WindowsApps\\PYTHON3.EXE", True),
    ("C:\\Users\\zoe\\AppData\\Local\\Microsoft\\WindowsApps\\python3.12.exe", False),
    ("C:\\Users\\zoe\\AppData\\Local\\Microsoft\\WindowsApps\\PythonSoftwareFoundation.Python.3.12_qbz5n2kfra8p0\\python.exe", False),
    ("C:\\Python312\\python.exe", False),
])
def test_only_the_bare_aliases_are_named_as_the_stub(path, stub):
    assert is_store_stub(path, "C:\\Users\\zoe\\AppData\\Local") is stub


def test_every_candidate_is_run_before_it_is_judged():
    code = code_of(ps_function("Find-Python"))
    assert "continue" not in code  # no candidate is skipped unrun
    given = code.index("$found = Resolve-Python $Python @()")
    assert given < code.index("Test-StoreStub $Python")
    loop = code[code.index("foreach ($command in"):]
    assert loop.index("Resolve-Python $command.Source") < loop.index("Test-StoreStub")


# -- 3. stderr output does not make a working Python fail --------------------------------


def test_a_python_that_warns_on_stderr_is_still_taken(odd_python):
    env = dict(os.environ, PYTHONIOENCODING="cp1252", PYTHONWARNINGS="bogus")
    proc = subprocess.run([odd_python, "-c", probe()], capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0 and b"Invalid -W option ignored" in proc.stderr
    assert resolve_python([odd_python], env) == odd_python
    code = code_of(ps_function("Resolve-Python"))
    assert code.index("$ErrorActionPreference = 'Continue'") < code.index("@() | & $Exe @Prefix -c $probe 2>$null")


# -- 4. UNC and PowerShell-drive paths ---------------------------------------------------


def test_paths_handed_to_python_are_provider_paths():
    code = code_of(script_text())
    assert not re.search(r"\)\.Path\b", code), "PathInfo.Path is provider-qualified on a UNC share"
    assert code.count("(Resolve-Path -LiteralPath $Archive).ProviderPath") == 1
    assert code.count("(Resolve-Path -LiteralPath $candidate).ProviderPath") == 1
    assert "(Get-Location -PSProvider FileSystem).ProviderPath" in code


# -- 5. nothing is left behind in the caller's session ---------------------------------


def test_the_script_changes_nothing_in_the_callers_session():
    code = code_of(script_text())
    assert not re.search(r"\$env:\w+\s*=", code), "an environment variable set here outlives a dot-run"
    body = code[code.index("[switch]$DryRun\n)") + len("[switch]$DryRun\n)"):].strip()
    assert body.startswith("& {") and body.endswith("}"), "the body must run in a child scope"
    assert "$arguments = @('-X', 'utf8', $archivePath, 'install', '--all')" in code


def test_x_utf8_gives_python_the_utf8_output_pythonutf8_did(tmp_path, odd_python):
    """The script passes -X utf8 where it used to set PYTHONUTF8=1: the same UTF-8 mode
    (docs.python.org, -X utf8 and PYTHONUTF8), without touching the environment."""
    line = "import sys; print(sys.flags.utf8_mode, sys.stdout.encoding, sys.executable)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8")}
    out = subprocess.run([odd_python, "-X", "utf8", "-c", line], capture_output=True, check=True,
                         env=dict(env, LC_ALL="C"), timeout=60).stdout
    assert out.decode("utf-8").split(" ", 2) == ["1", "utf-8", odd_python + "\n"]


# -- the script itself, where PowerShell exists ----------------------------------------

pwsh = shutil.which("pwsh")
needs_pwsh = pytest.mark.skipif(not pwsh, reason="PowerShell (pwsh) is not installed here")


@needs_pwsh
def test_install_ps1_dry_run_under_pwsh(pyz, base_env, odd_python):
    proc = subprocess.run([pwsh, "-NoProfile", "-File", str(SCRIPT), "-Python", odd_python,
                           "-Archive", str(pyz), "-DryRun"], capture_output=True, env=base_env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert f"Python:  {odd_python}" in proc.stdout.decode("utf-8")


@needs_pwsh
def test_install_ps1_dot_run_leaves_the_session_alone(pyz, base_env, odd_python):
    command = textwrap.dedent(f"""
        $ErrorActionPreference = 'Continue'
        . '{SCRIPT}' -Python '{odd_python.replace("'", "''")}' -Archive '{pyz}' -DryRun
        "after: $ErrorActionPreference $([bool](Get-Command Resolve-Python -ErrorAction SilentlyContinue)) [$env:PYTHONUTF8]"
    """)
    proc = subprocess.run([pwsh, "-NoProfile", "-Command", command], capture_output=True,
                          env={k: v for k, v in base_env.items() if k != "PYTHONUTF8"}, timeout=120)
    assert "after: Continue False []" in proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")


def test_a_candidate_that_asks_a_question_gets_no_stdin_and_is_not_waited_on(tmp_path, odd_python):
    """The py install manager can ask before it runs Python: with an empty, closed stdin
    it reads end-of-file at once instead of waiting for the user behind a captured output."""
    asking = tmp_path / "asking-python"
    # It answers only when its stdin is a pipe (as @() | makes it), never the console.
    asking.write_text(f"#!/bin/sh\n[ -p /dev/stdin ] || exit 3\nprintf 'Install the latest runtime? [y/N] ' >&2\nread answer\n"
                      f"exec {shlex.quote(odd_python)} \"$@\"\n", encoding="utf-8")
    asking.chmod(0o755)
    assert resolve_python([str(asking)], dict(os.environ)) == odd_python
    assert "@() | & $Exe" in code_of(ps_function("Resolve-Python"))


# -- what a refused config means on Windows ---------------------------------------------------


def test_windows_problems_name_the_cause_and_the_fix(tmp_path, monkeypatch):
    from lichhook.install.disk.files import windows_problem

    config = tmp_path / "settings.json"
    config.write_text("{}")
    denied = PermissionError(13, "Access is denied", str(config))
    # writing: the new bytes went in beside it, so a refused swap is a holder or the attribute
    assert "another program has the file open or locked" in windows_problem(str(config), denied, True, windows=True)
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # how Windows reports the read-only attribute
    said = windows_problem(str(config), denied, True, windows=True)
    assert said.startswith("the file is read-only") and f"-LiteralPath '{config}' -Name IsReadOnly" in said
    monkeypatch.undo()
    # reading: only a sharing or lock violation is another program's doing
    assert windows_problem(str(config), denied, False, windows=True) is None
    locked = PermissionError(13, "The process cannot access the file", str(config))
    locked.winerror = 33  # type: ignore[attr-defined]
    assert "another program" in windows_problem(str(config), locked, False, windows=True)
    # a path past 260 characters: long paths, or a shorter folder
    deep = "C:\\Users\\me\\" + "d" * 250 + "\\settings.json"
    said = windows_problem(deep, FileNotFoundError(2, "not found", deep), True, windows=True)
    assert f"{len(deep)} characters long" in said and "LongPathsEnabled" in said
    # nowhere else
    assert windows_problem(str(config), denied, True, windows=False) is None
