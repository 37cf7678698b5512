<#
.SYNOPSIS
    Registers lichhook in every coding-agent harness found on this machine.

.DESCRIPTION
    Finds a real Python 3.9 or later (the py launcher first, then python.exe and
    python3.exe on PATH; each candidate is run, and only one that answers as Python is
    used, so the Microsoft Store's installer stub never is), then runs:
        <python> -X utf8 <lichhook.pyz> install --all
    lichhook itself copies the archive to its per-user folder and merges its entries
    into each harness's config; this script only finds the Python to run it with.

.PARAMETER Archive
    The lichhook.pyz to install. By default: lichhook.pyz next to this script, else
    dist\lichhook.pyz in the folder above it, else dist\lichhook.pyz in the current folder.

.PARAMETER Python
    A python.exe to use instead of searching for one.

.PARAMETER DryRun
    Print what would change in each file, and change nothing.

.EXAMPLE
    powershell -NoProfile -ExecutionPolicy Bypass -File windows\install.ps1

.EXAMPLE
    powershell -NoProfile -ExecutionPolicy Bypass -File windows\install.ps1 -DryRun
#>
[CmdletBinding()]
param(
    [string]$Archive,
    [string]$Python,
    [switch]$DryRun
)

# Everything runs in a child scope, so that a dot-run (. .\install.ps1) leaves the
# caller's session as it found it: its error preference, strict mode and functions. The
# environment is never changed (Python gets -X utf8 instead of PYTHONUTF8).
& {
    Set-StrictMode -Version 2
    $ErrorActionPreference = 'Stop'

    function Test-StoreStub([string]$Path) {
        # The Store's installer stubs are the bare aliases python.exe and python3.exe in
        # WindowsApps. A real Store Python answers through the same aliases (and adds
        # python3.12.exe and the like), so this only names the likely cause of a failure.
        if (-not $env:LOCALAPPDATA) { return $false }
        $apps = Join-Path $env:LOCALAPPDATA 'Microsoft\WindowsApps'
        return ((Split-Path -Parent $Path) -eq $apps) -and ((Split-Path -Leaf $Path) -in @('python.exe', 'python3.exe'))
    }

    function ConvertFrom-Utf8Hex([string]$Text) {
        # The probe's answer: the hex digits of the path's UTF-8 bytes, else $null.
        $hex = $Text.Trim()
        if ($hex -notmatch '^([0-9a-f]{2})+$') { return $null }
        $bytes = New-Object byte[] ($hex.Length / 2)
        for ($i = 0; $i -lt $bytes.Length; $i++) {
            $bytes[$i] = [Convert]::ToByte($hex.Substring(2 * $i, 2), 16)
        }
        return [System.Text.Encoding]::UTF8.GetString($bytes)
    }

    # Runs a candidate and returns the interpreter's own sys.executable when it is a real
    # Python 3.9 or later, else $null.
    function Resolve-Python([string]$Exe, [string[]]$Prefix) {
        # The path comes back as hex: Python writes to a pipe in the ANSI code page while
        # PowerShell reads it in [Console]::OutputEncoding (the OEM code page), which turns
        # an accented letter in C:\Users\<name> into another letter, and a letter outside
        # the ANSI page makes Python fail. Hex digits read the same in every code page.
        # No double quotes: Windows PowerShell 5.1 passes them to a native program unescaped,
        # and the program's argument split then eats them.
        $probe = 'import sys; sys.version_info >= (3, 9) and print(sys.executable.encode().hex())'
        # The exit status decides. Under 'Stop', Windows PowerShell 5.1 makes each line a
        # native program writes to stderr a terminating error, 2>$null or not, so a working
        # Python that warns (a bad .pth file, PYTHONWARNINGS) would be refused.
        $ErrorActionPreference = 'Continue'
        $PSNativeCommandUseErrorActionPreference = $false
        # No stdin: an empty pipe, closed at once. The py install manager can ask a
        # question before it runs Python; with the console as its stdin it would wait for
        # an answer while this script holds its output, and the script would look hung.
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

    function Find-Python {
        if ($Python) {
            $found = Resolve-Python $Python @()
            if ($found) { return $found }
            if (Test-StoreStub $Python) {
                throw ("$Python is the Microsoft Store's installer stub: no Python answers behind it. Install " +
                       "Python (https://www.python.org/downloads/windows/ or the Store) and run this again, " +
                       "or pass -Python C:\path\to\python.exe.")
            }
            throw "$Python is not a working Python 3.9 or later. Pass the python.exe of a real installation."
        }
        if (Get-Command py -CommandType Application -ErrorAction SilentlyContinue) {
            $found = Resolve-Python 'py' @('-3')
            if ($found) { return $found }
        }
        foreach ($command in @(Get-Command python, python3 -All -CommandType Application -ErrorAction SilentlyContinue)) {
            $found = Resolve-Python $command.Source @()
            if ($found) { return $found }
            $why = if (Test-StoreStub $command.Source) { ' (the Microsoft Store stub)' } else { '' }
            Write-Verbose "skipping $($command.Source)$($why): it did not answer as Python 3.9 or later"
        }
        throw ("No Python 3.9 or later was found (tried 'py -3', then 'python' and 'python3' on PATH). " +
               "Install Python from https://www.python.org/downloads/windows/ and run this again, " +
               "or pass -Python C:\path\to\python.exe.")
    }

    function Find-Archive {
        # ProviderPath, not Path: for a UNC folder Path reads
        # Microsoft.PowerShell.Core\FileSystem::\\server\share\..., which python.exe cannot
        # open, and for a PowerShell drive it names a drive only PowerShell knows.
        if ($Archive) {
            if (-not (Test-Path -LiteralPath $Archive -PathType Leaf)) { throw "No archive at $Archive." }
            return (Resolve-Path -LiteralPath $Archive).ProviderPath
        }
        $candidates = @(
            (Join-Path $PSScriptRoot 'lichhook.pyz'),
            (Join-Path (Split-Path $PSScriptRoot -Parent) 'dist\lichhook.pyz'),
            (Join-Path (Get-Location -PSProvider FileSystem).ProviderPath 'dist\lichhook.pyz')
        )
        foreach ($candidate in $candidates) {
            if (Test-Path -LiteralPath $candidate -PathType Leaf) {
                return (Resolve-Path -LiteralPath $candidate).ProviderPath
            }
        }
        throw ("No lichhook.pyz found (looked at: " + ($candidates -join ', ') +
               "). Build it with: py -3 build_zipapp.py, or pass -Archive C:\path\to\lichhook.pyz.")
    }

    try {
        $pythonExe = Find-Python
        $archivePath = Find-Archive
    } catch {
        Write-Error $_.Exception.Message -ErrorAction Continue
        exit 1
    }

    Write-Host "Python:  $pythonExe"
    Write-Host "Archive: $archivePath"
    # UTF-8 output, so a path outside the console code page cannot stop the install's report.
    $arguments = @('-X', 'utf8', $archivePath, 'install', '--all')
    if ($DryRun) { $arguments += '--dry-run' }
    & $pythonExe @arguments
    exit $LASTEXITCODE
}
