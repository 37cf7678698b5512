"""``adapters`` and ``listen`` write text for people, and must not crash when piped on
Windows with a name their stream cannot encode.

CPython on Windows encodes ``sys.stdout`` to a pipe or file with the ANSI code page
(cp1252 in Western Europe and the Americas) and strict errors; only a console gets full
Unicode (PEP 528). ``PYTHONIOENCODING=cp1252`` gives the same stream here. A plugin
folder in a Japanese profile, or a session id in Cyrillic, is outside that page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

from testkit.servers import post

ESCAPED_FOLDER = "\\u30d7\\u30e9\\u30b0\\u30a4\\u30f3"  # プラグイン as backslashreplace writes it


def test_adapters_piped_in_the_ansi_code_page_lists_a_folder_outside_it(run, tmp_path):
    folder = tmp_path / "プラグイン"
    folder.mkdir()
    (folder / "壊れた.py").write_text("raise RuntimeError('broken')\n")
    done = run("adapters", env={"PYTHONIOENCODING": "cp1252", "LICHHOOK_PLUGIN_DIR": str(folder)})
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    out = done.stdout.decode("cp1252")
    assert re.search(r"^claude\s", out, re.M)
    assert f"plugin folder: {tmp_path}{os.sep}{ESCAPED_FOLDER}" in out
    assert f"{ESCAPED_FOLDER}{os.sep}\\u58ca\\u308c\\u305f.py skipped: RuntimeError: broken" in out


def test_listen_piped_in_the_ansi_code_page_prints_ids_outside_it(pyz, base_env):
    env = dict(base_env, PYTHONIOENCODING="cp1252")
    proc = subprocess.Popen([sys.executable, str(pyz), "listen", "--port", "0", "--token", "tk-1",
                             "--session", "сессия-1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        text = b"".join(proc.stdout.readline() for _ in range(4)).decode("cp1252")
        assert "LICH_SESSION_ID='\\u0441\\u0435\\u0441\\u0441\\u0438\\u044f-1'" in text, \
            text + proc.stderr.read1().decode("utf-8", "replace")
        port = int(re.search(r"127\.0\.0\.1:(\d+)/session-start", text).group(1))
        body = json.dumps({"session_id": "сессия-1", "provider_session_id": "会話-1", "provider": "omp"}).encode()
        assert post(port, "/session-start", "tk-1", body)[0] == 204
        deadline, seen = time.monotonic() + 10, ""
        while "accepted" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline().decode("cp1252")
        assert "provider_session_id=\\u4f1a\\u8a71-1" in seen
        assert proc.poll() is None  # still serving
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_install_piped_in_the_ansi_code_page_names_a_home_outside_it(run, tmp_path):
    home = tmp_path / "ユーザー"
    (home / ".claude").mkdir(parents=True)
    env = {"PYTHONIOENCODING": "cp1252", "HOME": str(home), "USERPROFILE": str(home),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config")}
    done = run("install", "claude", "--dry-run", env=env)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert os.path.join("\\u30e6\\u30fc\\u30b6\\u30fc", ".claude", "settings.json") in done.stdout.decode("cp1252")
