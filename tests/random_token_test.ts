import { strictEqual } from "node:assert/strict";
import { randomToken } from "../lib/random_token.ts";

Deno.test("randomToken: length ceil(bytes * 4 / 3) in the base64url alphabet without padding", () => {
  for (const bytes of [0, 1, 2, 3, 16, 24, 32, 100]) {
    for (let i = 0; i < 50; i++) {
      const token = randomToken(bytes);
      strictEqual(token.length, Math.ceil(bytes * 4 / 3), `${bytes} bytes: ${token}`);
      strictEqual(/^[A-Za-z0-9_-]*$/.test(token), true, token);
    }
  }
});

Deno.test("randomToken: every character of the alphabet comes, and no two tokens are equal", () => {
  const seen = new Set<string>();
  const chars = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const token = randomToken(24);
    seen.add(token);
    for (const c of token) chars.add(c);
  }
  strictEqual(seen.size, 10_000);
  strictEqual(chars.size, 64);
});
