"""``lichhook theme``: a lich colour theme checked by the rules lich imports it by (lich
docs/themes.md and internal/themes), on real files: a theme written for these tests
(tests/fixtures/themes/harbour-night.json), each rule broken one at a time, theme
repositories in temp folders, and the built archive in a subprocess."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from lichhook import theme

GOOD = Path(__file__).resolve().parent / "fixtures" / "themes" / "harbour-night.json"


def good() -> dict:
    return json.loads(GOOD.read_text())


def test_the_fixture_names_every_colour_lich_053_knows_and_passes():
    doc = good()
    assert sorted(doc["app"]) == sorted(theme.APP_TOKENS + theme.TONES) and len(doc["app"]) == 33
    assert sorted(doc["terminal"]) == sorted(theme.TERMINAL_TOKENS) and len(doc["terminal"]) == 22
    assert theme.problems(doc) == []


def broken(change) -> dict:
    doc = copy.deepcopy(good())
    change(doc)
    return doc


def put(path: str, value: object):
    def change(doc: dict) -> None:
        *parents, key = path.split(".", 1) if path.startswith(("app.", "terminal.")) else [path]
        (doc[parents[0]] if parents else doc)[key] = value
    return change


def drop(path: str):
    def change(doc: dict) -> None:
        *parents, key = path.split(".", 1) if "." in path else [path]
        del (doc[parents[0]] if parents else doc)[key]
    return change


@pytest.mark.parametrize("change, said", [
    (put("id", "Harbour"), "id \"Harbour\" must be 1 to 64"),
    (put("id", "-harbour"), "must be 1 to 64"),
    (put("id", "a" * 65), "must be 1 to 64"),
    (put("id", "../../x"), "must be 1 to 64"),
    (put("id", 7), "id 7 must be"),
    (drop("id"), "id null must be"),
    (put("id", "dark"), "is reserved"),
    (put("id", "match"), "is reserved"),
    (put("id", "con"), "is reserved"),
    (put("id", "lpt9"), "is reserved"),
    (put("name", "   "), "name is required"),
    (put("name", "n" * 129), "at most 128 characters"),
    (drop("name"), "name is required"),
    (put("scheme", "Dark"), 'scheme must be "light" or "dark"'),
    (drop("scheme"), "scheme must be"),
    (put("formatVersion", 2), "formatVersion must be 1"),
    (put("formatVersion", 1.5), "formatVersion must be 1"),
    (put("formatVersion", "1"), "formatVersion must be 1"),
    (put("formatVersion", True), "formatVersion must be 1"),
    (put("origin", 3), "origin must be a text"),
    (put("source", "https://x"), "source must be {url, version}"),
    (put("source", {"url": 1, "version": "1.0.0"}), "source must be {url, version}"),
    (put("app.shadow", "#000"), "app.shadow is not a colour lich knows"),
    (put("terminal.bold", "#000"), "terminal.bold is not a colour lich knows"),
    (drop("app.tone-wait"), "app lacks tone-wait: lich requires it"),
    (drop("app.ring"), "app lacks ring"),
    (put("app.background", "url(https://example.com/x.png)"), "app.background = \"url(https"),
    (put("app.background", "var(--x)"), "is not a colour lich takes there"),
    (put("app.background", "color-mix(in srgb, red, blue)"), "is not a colour lich takes there"),
    (put("app.background", "red; x"), "is not a colour lich takes there"),
    (put("app.background", "#" + "0" * 9), "is not a colour lich takes there"),
    (put("app.background", "rgb(" + "1 " * 62 + ")"), "is not a colour lich takes there"),  # 129 characters
    (put("app.card", "  "), "app.card must be a colour"),
    (put("app.card", 12), "app.card must be a colour, not 12"),
    (put("terminal.red", "rgb(255 0 0)"), "use hex"),
    (put("terminal.red", "red"), "use hex"),
    (drop("terminal.background"), "terminal lacks background"),
    (put("app", []), "app is required"),
    (drop("terminal"), "terminal is required"),
])
def test_each_rule_lich_imports_by_is_told_with_its_fix(change, said):
    found = theme.problems(broken(change))
    assert len(found) == 1 and said in found[0], found


@pytest.mark.parametrize("change", [
    put("formatVersion", 1), put("formatVersion", 0), put("formatVersion", None), put("origin", "custom"),
    put("$schema", "https://raw.githubusercontent.com/omartelo/lich/main/themes/lich-theme.schema.json"),
    put("source", None), put("source", {"url": "https://x/y.git", "version": "1.2.0"}), put("author", "someone"),
    put("app.background", "oklch(0.18 0.05 276 / 90%)"), put("app.background", "rebeccapurple"),
    put("app.background", " #abc "), put("terminal.red", "#ff000080"), drop("terminal.cursor"),
])
def test_what_lich_takes_passes(change):
    assert theme.problems(broken(change)) == []


def test_before_lich_053_the_two_tones_are_unknown_and_after_it_required():
    assert len(theme.problems(good(), lich="0.52.3")) == 2
    without = broken(lambda d: [d["app"].pop(k) for k in theme.TONES])
    assert theme.problems(without, lich="0.52.3") == []
    assert theme.problems(without, lich="0.53.0") == ["app lacks tone-pass, tone-wait: lich requires each"]


def test_what_is_not_a_theme_object_is_told():
    assert theme.problems([good()]) == ["a theme is a JSON object"]


def manifest(**fields) -> dict:
    return {"name": "Harbour themes", "version": "1.0.0", **fields}


@pytest.mark.parametrize("doc, said", [
    (manifest(version="1.0"), "must be MAJOR.MINOR.PATCH"),
    (manifest(version="1.0.0-rc1"), "must be MAJOR.MINOR.PATCH"),
    (manifest(name=" "), "name is required"),
    (manifest(name="n" * 129), "name is required"),
    (manifest(minLichVersion="0.60"), "minLichVersion \"0.60\" must be"),
    (manifest(minLichVersion="0.60.0"), "needs lich 0.60.0 or newer (checked for 0.53.0)"),
    (manifest(formatVersion=3), "formatVersion must be 1"),
    ([], "is a JSON object"),
])
def test_a_repositorys_manifest_is_checked_by_lichs_rules(doc, said):
    found = theme.manifest_problems(doc)
    assert len(found) == 1 and said in found[0], found


def test_a_manifest_lich_takes_passes():
    for doc in (manifest(), manifest(version="v2.3.4", minLichVersion="0.53.0", formatVersion=1, description="x")):
        assert theme.manifest_problems(doc) == []


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_a_repository_is_checked_whole_as_lich_installs_it(tmp_path):
    pack = tmp_path / "pack"
    write(pack / "lich-theme.json", manifest())
    write(pack / "night.json", good())
    write(pack / "dusk.json", dict(good(), id="harbour-dusk"))
    (pack / "folder.json").mkdir()  # a folder named *.json is not a theme
    write(pack / "README.md", "themes")
    assert theme.check_pack(str(pack), theme.NEWEST) == {"lich-theme.json": [], "dusk.json": [], "night.json": []}

    write(pack / "copy.json", good())
    found = theme.check_pack(str(pack), theme.NEWEST)
    assert found["copy.json"] == [] and found["night.json"] == ["id 'harbour-night' is also copy.json's: each theme needs its own"]


def test_a_repository_without_its_manifest_or_themes_or_with_too_many_fails(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    found = theme.check_pack(str(empty), theme.NEWEST)["lich-theme.json"]
    assert "is required at the repository's root" in found[0] and "it has 0" in found[1]
    many = tmp_path / "many"
    write(many / "lich-theme.json", manifest())
    for n in range(33):
        write(many / f"t{n}.json", dict(good(), id=f"t{n}"))
    assert theme.check_pack(str(many), theme.NEWEST)["lich-theme.json"] == [
        "a repository holds 1 to 32 themes beside lich-theme.json; it has 33"]


def test_in_lichs_themes_folder_only_id_json_is_read(tmp_path):
    folder = tmp_path / "lich" / "themes"
    assert theme.check_file(str(write(folder / "harbour-night.json", good())), theme.NEWEST) == ("harbour-night", [])
    ident, found = theme.check_file(str(write(folder / "mine.json", good())), theme.NEWEST)
    assert found == ["in lich's themes folder a theme is read only as <id>.json: rename it harbour-night.json"]
    assert theme.check_file(str(write(tmp_path / "mine.json", good())), theme.NEWEST)[1] == []


@pytest.mark.parametrize("content", [b"{", b"\xff\xfe", b"[" * 100000 + b"]" * 100000, b"{}" + b" " * (1 << 20)])
def test_unreadable_files_are_told_not_raised(tmp_path, content):
    path = tmp_path / "t.json"
    path.write_bytes(content)
    ident, found = theme.check_file(str(path), theme.NEWEST)
    assert ident is None and len(found) == 1 and found[0].startswith("cannot be read as JSON")


def test_where_names_lichs_config_folder_per_system():
    assert theme.config_dir({"HOME": "/h"}, "linux") == os.path.join("/h", ".config", "lich", "themes")
    assert theme.config_dir({"HOME": "/h", "XDG_CONFIG_HOME": "/c", "LICH_DEV": "1"}, "linux") == \
        os.path.join("/c", "lich", "themes-dev")
    assert theme.config_dir({"HOME": "/h"}, "darwin") == os.path.join("/h", "Library", "Application Support", "lich",
                                                                      "themes")
    assert theme.config_dir({"APPDATA": r"C:\Users\u\AppData\Roaming"}, "win32") == os.path.join(
        r"C:\Users\u\AppData\Roaming", "lich", "themes")
    assert theme.config_dir({}, "linux") is None


def test_the_archive_checks_files_and_repositories_and_says_where(run, tmp_path, home):
    ok = run("theme", "check", str(GOOD))
    assert ok.returncode == 0 and ok.stdout.decode() == f"{GOOD}: ok for lich 0.53.0\n" and ok.stderr == b""

    bad = write(tmp_path / "bad.json", broken(put("terminal.red", "red")))
    pack = tmp_path / "pack"
    write(pack / "lich-theme.json", manifest(version="2"))
    write(pack / "a.json", good())
    done = run("theme", "check", str(GOOD), str(bad), str(pack))
    assert done.returncode == 1 and done.stderr == b""
    assert done.stdout.decode().splitlines() == [
        f"{GOOD}: ok for lich 0.53.0",
        f"{bad}: 1 problem",
        '  - terminal.red = "red" is not a colour lich takes there; use hex (#rgb to #rrggbbaa)',
        f"{pack / 'lich-theme.json'}: 1 problem",
        '  - lich-theme.json: version "2" must be MAJOR.MINOR.PATCH (no pre-release)',
        f"{pack / 'a.json'}: ok for lich 0.53.0",
    ]
    older = run("theme", "check", "--lich", "0.52.0", str(GOOD))
    assert older.returncode == 1 and b"app.tone-pass is not a colour lich knows" in older.stdout

    where = run("theme", "where", env={"XDG_CONFIG_HOME": str(home / "cfg")})
    assert where.returncode == 0 and where.stdout.decode() == f"{home / 'cfg' / 'lich' / 'themes'}\n"
    for argv in (["theme"], ["theme", "check"], ["theme", "check", "--lich", "new", str(GOOD)], ["theme", "paint"]):
        usage = run(*argv)
        assert usage.returncode == 2 and usage.stdout == b"" and b"lichhook theme" in usage.stderr


def test_where_names_no_folder_for_a_relative_xdg_config_home(run, home):
    # Go's os.UserConfigDir, which lich asks, refuses a relative XDG_CONFIG_HOME, so lich
    # keeps no themes there: naming that folder would send the user to one lich never reads.
    assert theme.config_dir({"HOME": "/h", "XDG_CONFIG_HOME": "cfg"}, "linux") is None
    assert theme.config_dir({"HOME": "/h", "XDG_CONFIG_HOME": "/c"}, "linux") == os.path.join("/c", "lich", "themes")
    where = run("theme", "where", env={"XDG_CONFIG_HOME": "cfg"})
    assert where.returncode == 1 and b"XDG_CONFIG_HOME is not an absolute path" in where.stdout


def test_check_with_a_release_but_no_theme_says_what_is_missing(run, home):
    done = run("theme", "check", "--lich", "0.52.0")
    assert done.returncode == 2 and done.stdout == b""
    assert b"--lich takes a lich release" not in done.stderr and b"usage: lichhook theme check" in done.stderr


def test_a_version_in_digits_other_than_ascii_is_not_a_release(run, home):
    # lich reads a release with Go's strconv.Atoi, which takes ASCII digits alone; Python's
    # \d would take these Arabic-Indic ones too.
    arabic = "\u0661.\u0660.\u0660"
    assert theme.manifest_problems(manifest(version=arabic)) == [
        'lich-theme.json: version "\\u0661.\\u0660.\\u0660" must be MAJOR.MINOR.PATCH (no pre-release)']
    assert "must be MAJOR.MINOR.PATCH" in theme.manifest_problems(manifest(minLichVersion=arabic))[0]
    done = run("theme", "check", "--lich", arabic, str(GOOD))
    assert done.returncode == 2 and b"--lich takes a lich release" in done.stderr


def test_a_theme_that_is_not_there_is_told_missing_not_too_big(run, tmp_path, home):
    missing = tmp_path / "nigth.json"
    done = run("theme", "check", str(missing))
    assert done.returncode == 1 and done.stderr == b""
    said = done.stdout.decode()
    assert "No such file or directory" in said and "at most" not in said, said
def test_a_version_of_thousands_of_digits_is_read_as_lich_reads_it(run, tmp_path):
    # Python's int() refuses more than 4300 digits; lich's Atoi clamps to the 64-bit range.
    huge = "9" * 5000
    pack = tmp_path / "pack"
    write(pack / "lich-theme.json", manifest(minLichVersion=f"0.{huge}.0"))
    write(pack / "a.json", good())
    done = run("theme", "check", str(pack))
    assert done.returncode == 1 and done.stderr == b"", done.stderr[-300:]
    assert f"the pack needs lich 0.{huge}.0 or newer" in done.stdout.decode()
    # the stand-in reads an X-Lich-Plugin header the same way
    assert theme.release.compatible(f"0.13.{huge}") and not theme.release.compatible(f"0.{huge}.0")
