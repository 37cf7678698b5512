"""Crush and Antigravity have no client the end-to-end suite can install, so the shapes
lichhook writes for them are held here to the facts recorded from their own sources
(Crush's ``HookConfig`` and ``MCPConfig``; Antigravity's hooks.json as its docs and
checks describe it). Each fact names the sentence of the fact sheet it rests on; when
the fact sheets sit beside the checkout, the test also checks they still say so."""

from __future__ import annotations

import json
import os
import re
import shlex

import pytest

from testkit.archive import hook_options
from testkit.constants import HARNESS_FACTS, REAL_HARNESS_FACTS

# (fact sheet, the words the fact rests on, whitespace-insensitive)
FACTS = {
    "crush-flat": (HARNESS_FACTS, "The shape is **flat, unlike Claude Code's**: `HookConfig{name, matcher (regex), "
                                  "command (required), timeout (seconds, default 30)}`"),
    "crush-nested-fails": (HARNESS_FACTS, "A nested Claude-style `{matcher, hooks:[…]}` entry fails validation"),
    "crush-only-pretooluse": (HARNESS_FACTS, "**Only `PreToolUse`.**"),
    "crush-global": (HARNESS_FACTS, "Global: `~/.config/crush/crush.json` (`$XDG_CONFIG_HOME/crush/`"),
    "crush-absolute": (HARNESS_FACTS, "Relative command paths resolve against the cwd, so global hooks need absolute paths."),
    "crush-mcp": (REAL_HARNESS_FACTS, '`mcp.<name>{type: "stdio", command, args}`'),
    "crushrc": (HARNESS_FACTS, '`hook add PreToolUse --command "python3 /abs/hook.py" --name x --timeout 10`'),
    "agy-names": (HARNESS_FACTS, '`hooks.json` maps **hook names** to event configs; there is no top-level `"hooks"` key'),
    "agy-flat": (HARNESS_FACTS, "**`PreInvocation`, `PostInvocation` and `Stop` take a flat array of handlers**"),
    "agy-handler": (HARNESS_FACTS, 'A handler is `{type:"command", command, timeout}`.'),
    "agy-strict": (HARNESS_FACTS, "Parsing is strict: one error (for example a float `timeout`) silently drops the **whole file**"),
    "agy-plugin": (HARNESS_FACTS, "it discovers `plugins/<name>/plugin.json` and loads `hooks.json`"),
}
# Keys Crush's HookConfig and MCPConfig know (the hook's and the stdio server's).
CRUSH_HOOK_KEYS = {"name", "matcher", "command", "timeout"}
CRUSH_STDIO_KEYS = {"type", "command", "args", "env", "timeout", "disabled"}
AGY_FLAT_EVENTS = {"PreInvocation", "PostInvocation", "Stop"}
AGY_GROUPED_EVENTS = {"PreToolUse", "PostToolUse"}
AGY_HANDLER_KEYS = {"type", "command", "timeout", "enabled"}


def squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_the_fact_sheets_still_say_what_these_checks_rest_on(fact):
    sheet, words = FACTS[fact]
    if not sheet.exists():
        pytest.skip(f"{sheet} is not beside this checkout")
    assert squeeze(words) in squeeze(sheet.read_text(encoding="utf-8")), f"{sheet.name} no longer says: {words}"


@pytest.fixture
def installed(run, home):
    done = run("install", "crush", "antigravity")
    assert done.returncode == 0, done.stderr
    return home


def assert_absolute_line(line: str, *words: str) -> None:
    python, *flags, archive = shlex.split(line)[:6]
    rest = shlex.split(line)[6:]
    assert flags == hook_options(*words), line
    assert os.path.isabs(python) and os.path.isabs(archive), line  # crush-absolute
    assert rest == list(words), line


def test_crush_json_has_the_shape_crush_reads(installed):
    path = installed / ".config" / "crush" / "crush.json"  # crush-global
    config = json.loads(path.read_text(encoding="utf-8"))
    assert set(config["hooks"]) == {"PreToolUse"}  # crush-only-pretooluse
    (entry,) = config["hooks"]["PreToolUse"]
    assert set(entry) <= CRUSH_HOOK_KEYS and "hooks" not in entry  # crush-flat, crush-nested-fails
    assert isinstance(entry["name"], str) and entry["name"]
    assert isinstance(entry["timeout"], int) and not isinstance(entry["timeout"], bool) and entry["timeout"] > 0
    assert_absolute_line(entry["command"], "crush", "PreToolUse")
    server = config["mcp"]["lichhook"]  # crush-mcp
    assert set(server) <= CRUSH_STDIO_KEYS and server["type"] == "stdio"
    assert os.path.isabs(server["command"]) and server["args"][:2] == ["-I", "-S"] and server["args"][3:] == ["mcp"]
    assert all(isinstance(a, str) for a in server["args"])


def test_crushrc_lines_have_the_shape_crush_reads(run, home):
    folder = home / ".config" / "crush"
    folder.mkdir(parents=True)
    (folder / "crushrc").write_text("provider add local --type openai-compat --base-url http://127.0.0.1:1/v1\n")
    assert run("install", "crush").returncode == 0
    lines = [ln for ln in (folder / "crushrc").read_text().splitlines() if ln.startswith("hook add")]
    (line,) = lines
    words = shlex.split(line)  # crushrc: read by a POSIX shell interpreter
    assert words[:3] == ["hook", "add", "PreToolUse"]
    options = dict(zip(words[3::2], words[4::2]))
    assert set(options) == {"--name", "--command", "--timeout"} and len(words[3:]) == 6
    assert options["--timeout"].isdigit()
    assert_absolute_line(options["--command"], "crush", "PreToolUse")


def test_antigravity_hooks_json_has_the_shape_antigravity_reads(installed):
    plugin = installed / ".gemini" / "config" / "plugins" / "lichhook"
    manifest = json.loads((plugin / "plugin.json").read_text(encoding="utf-8"))  # agy-plugin
    assert manifest["name"] == plugin.name
    hooks = json.loads((plugin / "hooks.json").read_text(encoding="utf-8"))
    assert "hooks" not in hooks and set(hooks) == {"lichhook"}  # agy-names
    events = hooks["lichhook"]
    assert set(events) == {"PreInvocation", "PreToolUse", "PostToolUse", "Stop"}
    assert set(events) <= AGY_FLAT_EVENTS | AGY_GROUPED_EVENTS
    for event, entries in events.items():
        handlers = entries if event in AGY_FLAT_EVENTS else [h for group in entries for h in group["hooks"]]
        if event in AGY_FLAT_EVENTS:  # agy-flat: handlers themselves, no groups
            assert all("hooks" not in e and "matcher" not in e for e in entries)
        else:  # groups of a tool-name matcher and handlers
            assert all(set(g) == {"matcher", "hooks"} and isinstance(g["matcher"], str) for g in entries)
        for handler in handlers:
            assert set(handler) <= AGY_HANDLER_KEYS and handler["type"] == "command"  # agy-handler
            # agy-strict: a float (or any non-integer) timeout would drop the whole file
            assert type(handler["timeout"]) is int and handler["timeout"] > 0
            assert_absolute_line(handler["command"], "antigravity", event)
    # agy-strict: integers stay integers as written, not 5.0
    assert not re.search(r'"timeout":\s*\d+\.\d', (plugin / "hooks.json").read_text(encoding="utf-8"))

