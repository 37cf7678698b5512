"""lich's four hook contracts: every fixture line and our own cases through lich's parse
(``lichhook.contracts``), through the stand-in over HTTP, and through our body builders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lichhook import contracts
from lichhook.contracts import release, session_start, session_state, session_title, session_touched
from testkit.constants import SHARED
from testkit.servers import post

UUID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"
FIXTURES = SHARED / "lich-contract"
FIXTURE_FILES = {
    "session-start.jsonl": "session-start",
    "session-state.jsonl": "session-state",
    "session-state-newer.jsonl": "session-state",
    "session-title.jsonl": "session-title",
    "session-touched.jsonl": "session-touched",
}
PARSE = {"session-start": session_start.parse, "session-state": session_state.parse,
         "session-title": session_title.parse, "session-touched": session_touched.parse}
NOT_AN_OBJECT = "body must be a JSON object"


def case(name: str, reject: str = "", accept: dict | None = None, body: dict | None = None, raw: str | bytes | None = None):
    out: dict = {"name": name}
    if raw is not None:
        out["raw"] = raw
    else:
        out["body"] = body
    if accept is not None:
        out["accept"] = accept
    else:
        out["reject"] = reject
    return out


# Written from lich's code (internal/terminal/transport.go) and Go's encoding/json, in the
# fixtures' format, so these pass without ../shared and cover where lich is more lenient
# than lichhook's client.
OWN = {
    "session-start": [
        case("codex", body={"session_id": "s1", "provider_session_id": UUID, "provider": "codex"},
             accept={"session_id": "s1", "provider_session_id": UUID, "provider": "codex"}),
        case("empty provider is claude", body={"session_id": "s1", "provider_session_id": UUID, "provider": ""},
             accept={"provider": "claude"}),
        case("null provider is claude", body={"session_id": "s1", "provider_session_id": UUID, "provider": None},
             accept={"provider": "claude"}),
        case("no session", "session_id is required", body={"provider_session_id": UUID}),
        case("no id", "provider_session_id is required", body={"session_id": "s1"}),
        case("slash", "provider_session_id must be an opaque id (id contains '/')",
             body={"session_id": "s1", "provider_session_id": "a/b"}),
        case("backslash", "provider_session_id must be an opaque id (id contains '\\\\')",
             body={"session_id": "s1", "provider_session_id": "a\\b"}),
        case("glob", "provider_session_id must be an opaque id (id contains '*')",
             body={"session_id": "s1", "provider_session_id": "a*[b]?"}),
        case("dotdot", "provider_session_id must be an opaque id (id contains '..')",
             body={"session_id": "s1", "provider_session_id": "..x"}),
        case("lich takes control characters and spaces in an id",
             body={"session_id": "s1", "provider_session_id": "a\x01 b\x7f"},
             accept={"provider_session_id": "a\x01 b\x7f"}),
        case("keys match without regard to case",
             body={"Session_ID": "s1", "PROVIDER_SESSION_ID": UUID, "Provider": "omp"},
             accept={"session_id": "s1", "provider_session_id": UUID, "provider": "omp"}),
        case("the long s and the Kelvin sign fold onto s and k",
             body={"\u017fession_id": "s1", "provider_\u017fession_id": UUID},
             accept={"session_id": "s1", "provider_session_id": UUID}),
        case("the dotless i folds only to itself", "session_id is required",
             body={"sess\u0131on_id": "s1", "provider_session_id": UUID}),
        case("the last of a repeated key wins",
             raw=f'{{"session_id":"a","session_id":"b","provider_session_id":"{UUID}"}}', accept={"session_id": "b"}),
        case("a later null leaves the value before it",
             raw=f'{{"session_id":"s1","provider_session_id":"{UUID}","PROVIDER_SESSION_ID":null}}',
             accept={"provider_session_id": UUID}),
        case("a number id is the wrong type", NOT_AN_OBJECT, body={"session_id": "s1", "provider_session_id": 5}),
        case("an array provider is the wrong type", NOT_AN_OBJECT,
             body={"session_id": "s1", "provider_session_id": UUID, "provider": ["codex"]}),
        case("a wrong type under an unknown key is ignored",
             body={"session_id": "s1", "provider_session_id": UUID, "size": [1, {"x": None}]}, accept={}),
        case("unknown provider", "provider must be a registered provider id",
             body={"session_id": "s1", "provider_session_id": UUID, "provider": "aider"}),
        case("malformed", NOT_AN_OBJECT, raw="{"),
        case("array", NOT_AN_OBJECT, raw="[]"),
        case("null body", "session_id is required", raw="null"),
        case("NaN is not JSON", NOT_AN_OBJECT, raw=f'{{"session_id":"s1","provider_session_id":"{UUID}","n":NaN}}'),
        case("text after the object", NOT_AN_OBJECT, raw=f'{{"session_id":"s1","provider_session_id":"{UUID}"}} x'),
        case("a lone surrogate escape becomes U+FFFD", raw='{"session_id": "s1", "provider_session_id": "a\\ud800b"}',
             accept={"provider_session_id": "a\ufffdb"}),
        case("a surrogate pair is one character", raw='{"session_id": "s1", "provider_session_id": "a\\ud83d\\ude00"}',
             accept={"provider_session_id": "a\U0001f600"}),
        case("each byte of a cut-off UTF-8 sequence becomes U+FFFD",
             raw=b'{"session_id": "s1", "provider_session_id": "a\xe2\x82(b"}',
             accept={"provider_session_id": "a\ufffd\ufffd(b"}),
        case("nesting past 10000 is refused", NOT_AN_OBJECT,
             raw='{"session_id":"s1","provider_session_id":"x","n":' + "[" * 10001 + "]" * 10001 + "}"),
    ],
    "session-state": [
        case("busy with a tool", body={"session_id": "s1", "state": "busy", "tool": "Bash", "detail": "ls"},
             accept={"session_id": "s1", "state": "busy", "tool": "Bash", "detail": "ls", "reason": ""}),
        case("tool, detail and reason are trimmed as Go trims",
             body={"session_id": "s1", "state": "waiting", "tool": "\u00a0 Bash \u3000", "detail": "\t x \x85",
                   "reason": "\u2028 why \n"},
             accept={"tool": "Bash", "detail": "x", "reason": "why"}),
        case("Go's trim keeps the separators U+001C..U+001F", body={"session_id": "s1", "state": "busy", "tool": "\x1cT\x1f"},
             accept={"tool": "\x1cT\x1f"}),
        case("text is cut to 120 runes, not bytes", body={"session_id": "s1", "state": "busy", "tool": "\u00e9" * 200},
             accept={"tool": "\u00e9" * 120}),
        case("a cut lands after the trim", body={"session_id": "s1", "state": "busy", "tool": "  " + "x" * 119 + " yz"},
             accept={"tool": "x" * 119 + " "}),
        case("a reason on waiting stays", body={"session_id": "s1", "state": "waiting", "reason": "Bash: ls"},
             accept={"reason": "Bash: ls"}),
        case("a reason on done is dropped", body={"session_id": "s1", "state": "done", "reason": "x"},
             accept={"reason": ""}),
        case("a detail without a tool is dropped", body={"session_id": "s1", "state": "busy", "detail": "ls"},
             accept={"tool": "", "detail": ""}),
        case("STATE matches state", body={"session_id": "s1", "STATE": "idle"}, accept={"state": "idle"}),
        case("a null state is no state", "state must be one of busy, done, waiting, idle, compacting",
             body={"session_id": "s1", "state": None}),
        case("a number state is the wrong type", NOT_AN_OBJECT, body={"session_id": "s1", "state": 1}),
        case("interrupted is lich's own", "state must be one of busy, done, waiting, idle, compacting",
             body={"session_id": "s1", "state": "interrupted"}),
        case("provider_session_id rides along", body={"session_id": "s1", "state": "done", "provider_session_id": UUID},
             accept={"state": "done"}),
        case("no session", "session_id is required", body={"state": "busy"}),
    ],
    "session-title": [
        case("ok", body={"session_id": "s1", "title": "Fix it"}, accept={"session_id": "s1", "title": "Fix it"}),
        case("no length limit on lich's side", body={"session_id": "s1", "title": "t" * 300}, accept={"title": "t" * 300}),
        case("trimmed", body={"session_id": "s1", "Title": "\u3000 Fix it \n"}, accept={"title": "Fix it"}),
        case("blank", "title is required and must not be blank", body={"session_id": "s1", "title": " \u00a0\n"}),
        case("a null title", "title is required and must not be blank", body={"session_id": "s1", "title": None}),
        case("a list title", NOT_AN_OBJECT, body={"session_id": "s1", "title": ["x"]}),
        case("no session", "session_id is required", body={"title": "x"}),
    ],
    "session-touched": [
        case("ok", body={"session_id": "s1"}, accept={"session_id": "s1"}),
        case("provider_session_id and anything else ride along",
             body={"session_id": "s1", "provider_session_id": UUID, "tool": {"name": "Edit"}}, accept={"session_id": "s1"}),
        case("a control character is a session id", body={"session_id": "\x00"}, accept={"session_id": "\x00"}),
        case("empty", "session_id is required", body={"session_id": ""}),
        case("a number", NOT_AN_OBJECT, body={"session_id": 1}),
        case("a string body", NOT_AN_OBJECT, raw='"s1"'),
    ],
}


def shared_cases() -> list:
    """(contract, case) for every line of lich's fixtures beside this checkout."""
    out = []
    for name, contract in FIXTURE_FILES.items():
        path = FIXTURES / name
        if path.exists():
            out += [(contract, json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def own_cases() -> list:
    return [(contract, c) for contract, cases in OWN.items() for c in cases]


def raw_of(c: dict) -> bytes:
    if "raw" in c:
        return c["raw"] if isinstance(c["raw"], bytes) else c["raw"].encode("utf-8")
    return json.dumps(c["body"]).encode("utf-8")


def judged(contract: str, c: dict, exact: bool = True) -> None:
    """Parse as lich does. ``exact``: the refusal's words are ours to match; lich's fixtures give
    theirs as prose, not a matcher (and predate ``compacting`` in the list of states)."""
    parse = PARSE[contract]
    if "accept" in c:
        got = parse(raw_of(c))
        assert {k: got[k] for k in c["accept"]} == c["accept"], c["name"]
    else:
        with pytest.raises(contracts.Rejected) as refused:
            parse(raw_of(c))
        if exact:
            assert str(refused.value) == c["reject"], c["name"]


@pytest.mark.parametrize("contract,c", own_cases(), ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_own_cases(contract, c):
    judged(contract, c)


@pytest.mark.skipif(not FIXTURES.exists(), reason="lich's fixtures (../shared/lich-contract) are not beside this checkout")
@pytest.mark.parametrize("contract,c", shared_cases() or [("", None)],
                         ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_lich_fixtures(contract, c):
    judged(contract, c, exact=False)


def test_every_fixture_file_is_read():
    if not FIXTURES.exists():
        pytest.skip("lich's fixtures are not beside this checkout")
    assert sorted(p.name for p in FIXTURES.glob("*.jsonl")) == sorted(FIXTURE_FILES)


# --- through the stand-in, over HTTP ----------------------------------------------------

@pytest.fixture(scope="module")
def lich():
    from lichhook.standin import StandIn

    with StandIn(token="t+k n;x") as server:
        yield server


TOKEN_IN_QUERY = "t%2Bk+n%3Bx"  # "t+k n;x", as a client must write it


def through(lich, contract: str, c: dict):
    path = contracts.module(contract).PATH
    return post(lich.port, path, TOKEN_IN_QUERY, raw_of(c))


@pytest.mark.parametrize("contract,c", [(k, dict(c, own=True)) for k, c in own_cases()] + shared_cases(),
                         ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_the_stand_in_answers_every_case_as_lich(lich, contract, c):
    before = len(lich.reports)
    status, answer = through(lich, contract, c)
    report = lich.wait_for(before + 1, timeout=5)[before]
    assert report.contract == contract
    if "accept" in c:
        assert (status, answer) == (204, b""), (c["name"], answer)
        assert {k: report.accepted[k] for k in c["accept"]} == c["accept"]
    else:
        assert status == 400 and answer.strip(), c["name"]
        if c.get("own"):
            assert answer == c["reject"].encode("utf-8") + b"\n", c["name"]


def test_the_stand_in_follows_lichs_transport(lich):
    good = json.dumps({"session_id": "s1", "state": "busy"}).encode()
    assert post(lich.port, "/hook", TOKEN_IN_QUERY, good)[0] == 204
    assert post(lich.port, "/hook", "t%2Bk+n%3Bx&token=other", good)[0] == 204  # the first value wins
    assert post(lich.port, "/hook", "other&token=t%2Bk+n%3Bx", good)[0] == 401
    assert post(lich.port, "/hook", "t+k+n;x", good)[0] == 401  # a pair holding ';' is dropped
    assert post(lich.port, "/hook", "t%2Bk+n%3Bx%", good)[0] == 401  # a bad escape drops the pair
    assert post(lich.port, "/hook", TOKEN_IN_QUERY, good, method="GET")[0] == 405
    assert post(lich.port, "/hook", TOKEN_IN_QUERY, good, method="PURGE")[0] == 405
    assert post(lich.port, "/nowhere", TOKEN_IN_QUERY, good)[0] == 404
    assert post(lich.port, "/nowhere", TOKEN_IN_QUERY, good, method="GET")[0] == 404  # the route comes first
    assert post(lich.port, "/h%6F%6Fk", TOKEN_IN_QUERY, good)[0] == 204  # the path is unescaped


def test_a_body_over_4_kib_is_cut_then_parsed(lich):
    padded = json.dumps({"session_id": "s1", "title": "kept"}).encode() + b" " * 6000
    before = len(lich.reports)
    assert post(lich.port, "/session-title", TOKEN_IN_QUERY, padded)[0] == 204
    report = lich.wait_for(before + 1, timeout=5)[before]
    assert len(report.body) == contracts.BODY_LIMIT and report.accepted["title"] == "kept"
    long_id = json.dumps({"session_id": "s1", "provider_session_id": "x" * 5000}).encode()
    assert post(lich.port, "/session-start", TOKEN_IN_QUERY, long_id) == (400, NOT_AN_OBJECT.encode() + b"\n")


def test_lich_warns_once_per_session_and_release(lich):
    body = json.dumps({"session_id": "warned-once"}).encode()
    seen = []
    for header in ("0.12.0", "0.12.0", contracts.RELEASE, "0.19.0", None):
        before = len(lich.reports)
        post(lich.port, "/session-touched", TOKEN_IN_QUERY, body,
             headers={"Content-Type": "application/json", **({"X-Lich-Plugin": header} if header else {})})
        seen.append(bool(lich.wait_for(before + 1, timeout=5)[before].warning))
    assert seen == [True, False, False, True, True]


# --- the release header ----------------------------------------------------------------

@pytest.mark.parametrize("header,parsed,ok", [
    ("0.18.0", (0, 18, 0, 1), True),
    ("v0.18", (0, 18, 0, 1), True),
    ("0.18.0-rc.1", (0, 18, 0, 0), True),
    ("0.18.0+build.7", (0, 18, 0, 1), True),
    ("v0.13.0", (0, 13, 0, 1), True),
    ("0.13.0-rc.1", (0, 13, 0, 0), False),  # a pre-release sorts before its release
    ("0.19.0-rc.1", (0, 19, 0, 0), True),
    ("0.19.0", (0, 19, 0, 1), False),
    ("0.19.2", (0, 19, 2, 1), False),
    ("0.18.0.9", (0, 18, 0, 1), True),  # the third part is "0.9": unreadable, so 0
    ("0.x.5", (0, 0, 5, 1), False),
    ("V0.18.0", (0, 18, 0, 1), True),  # "V0" is unreadable: 0, as the major is anyway
    ("", (0, 0, 0, 1), False),
    (None, (0, 0, 0, 1), False),
    ("99999999999999999999.0.0", ((1 << 63) - 1, 0, 0, 1), False),
])
def test_release_is_read_as_lichs_semver_reads_it(header, parsed, ok):
    assert release.parse(header) == parsed
    assert release.compatible(header) is ok


def test_what_lichhook_sends_is_in_lichs_range():
    assert release.compatible(contracts.RELEASE)


def test_the_release_lives_in_one_place():
    # the hooks' fallback (contracts.RELEASE) and the table of releases (contracts.release)
    root = Path(contracts.__file__).resolve().parent.parent
    holders = [p for p in root.rglob("*.py") if f'"{contracts.RELEASE}"' in p.read_text(encoding="utf-8")]
    assert sorted(holders) == sorted([Path(contracts.__file__).resolve(), Path(release.__file__).resolve()])
    assert contracts.RELEASE == release.claim(None, "claude") == release.claim(None, "codex")


# --- our body builders ----------------------------------------------------------------------

def built(contract: str, fields: dict) -> bytes:
    """What lichhook's client builds for an accepted report's fields."""
    if contract == "session-start":
        return session_start.body(fields["session_id"], fields["provider_session_id"], fields.get("provider") or "claude")
    if contract == "session-state":
        return session_state.body(fields["session_id"], fields["state"], fields.get("tool", ""), fields.get("detail", ""),
                                  fields.get("reason", ""))
    if contract == "session-title":
        return session_title.body(fields["session_id"], session_title.text(fields["title"]))
    return session_touched.body(fields["session_id"])


def accepted_cases() -> list:
    return [(contract, c) for contract, c in own_cases() + shared_cases() if "accept" in c]


@pytest.mark.parametrize("contract,c", accepted_cases(), ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_what_our_builders_send_lich_keeps_as_sent(contract, c):
    """For every accepted case, our body for what lich kept parses back to the same: lich
    never has to trim or cut what lichhook sends (lichhook's own rules aside: one line of
    text without control characters, trimmed after the cut; titles cut to 80; ids
    without control characters)."""
    from lichhook.contracts import provider_session_id_problem

    kept = PARSE[contract](raw_of(c))
    if contract == "session-start" and provider_session_id_problem(kept["provider_session_id"]):
        pytest.skip("an id lichhook does not send (docs/session-start.md)")
    if contract == "session-state":
        texts = [kept[k] for k in ("tool", "detail", "reason")]
        if any(contracts.one_line(t, 120) != t for t in texts):
            pytest.skip("text lichhook sends on one line, without controls, trimmed after the cut")
    again = PARSE[contract](built(contract, kept))
    if contract == "session-title":
        assert again["title"] == session_title.text(kept["title"])
    else:
        assert again == kept


def test_builders_apply_lichhooks_text_rules():
    body = json.loads(session_state.body("s1", "busy", tool="  Bash\n", detail="cat <<EOF\nline two\nEOF",
                                         reason="dropped on busy", provider_session_id=UUID))
    assert body == {"session_id": "s1", "state": "busy", "tool": "Bash", "detail": "cat <<EOF",
                    "provider_session_id": UUID}
    body = json.loads(session_state.body("s1", "waiting", tool="", detail="no tool, no detail", reason="\n\n  why\tnot \x1b[0m"))
    assert body == {"session_id": "s1", "state": "waiting", "reason": "why not  [0m"}
    body = json.loads(session_state.body("s1", "busy", tool="T", detail="\u00e9" * 130 + "\ud800"))
    assert body["detail"] == "\u00e9" * 120
    assert json.loads(session_state.body("s1", "busy", tool="T", detail="a\ud800b"))["detail"] == "a\ufffdb"
    assert session_title.text("  " + "x" * 79 + " y" * 5) == "x" * 79
    assert session_title.text("\n\n  First line\nsecond") == "First line"
    assert session_title.text("  \n \u3000") == "" and session_title.text(None) == ""
    assert json.loads(session_touched.body("s1", UUID)) == {"session_id": "s1", "provider_session_id": UUID}
    assert json.loads(session_title.body("s1", "T", UUID)) == {"session_id": "s1", "title": "T", "provider_session_id": UUID}


def test_builders_never_send_what_lich_refuses():
    with pytest.raises(ValueError):
        session_state.body("s1", "interrupted")
    with pytest.raises(ValueError):
        session_state.body("s1", "Busy")
    with pytest.raises(ValueError):
        session_title.body("s1", "")
    for data in (session_state.body("s1", "done"), session_title.body("s1", "x"), session_touched.body("s1"),
                 session_start.body("s1", UUID, "codex")):
        assert data.isascii() and b": " not in data and b", " not in data


def test_one_module_per_endpoint():
    paths = {name: contracts.module(name).PATH for name in contracts.NAMES}
    assert paths == {"session-start": "/session-start", "session-state": "/hook", "session-title": "/session-title",
                     "session-touched": "/session-touched"}
    for name, path in paths.items():
        assert contracts.by_path(path).NAME == name
    assert contracts.by_path("/ping") is None


def test_registry_is_lichs_current_one():
    assert sorted(session_start.PROVIDERS) == ["antigravity", "claude", "codex", "crush", "cursor", "kiro", "omp",
                                              "opencode"]
    from_fixture = {c["accept"]["provider"] for contract, c in shared_cases()
                    if contract == "session-start" and "accept" in c}
    if from_fixture:
        assert from_fixture == set(session_start.PROVIDERS)


# --- each contract builds what is sent from an adapter's report -------------------------------

def event(last_title=None):
    from lichhook.adapter import Event

    return Event("codex", "Stop", {}, {}, last_title=last_title, known=True)


def test_each_report_kind_goes_to_its_own_contract_and_lich_takes_the_body():
    from lichhook.adapter import Report

    reports = [Report.start(UUID), Report.state("waiting", tool="Bash", detail="ls", reason="approve?"),
               Report.title("Fix the build", UUID), Report.touched(UUID)]
    assert [r.contract for r in reports] == list(contracts.NAMES)
    for report in reports:
        out = contracts.outgoing(report, "lich-1", event())
        module = contracts.module(report.contract)
        assert out.path == module.PATH and out.what.startswith(module.NAME)
        accepted = module.parse(out.body)
        assert accepted["session_id"] == "lich-1"
    assert contracts.outgoing(reports[0], "lich-1", event()).title is None
    assert contracts.outgoing(reports[2], "lich-1", event()).title == "Fix the build"


def test_a_title_is_sent_once_and_a_placeholder_only_kept():
    from lichhook.adapter import Report

    same = contracts.outgoing(Report.title("Fix it"), "lich-1", event(last_title="Fix it"))
    assert (same.body, same.title, same.what) == (None, None, "session-title: unchanged")
    placeholder = contracts.outgoing(Report.title("New session", placeholder=True), "lich-1", event())
    assert (placeholder.body, placeholder.title) == (None, "New session")
    blank = contracts.outgoing(Report.title(" \n "), "lich-1", event())
    assert (blank.body, blank.title) == (None, None)


def test_a_start_without_a_usable_id_is_not_sent_and_says_why():
    from lichhook.adapter import Report

    assert contracts.outgoing(Report.start(None), "s", event()).what == "no session id in the payload"
    refused = contracts.outgoing(Report.start("a/b"), "s", event())
    assert refused.body is None and "'/'" in refused.what
    # The others send an id lich would refuse not at all, and still count.
    touched = contracts.outgoing(Report.touched("a/b"), "s", event())
    assert json.loads(touched.body) == {"session_id": "s"}


def test_an_unknown_contract_is_refused_by_name():
    from lichhook.adapter import Report

    with pytest.raises(ValueError, match="unknown contract 'session-stop'; lich's are session-start, "):
        contracts.outgoing(Report("session-stop"), "s", event())
