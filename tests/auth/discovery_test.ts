/** The discovery of the authorization server, through a real provider and a sign-in. */

import { strictEqual } from "node:assert/strict";
import { call, failsWith, setup } from "./harness.ts";

Deno.test("an authorization URL that is not https is sign_in_invalid_url and is not opened", async () => {
  const world = await setup();
  world.provider.faults.authorizationEndpoint = "http://auth.example.test/authorize";
  try {
    await failsWith(call(world), "sign_in_invalid_url");
    strictEqual(world.opened.length, 0);
  } finally {
    await world.close();
  }
});
