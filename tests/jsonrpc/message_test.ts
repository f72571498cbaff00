import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  idKey,
  idOfToken,
  integerDigits,
  isRawId,
  isRequestId,
  type RequestId,
} from "../../lib/jsonrpc/message.ts";

Deno.test("integerDigits gives the exact integer of a token, or undefined for a fraction", () => {
  const cases: [string, string | undefined][] = [
    ["0", "0"],
    ["-0", "0"],
    ["7", "7"],
    ["-12", "-12"],
    ["1.0", "1"],
    ["1.5e1", "15"],
    ["1E2", "100"],
    ["1e+2", "100"],
    ["9007199254740993", "9007199254740993"],
    ["9.007199254740993e15", "9007199254740993"],
    ["1e308", "1" + "0".repeat(308)],
    ["0.000e5", "0"],
    ["1.5", undefined],
    ["1e-1", undefined],
    ["9007199254740993.5", undefined],
    ["1e999", undefined],
    ["01", undefined],
    ["+1", undefined],
    ['"1"', undefined],
  ];
  for (const [token, digits] of cases) strictEqual(integerDigits(token), digits, token);
});

Deno.test("idOfToken: plain values where they write back the same, the token where not", () => {
  for (const token of ["7", "-3", "0", '"a"', '"é"', "9007199254740991"]) {
    const id = idOfToken(token);
    strictEqual(isRawId(id), false, token);
    strictEqual(JSON.stringify(id), token);
  }
  for (const token of ["9007199254740993", "1e308", "-0", "1.0", '"\\u0041"', '"\\/"']) {
    const id = idOfToken(token);
    strictEqual(isRawId(id), true, token);
    strictEqual(isRequestId(id), true, token);
    strictEqual(JSON.stringify({ id }), `{"id":${token}}`);
  }
  for (const token of ["1.5", "null", "true", "{}", "[1]", "nope", "1e-5"]) {
    strictEqual(idOfToken(token), undefined, token);
  }
});

Deno.test("idKey: the same value is the same key, whatever its token; 2^53 and 2^53 + 1 differ", () => {
  const key = (token: string) => idKey(idOfToken(token) as RequestId);
  deepStrictEqual(
    ["1", "1.0", "1e0", "10e-1"].map(key),
    ["n:1", "n:1", "n:1", "n:1"],
  );
  strictEqual(key("-0"), key("0"));
  strictEqual(key('"\\u0041"'), key('"A"'));
  strictEqual(key('"1"') === key("1"), false);
  strictEqual(key("9007199254740993") === key("9007199254740992"), false);
  strictEqual(key("9007199254740992"), key("9007199254740992.0"));
  // A plain number beyond 2^53 (from a plain parse) has the key of its exact value.
  strictEqual(idKey(1e21), key("1000000000000000000000"));
});
