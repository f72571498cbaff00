import { ok, rejects, strictEqual } from "node:assert/strict";
import { MODERN_SERVER } from "../process/helpers.ts";
import { startFrontend } from "./harness.ts";

Deno.test("harness: a message that never comes fails next() with a clear message, not a hang", async () => {
  const t = startFrontend({}, MODERN_SERVER);
  await t.initialize();
  const started = Date.now();
  await rejects(t.next(50), /^Error: no message from the front end in 50 ms; the log:/);
  const waited = Date.now() - started;
  ok(waited < 2_000, `next(50) took ${waited} ms`);
  strictEqual(await t.close(), 0);
  // After the end of the output, next() says so.
  await rejects(t.next(200), /^Error: the output ended/);
});
