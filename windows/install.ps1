<#
.SYNOPSIS
    Registers lichhook in every coding-agent harness found on this machine.

.DESCRIPTION
    Finds a real Python 3.9 or later (the py launcher first, then python.exe on PATH;
    never the Microsoft Store installer stub in %LOCALAPPDATA%\Microsoft\WindowsApps),
    then runs:  <python> <lichhook.pyz> install --all
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

Set-StrictMode -Version 2
$ErrorActionPreference = 'Stop'

function Test-InWindowsApps([string]$Path) {
    # The Store stubs (python.exe, python3.exe) live here; running one can open the Store.
    if (-not $env:LOCALAPPDATA) { return $false }
    $apps = Join-Path $env:LOCALAPPDATA 'Microsoft\WindowsApps'
    return $Path.StartsWith($apps, [System.StringComparison]::OrdinalIgnoreCase)
}

# Runs a candidate and returns the interpreter's own sys.executable when it is a real
# Python 3.9 or later, else $null.
function Resolve-Python([string]$Exe, [string[]]$Prefix) {
    # No double quotes: Windows PowerShell 5.1 passes them to a native program unescaped,
    # and the program's argument split then eats them.
    $probe = 'import sys; sys.version_info >= (3, 9) and print(sys.executable)'
    try {
        $out = & $Exe @Prefix -c $probe 2>$null
    } catch {
        return $null
    }
    if ($LASTEXITCODE -ne 0 -or -not $out) { return $null }
    $path = ([string]($out | Select-Object -Last 1)).Trim()
    if (-not $path -or -not (Test-Path -LiteralPath $path -PathType Leaf)) { return $null }
    return $path
}

function Find-Python {
    if ($Python) {
        if (Test-InWindowsApps $Python) {
            throw "$Python is the Microsoft Store stub, not Python. Pass the python.exe of a real installation."
        }
        $found = Resolve-Python $Python @()
        if (-not $found) { throw "$Python is not a working Python 3.9 or later." }
        return $found
    }
    if (Get-Command py -CommandType Application -ErrorAction SilentlyContinue) {
        $found = Resolve-Python 'py' @('-3')
        if ($found) { return $found }
    }
    foreach ($command in @(Get-Command python -All -CommandType Application -ErrorAction SilentlyContinue)) {
        if (Test-InWindowsApps $command.Source) {
            Write-Verbose "skipping $($command.Source): the Microsoft Store stub"
            continue
        }
        $found = Resolve-Python $command.Source @()
        if ($found) { return $found }
    }
    throw ("No Python 3.9 or later was found (tried 'py -3', then 'python' on PATH, skipping the " +
           "Microsoft Store stub in $env:LOCALAPPDATA\Microsoft\WindowsApps). Install Python from " +
           "https://www.python.org/downloads/windows/ and run this again, or pass -Python C:\path\to\python.exe.")
}

function Find-Archive {
    if ($Archive) {
        if (-not (Test-Path -LiteralPath $Archive -PathType Leaf)) { throw "No archive at $Archive." }
        return (Resolve-Path -LiteralPath $Archive).Path
    }
    $candidates = @(
        (Join-Path $PSScriptRoot 'lichhook.pyz'),
        (Join-Path (Split-Path $PSScriptRoot -Parent) 'dist\lichhook.pyz'),
        (Join-Path (Get-Location).Path 'dist\lichhook.pyz')
    )
    foreach ($candidate in $candidates) {
        if (Test-Path -LiteralPath $candidate -PathType Leaf) { return (Resolve-Path -LiteralPath $candidate).Path }
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
$arguments = @($archivePath, 'install', '--all')
if ($DryRun) { $arguments += '--dry-run' }
# Paths with characters outside the console code page must not stop the install's output.
$env:PYTHONUTF8 = '1'
& $pythonExe @arguments
exit $LASTEXITCODE
