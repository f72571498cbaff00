/** The authorization code flow of one sign-in, through a real provider and the test browser. */

import { ok, strictEqual } from "node:assert/strict";
import { call, failsWith, noLeaks, setup } from "./harness.ts";

Deno.test("a token request that fails is sign_in_failed with the step and the HTTP status", async () => {
  const world = await setup();
  world.provider.faults.token = 503;
  try {
    const failure = await failsWith(call(world), "sign_in_failed");
    strictEqual(failure.signIn?.detail, "token request: HTTP status 503");
    const [visit] = await Promise.all(world.visits);
    ok(visit!.text.includes("did not complete"), visit!.text);
    await noLeaks(world);
  } finally {
    await world.close();
  }
});

Deno.test("--no-browser: no browser starts; the log line has the start URL", async () => {
  const world = await setup({ settings: { noBrowser: true } });
  try {
    const pending = call(world);
    const { visit } = await import("../fixtures/auth/browser.ts");
    let url: string | undefined;
    const deadline = Date.now() + 10_000;
    while (url === undefined && Date.now() < deadline) {
      url = world.log.join("").match(/http:\/\/127\.0\.0\.1:\d+\/start\/[\w-]+/)?.[0];
      if (url === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    ok(url, "the log names the start URL");
    const seen = await visit(url, "login");
    strictEqual((await pending).status, 200);
    ok(seen.text.includes("The sign-in is done"));
    strictEqual(world.opened.length, 0);
  } finally {
    await world.close();
  }
});
