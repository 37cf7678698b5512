"""Where lichhook keeps things (the platformdirs mirror itself is tests/test_coldstart.py's)."""

from __future__ import annotations

import os
import sys

import pytest

from lichhook import paths


@pytest.mark.skipif(sys.platform == "win32", reason="XDG folders; Windows': test_windows_folders_follow_the_home_of_the_configs")
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


# On Windows every folder of lichhook's follows the home the harness configs are read in.
@pytest.mark.parametrize("environ,local", [
    # a profile as Windows sets it
    ({"USERPROFILE": "C:\\Users\\Zoë O'Brien", "LOCALAPPDATA": "C:\\Users\\Zoë O'Brien\\AppData\\Local"},
     "C:\\Users\\Zoë O'Brien\\AppData\\Local"),
    # both pointed at a throw-away folder, in another case: that folder
    ({"USERPROFILE": "D:\\t\\home", "LOCALAPPDATA": "d:\\T\\home\\local"}, "d:\\T\\home\\local"),
    # only the home moved (as the tests move it): not the real profile's LOCALAPPDATA
    ({"USERPROFILE": "D:\\t\\home", "LOCALAPPDATA": "C:\\Users\\me\\AppData\\Local"},
     "D:\\t\\home\\AppData\\Local"),
    # a sibling whose name starts like the home is not inside it
    ({"USERPROFILE": "C:\\Users\\me", "LOCALAPPDATA": "C:\\Users\\me2\\AppData\\Local"},
     "C:\\Users\\me\\AppData\\Local"),
    # blank or relative LOCALAPPDATA: ignored; HOME when USERPROFILE is blank
    ({"USERPROFILE": " ", "HOME": "C:\\h", "LOCALAPPDATA": "rel\\local"}, "C:\\h\\AppData\\Local"),
])
def test_windows_folders_follow_the_home_of_the_configs(monkeypatch, environ, local):
    from lichhook import coldstart

    assert coldstart.windows_local(environ) == local
    monkeypatch.setattr(sys, "platform", "win32")
    for where in (coldstart.user_state_dir(environ), coldstart.user_config_dir(environ), coldstart.user_data_dir(environ)):
        assert where == os.path.join(local, "lichhook")
