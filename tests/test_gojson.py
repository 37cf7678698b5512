"""The stand-in's Go decoder (lichhook.contracts.gojson) against Go's own encoding/json.

lich decodes every hook body with Go's ``json.Unmarshal`` into a struct of strings; the
stand-in must give the same fields, or the same refusal, for any bytes. The default run
checks the rules by example; the heavy run, where a Go toolchain is on PATH, builds a
small Go program and compares both on tens of thousands of generated and mutated bodies.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess

import pytest

from lichhook.contracts.gojson import MAX_DEPTH, GoJSONError, decode_struct, go_utf8, unquote

FIELDS = ("session_id", "state", "tool", "detail", "reason")

GO_PROGRAM = """
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
)

type hookRequest struct {
	SessionID string `json:"session_id"`
	State     string `json:"state"`
	Tool      string `json:"tool"`
	Detail    string `json:"detail"`
	Reason    string `json:"reason"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		raw, _ := base64.StdEncoding.DecodeString(in.Text())
		var req hookRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			fmt.Fprintln(out, "ERR")
			continue
		}
		b, _ := json.Marshal([]string{req.SessionID, req.State, req.Tool, req.Detail, req.Reason})
		fmt.Fprintln(out, base64.StdEncoding.EncodeToString(b))
	}
}
"""


def ours(raw: bytes):
    try:
        fields = decode_struct(raw, FIELDS)
    except GoJSONError:
        return "ERR"
    return [fields[name] for name in FIELDS]


@pytest.mark.parametrize("raw,expected", [
    (b'{"session_id":"s1"}', ["s1", "", "", "", ""]),
    (b'{"SESSION_ID":"a","session_id":"b"}', ["b", "", "", "", ""]),
    (b'{"session_id":"a","Session_Id":null}', ["a", "", "", "", ""]),
    ('{"\u017fe\u017f\u017fion_id":"s","\u212a":"x"}'.encode(), ["s", "", "", "", ""]),
    (b'{"session\\u005fid":"escaped key"}', ["escaped key", "", "", "", ""]),
    (b'{"state":1}', "ERR"),
    (b'{"state":{}}', "ERR"),
    (b'{"other":{"deep":[1,2,{"x":"\\ud800"}]},"tool":"t"}', ["", "", "t", "", ""]),
    (b'null', ["", "", "", "", ""]),
    (b'  {"reason":"\\ud800\\ud800"}\r\n', ["", "", "", "", "\ufffd\ufffd"]),
    (b'{"reason":"\\udc00\\ud83d\\ude00"}', ["", "", "", "", "\ufffd\U0001f600"]),
    (b'{"reason":"\\ud800\\u0041"}', ["", "", "", "", "\ufffdA"]),
    (b'{"reason":"\xed\xa0\x80"}', ["", "", "", "", "\ufffd" * 3]),
    (b'{"reason":"\xf0\x9f\x98"}', ["", "", "", "", "\ufffd" * 3]),
    (b'{"reason":"\xc0\xaf"}', ["", "", "", "", "\ufffd" * 2]),
    (b'{"reason":"a\x1fb"}', "ERR"),
    (b'{"reason":"\\x41"}', "ERR"),
    (b'{"n":01}', "ERR"),
    (b'{"n":-}', "ERR"),
    (b'{"n":1.}', "ERR"),
    (b'{"n":Infinity}', "ERR"),
    (b'{"n":1e+9999}', ["", "", "", "", ""]),  # syntax only: an unread number is never converted
    (b'{"a":1,}', "ERR"),
    (b'{"a" 1}', "ERR"),
    (b"", "ERR"),
    (b"{} {}", "ERR"),
    (b"\xef\xbb\xbf{}", "ERR"),  # Go takes no byte order mark
    (b'{"n":' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}", ["", "", "", "", ""]),
    (b'{"n":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}", "ERR"),
])
def test_decodes_as_go_does(raw, expected):
    assert ours(raw) == expected


def test_go_utf8_replaces_each_bad_byte():
    assert go_utf8(b"a\xe2\x82(") == "a\ufffd\ufffd("
    assert go_utf8(b"\xff\xfe") == "\ufffd\ufffd"
    assert go_utf8("\u00e9\U0001f600".encode()) == "\u00e9\U0001f600"
    assert unquote(b'"\\"\\\\\\/\\b\\f\\n\\r\\t"') == '"\\/\b\f\n\r\t'


def generated(count: int, seed: int) -> list:
    """Bodies lich might see: objects of its fields and others, with every value type,
    escapes, bad UTF-8, case-folded keys; then the same, mutated byte by byte."""
    rng = random.Random(seed)
    keys = [b'"session_id"', b'"SESSION_ID"', "\"\u017fession_id\"".encode(), b'"state"', b'"STATE"', b'"tool"',
            b'"detail"', "\"deta\u0131l\"".encode(), b'"reason"', b'"x"', b'"session\\u005fid"', '"\u212a"'.encode()]
    values = [b'"s1"', b'"busy"', b"null", b"1", b"true", b"[]", b"{}", b'"\\ud800x"', b'"\xff\xfe"', b'"\xe2\x82("',
              b'"  t  "', b'"\\ud83d\\ude00"', b'"\\udc00"', b'{"a":[1,{"b":null}]}', b'"\xed\xa0\x80"', b'"\xf0\x9f\x98"',
              b"1.5e3", b"-0", b'"\\u0000"']
    out = []
    for _ in range(count):
        members = [rng.choice(keys) + rng.choice([b":", b" : "]) + rng.choice(values) for _ in range(rng.randint(0, 5))]
        raw = bytearray(b"{" + b",".join(members) + b"}")
        for _ in range(rng.choice([0, 0, 1, 2, 3])):
            pos = rng.randrange(len(raw) + 1)
            choice = rng.random()
            if choice < 0.4 and raw:
                raw[min(pos, len(raw) - 1)] = rng.randrange(256)
            elif choice < 0.7:
                raw[pos:pos] = bytes([rng.randrange(256)])
            elif raw:
                del raw[min(pos, len(raw) - 1)]
        out.append(bytes(raw))
    return out


@pytest.mark.heavy
@pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain on PATH to compare against")
def test_agrees_with_go_on_generated_bodies(tmp_path):
    source = tmp_path / "main.go"
    source.write_text(GO_PROGRAM, encoding="utf-8")
    env = {"GOCACHE": str(tmp_path / "cache"), "GOPATH": str(tmp_path / "gopath"), "HOME": str(tmp_path),
           "PATH": __import__("os").environ["PATH"], "GO111MODULE": "off"}
    subprocess.run(["go", "build", "-o", str(tmp_path / "decode"), str(source)], check=True, env=env,
                   capture_output=True, timeout=300)
    cases = generated(40000, seed=16)
    done = subprocess.run([str(tmp_path / "decode")], input=b"\n".join(base64.b64encode(c) for c in cases) + b"\n",
                          capture_output=True, check=True, timeout=300)
    answers = done.stdout.decode().split("\n")
    differ = []
    for raw, answer in zip(cases, answers):
        go = "ERR" if answer == "ERR" else json.loads(base64.b64decode(answer))
        if ours(raw) != go:
            differ.append((raw, go, ours(raw)))
    assert not differ[:5], f"{len(differ)} of {len(cases)} bodies decode differently"
