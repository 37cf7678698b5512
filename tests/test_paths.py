"""Where lichhook keeps things (the platformdirs mirror itself is tests/test_coldstart.py's)."""

from __future__ import annotations

import os

from lichhook import paths


def test_plugin_and_waits_dirs(monkeypatch, tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_STATE_HOME": str(tmp_path / "s")}
    assert paths.plugin_dir(env) == str(tmp_path / "c" / "lichhook" / "plugins")
    assert paths.plugin_dir(dict(env, LICHHOOK_PLUGIN_DIR=str(tmp_path / "p"))) == str(tmp_path / "p")
    assert paths.plugin_dir(dict(env, LICHHOOK_PLUGIN_DIR="relative/p")) is None
    assert paths.waits_dir(env) == str(tmp_path / "s" / "lichhook" / "waits")
    assert paths.waits_dir(dict(env, LICHHOOK_WAITS_DIR="/w")) == "/w"
    assert paths.waits_dir(env, explicit="/x") == "/x"


def test_plugin_files_are_sorted_python_files_only(tmp_path):
    for name in ("b.py", "a.py", "_private.py", ".hidden.py", "notes.txt", "c.pyc"):
        (tmp_path / name).write_text("")
    assert [os.path.basename(p) for p in paths.plugin_files(str(tmp_path))] == ["a.py", "b.py"]
    assert paths.plugin_files(str(tmp_path / "missing")) == []
