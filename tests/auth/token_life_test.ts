/**
 * The life of stored tokens: a token response in its stored form (the
 * lifetime as an instant, the scope asked when none was granted), and the
 * rule that a token that expires within a minute is refreshed before use.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { REFRESH_MARGIN_MS, toStored, usable } from "../../lib/auth/token_life.ts";

Deno.test("toStored: the lifetime becomes an instant; the granted scope, else the scope asked", () => {
  const before = Date.now();
  const stored = toStored(
    { access_token: "at", token_type: "Bearer", refresh_token: "rt", expires_in: 3600, scope: "a" },
    "a b",
  );
  const after = Date.now();
  ok(stored.expiresAt! >= before + 3_600_000 && stored.expiresAt! <= after + 3_600_000);
  deepStrictEqual({ ...stored, expiresAt: 0 }, {
    accessToken: "at",
    tokenType: "Bearer",
    refreshToken: "rt",
    expiresAt: 0,
    scope: "a",
    requestedScope: "a b",
  });
  // The server did not say which scope it granted: the scope asked.
  strictEqual(toStored({ access_token: "at", token_type: "Bearer" }, "a b").scope, "a b");
});

Deno.test("toStored: what the response lacks is not stored (no lifetime, no refresh token, no scope)", () => {
  deepStrictEqual(toStored({ access_token: "at", token_type: "Bearer" }, undefined), {
    accessToken: "at",
    tokenType: "Bearer",
  });
});

Deno.test("usable: valid for more than a minute, or no lifetime; no tokens are not usable", () => {
  strictEqual(REFRESH_MARGIN_MS, 60_000);
  const at = (ms: number) => ({
    accessToken: "a",
    tokenType: "Bearer",
    expiresAt: Date.now() + ms,
  });
  strictEqual(usable(undefined), false);
  strictEqual(usable({ accessToken: "a", tokenType: "Bearer" }), true);
  strictEqual(usable(at(REFRESH_MARGIN_MS + 10_000)), true);
  strictEqual(usable(at(REFRESH_MARGIN_MS - 10_000)), false);
  strictEqual(usable(at(-1000)), false);
});
