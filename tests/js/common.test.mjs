// lichhook/js/common under node's test runner, imported as they are: what opencode's, omp's
// and Claude Code's JS share.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lichTarget } from "../../lichhook/js/common/lich.js";
import { clipped } from "../../lichhook/js/common/text.js";

test("lich's three variables are read as lichhook's Python reads them (lichhook/lichenv.py)", () => {
  assert.deepEqual(lichTarget("4567", "t k", "card/1"), { base: "http://127.0.0.1:4567", token: "t k", session: "card/1" });
  assert.equal(lichTarget("00080", "t", "s").base, "http://127.0.0.1:80");
  assert.equal(lichTarget("65535", "t", "s").base, "http://127.0.0.1:65535");
  for (const port of ["0", "65536", "123456", "", " 80", "80 ", "+80", "8e1", "0x50", "\u0663", "80; rm", undefined, 80]) {
    assert.equal(lichTarget(port, "t", "s"), null, String(port));
  }
  for (const blank of [undefined, null, "", "  ", "\t\n"]) {
    assert.equal(lichTarget("80", blank, "s"), null);
    assert.equal(lichTarget("80", "t", blank), null);
  }
});

test("a cut keeps whole characters: a pair's first half is dropped with its second", () => {
  assert.equal(clipped("abc", 3), "abc");
  assert.equal(clipped("abcd", 3), "abc");
  assert.equal(clipped("ab\u{1F600}c", 3), "ab");
  assert.equal(clipped("ab\u{1F600}c", 4), "ab\u{1F600}");
  assert.equal(clipped("", 0), "");
});
