/** The client of the bridge at the authorization server, through a real provider and a sign-in. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { call, failsWith, setup } from "./harness.ts";
import { freePort } from "../free_port.ts";

Deno.test("CIMD: --client-metadata-url is the client ID, without a registration", async () => {
  const cimd = "https://client.example.test/mcp-bridge-vscode.json";
  const port = freePort();
  const world = await setup({
    provider: {
      clients: [{
        client_id: cimd,
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ["authorization_code", "refresh_token"],
      }],
    },
    settings: { clientMetadataUrl: cimd, redirectPort: port },
  });
  world.provider.faults.cimd = true;
  try {
    const response = await call(world);
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.provider.hits.get("/reg") ?? 0, 0);
    strictEqual((await world.store.read(world.resource.url)).clientId, cimd);
  } finally {
    await world.close();
  }
});

Deno.test("a --client-metadata-url that is not https with a path is invalid_client_metadata_url", async () => {
  const world = await setup({ settings: { clientMetadataUrl: "https://client.example.test/" } });
  try {
    await failsWith(call(world), "invalid_client_metadata_url");
  } finally {
    await world.close();
  }
});

Deno.test("a refused registration is registration_failed with the status, the code and the redirect URI", async () => {
  const world = await setup();
  world.provider.faults.registration = { status: 400, error: "invalid_redirect_uri" };
  try {
    const failure = await failsWith(call(world), "registration_failed");
    strictEqual(failure.signIn?.detail, "HTTP status 400, invalid_redirect_uri");
    deepStrictEqual(failure.signIn?.placeholders, {
      redirect_uri: `http://127.0.0.1:${world.port}/callback`,
    });
    strictEqual(world.opened.length, 0);
  } finally {
    await world.close();
  }
});

Deno.test("no registration possible is registration_unavailable", async () => {
  const world = await setup();
  world.provider.faults.noRegistration = true;
  try {
    const failure = await failsWith(call(world), "registration_unavailable");
    deepStrictEqual(failure.signIn?.placeholders, {
      redirect_uri: `http://127.0.0.1:${world.port}/callback`,
    });
  } finally {
    await world.close();
  }
});

Deno.test("--client-id with a wrong --client-issuer is issuer_not_registered; the right one signs in", async () => {
  const port = freePort();
  const world = await setup({
    provider: {
      clients: [{
        client_id: "by-hand",
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ["authorization_code", "refresh_token"],
      }],
    },
    settings: {
      clientId: "by-hand",
      clientIssuer: "https://other.example.test",
      redirectPort: port,
    },
  });
  try {
    await failsWith(call(world), "issuer_not_registered");
    strictEqual(world.opened.length, 0);
    const right = world.again({
      clientId: "by-hand",
      clientIssuer: world.provider.issuer,
      redirectPort: port,
    });
    const response = await call({ source: right.source, resource: world.resource });
    strictEqual(response.status, 200);
    await response.body?.cancel();
    strictEqual(world.provider.hits.get("/reg") ?? 0, 0);
    await Promise.all(right.visits);
  } finally {
    await world.close();
  }
});
