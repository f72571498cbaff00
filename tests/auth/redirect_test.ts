/** The redirect listener: the start URL, the callback and its errors, through a real provider. */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { call, failsWith, setup } from "./harness.ts";

Deno.test("access denied at the consent is sign_in_denied, and the page says so", async () => {
  const world = await setup({ mode: "deny" });
  try {
    await failsWith(call(world), "sign_in_denied");
    const [visit] = await Promise.all(world.visits);
    ok(visit!.text.includes("refused the access"), visit!.text);
  } finally {
    await world.close();
  }
});

Deno.test("another redirect error is sign_in_error with its code", async () => {
  const world = await setup();
  world.provider.faults.authorizationError = "temporarily_unavailable";
  try {
    const failure = await failsWith(call(world), "sign_in_error");
    strictEqual(failure.signIn?.detail, "temporarily_unavailable");
  } finally {
    await world.close();
  }
});

Deno.test("a redirect port in use is redirect_port_unavailable with the port", async () => {
  const world = await setup();
  const squatter = Deno.listen({ hostname: "127.0.0.1", port: world.port });
  try {
    const failure = await failsWith(call(world), "redirect_port_unavailable");
    deepStrictEqual(failure.signIn?.placeholders, { port: String(world.port) });
    strictEqual(world.opened.length, 0);
  } finally {
    squatter.close();
    await world.close();
  }
});

Deno.test("a start URL opened twice stops the sign-in with sign_in_start_reused", async () => {
  const world = await setup({ mode: "twice" });
  try {
    const failure = await failsWith(call(world), "sign_in_start_reused");
    strictEqual(failure.signIn?.detail, undefined);
    const [visit] = await Promise.all(world.visits);
    strictEqual(visit!.status, 409);
  } finally {
    await world.close();
  }
});
