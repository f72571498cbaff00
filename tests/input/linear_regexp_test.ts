import { strictEqual, throws } from "node:assert/strict";
import { LINEAR_FORMATS, linearTest } from "../../lib/input/linear_regexp.ts";

// Each pattern against each text: the answer of JavaScript's own engine (flag u, as ajv uses).
const PATTERNS = [
  "^[a-z]+$",
  "\\d{3}",
  "^(a+)+$",
  "^\\p{Lu}",
  "^\\u{1F600}?x$",
  "^[^\\]x]+$",
  "^(?=.*[A-Z])(?=.*\\d).{8,}$",
  "^(?!admin$)[a-z]+$",
  "^(?=[^|]*\\|)(?:a|b\\|)+$",
  "^(?=(a|b))(?=.*(x|y)$)[abxy]*$",
  "^(?=a)",
];
const TEXTS = [
  "",
  "abc",
  "ABC",
  "a1",
  "Passw0rd",
  "password1",
  "PASSWORD1",
  "Pass1",
  "admin",
  "admins",
  "b|",
  "a|b|",
  "ax",
  "bay",
  "cax",
  "123",
  "\u{1F600}x",
  "x",
  "Ärger",
  "a]",
  "aaaa",
  "aaa!",
];

for (const pattern of PATTERNS) {
  Deno.test(`linear regexp agrees with JavaScript: /${pattern}/u`, () => {
    const native = new RegExp(pattern, "u");
    const linear = linearTest(pattern, "u");
    for (const text of TEXTS) strictEqual(linear(text), native.test(text), JSON.stringify(text));
  });
}

Deno.test("linear regexp: what RE2 cannot read does not compile", () => {
  for (
    const pattern of [
      "a(?=b)", // a lookahead that is not at the start
      "(?=a)b", // not anchored
      "^(?=a)b|c", // an alternation beside the lookaheads
      "^(?=a(?=b))", // a lookahead in a lookahead
      "(?<=a)b",
      "(a)\\1",
      "^(?=a",
    ]
  ) {
    throws(() => linearTest(pattern, "u"), pattern);
  }
});

Deno.test("linear regexp: no catastrophic backtracking, in a pattern or in a lookahead", () => {
  const long = "a".repeat(200_000) + "!";
  strictEqual(linearTest("^(a+)+$", "u")(long), false);
  strictEqual(linearTest("^(?=(a+)+$)a", "u")(long), false);
  strictEqual(linearTest("^(a|aa)+$", "u")("a".repeat(200_000)), true);
});

Deno.test("linear regexp: the flag i of a format regex", () => {
  strictEqual(linearTest("^abc$", "i")("ABC"), true);
  strictEqual(linearTest("^abc$", "")("ABC"), false);
});

Deno.test("linear formats: hostname through its lookahead parts, duration native", () => {
  const hostname = LINEAR_FORMATS.get("hostname")!;
  strictEqual(hostname("example.com"), true);
  strictEqual(hostname("a".repeat(250) + ".com"), false, "longer than 253");
  strictEqual(hostname("-a.com"), false);
  const duration = LINEAR_FORMATS.get("duration")!;
  strictEqual(duration("P1D"), true);
  strictEqual(duration("P"), false);
});

// Through the whole bridge: tests/process/input_stall_test.ts (a stall of the bridge in this
// process would stop the test's timer too).
