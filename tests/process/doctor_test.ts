/**
 * `mcp-bridge-vscode doctor`: the real program (`deno run -P main.ts doctor`)
 * against real upstreams: the demo server (2026-07-28), a v1 SDK server
 * (2025-11-25), a server whose tools need the repairs of the bridge, and an
 * upstream at a URL on loopback (with a stored token, a sign-in, icons and
 * the sandbox). The report never holds a token or the URL's path or query.
 */

import { strictEqual } from "node:assert/strict";
import { runBridge } from "../fixtures/http_bridge.ts";
import { json, type RawMessage, result, serveMcp } from "../fixtures/http_raw.ts";
import { TokenStore } from "../../lib/auth/store.ts";
import { assertExcludes, assertIncludes } from "../assert.ts";
import { DENO, ROOT } from "./helpers.ts";

const DEMO = [DENO, "run", `${ROOT}scripts/demo_server.ts`];
const LEGACY = [DENO, "run", "-A", `${ROOT}tests/fixtures/legacy_server.ts`];
const RAW = [DENO, "run", "-A", `${ROOT}tests/fixtures/raw_server.ts`, "ok"];
const SECRETS = ["secret-path", "sekrit-query", "tok-s3cret", "refresh-s3cret", "v4lue-s3cr3t"];

function assertClean(text: string): void {
  for (const secret of SECRETS) assertExcludes(text, secret);
}

Deno.test("doctor: the demo server (2026-07-28) is fine: exit 0, its capabilities, the R6 repair of 'sum'", async () => {
  const out = await runBridge(["doctor", "--", ...DEMO]);
  strictEqual(out.code, 0, out.stdout + out.stderr);
  assertIncludes(
    out.stdout,
    "ok      The upstream server answers server/discover; it speaks revision 2026-07-28.",
  );
  assertIncludes(
    out.stdout,
    "Capabilities: tools (listChanged), prompts (listChanged), resources (listChanged), completion, log messages.",
  );
  assertIncludes(
    out.stdout,
    "repair  tool 'sum': gave the array schema at /properties/numbers an items schema",
  );
  assertIncludes(out.stdout, "ok      tools/list: 2 items.");
  assertIncludes(out.stdout, "Result: nothing would break in VS Code (the bridge repairs 1).");
  strictEqual(out.stderr, "");
});

Deno.test("doctor: a v1 SDK server (2025-11-25) would break: exit 1 with the hint of --protocol auto", async () => {
  const out = await runBridge(["doctor", "--", ...LEGACY]);
  strictEqual(out.code, 1, out.stdout + out.stderr);
  assertIncludes(
    out.stdout,
    "break   The upstream server speaks revision 2025-11-25 (it answered initialize), not 2026-07-28 (server/discover: discover_failed: Method not found). Start the bridge with --protocol auto",
  );
  assertIncludes(out.stdout, "Result: 1 thing would break in VS Code.");
});

Deno.test("doctor: each repair of the result rules is named (R6, output schema, nextCursor)", async () => {
  const out = await runBridge(["doctor", "--", ...RAW]);
  strictEqual(out.code, 0, out.stdout + out.stderr);
  for (
    const line of [
      "repair  tool 'array_no_items': gave the array schema at /properties/tags an items schema",
      "repair  tool 'array_no_items': gave the array schema at /properties/pairs an items schema",
      "repair  tool 'array_no_items': gave the array schema at /properties/nested/properties/deep an items schema",
      "repair  tool 'non_object_output': removed an outputSchema whose root is not an object schema",
      "repair  tools/list: removed a nextCursor that is not a string",
    ]
  ) assertIncludes(out.stdout, line);
  // The tool whose output schema is an object keeps it: no line names it.
  assertExcludes(out.stdout, "'object_output'");
});

Deno.test("doctor: a command that does not start: exit 1 with the cause", async () => {
  const out = await runBridge(["doctor", "--", `${ROOT}no/such/v4lue-s3cr3t-server`]);
  strictEqual(out.code, 1);
  assertIncludes(out.stdout, "break   The upstream server does not start or answer:");
  // The command's file name is shown, not its directory or its arguments.
  assertExcludes(out.stdout, `${ROOT}no/such`);
});

Deno.test("doctor: a usage error is exit 2 with one line and the pointer to --help", async () => {
  const out = await runBridge(["doctor", "--bogus", "--", "x"]);
  strictEqual(out.code, 2);
  strictEqual(
    out.stderr,
    "[mcp-bridge-vscode] error: the option --bogus is not known\nRun 'mcp-bridge-vscode --help' for the usage.\n",
  );
  strictEqual(out.stdout, "");
});

/** A loopback upstream that wants `Bearer tok-s3cret`, with tools whose icons are not data:. */
function protectedUpstream() {
  return serveMcp((message: RawMessage, request: Request) => {
    if (request.headers.get("authorization") !== "Bearer tok-s3cret") {
      return new Response("", {
        status: 401,
        headers: { "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1:1/x"' },
      });
    }
    if (message.method === "tools/list") {
      return result(message, {
        resultType: "complete",
        tools: [{
          name: "pic",
          inputSchema: { type: "object" },
          icons: [{ src: "https://icons.example/a.png" }, { src: "data:image/png;base64,AA==" }],
        }],
      });
    }
    if (message.method === "ping") return json({ jsonrpc: "2.0", id: message.id, result: {} });
    return undefined;
  });
}

Deno.test("doctor: a URL with a stored token: the expiry, the icons dropped, no token and no path or query", async () => {
  const store = await Deno.makeTempDir();
  await using upstream = protectedUpstream();
  const tokens = await TokenStore.open(store);
  const expiresAt = Date.now() + 3_600_000;
  await tokens.write(new URL(upstream.url).href, {
    issuer: "https://as.example/",
    clients: [],
    tokens: {
      accessToken: "tok-s3cret",
      tokenType: "Bearer",
      refreshToken: "refresh-s3cret",
      expiresAt,
    },
  });
  try {
    const out = await runBridge(["doctor", "--token-store", store, upstream.url]);
    strictEqual(out.code, 0, out.stdout + out.stderr);
    assertIncludes(
      out.stdout,
      `the server at http://127.0.0.1:${upstream.port} (path and query not shown)`,
    );
    assertIncludes(out.stdout, `ok      The token store ${store} has the mode 0700.`);
    assertIncludes(
      out.stdout,
      `A token is stored for this server; it expires at ${
        new Date(expiresAt).toISOString()
      } (in 60 min).`,
    );
    assertIncludes(out.stdout, "repair  tools/list 'pic': dropped 1 of 2 icons");
    assertIncludes(out.stdout, "is free.");
    assertClean(out.stdout + out.stderr);
  } finally {
    await Deno.remove(store, { recursive: true });
  }
});

Deno.test("doctor: a URL that asks for a sign-in, in the sandbox: exit 1, the domains and the store to allow", async () => {
  const store = await Deno.makeTempDir();
  await Deno.chmod(store, 0o777);
  await using upstream = protectedUpstream();
  try {
    const out = await runBridge(["doctor", "--token-store", store, upstream.url], {
      SANDBOX_RUNTIME: "1",
    });
    strictEqual(out.code, 1, out.stdout + out.stderr);
    assertIncludes(
      out.stdout,
      `break   The token store ${store} can be written by other users (mode 0777)`,
    );
    assertIncludes(out.stdout, "note    No token is stored for this server.");
    assertIncludes(out.stdout, "The server asks for a sign-in (HTTP status 401)");
    assertIncludes(
      out.stdout,
      `SANDBOX_RUNTIME=1: allow the domains 127.0.0.1 and the writes to ${store}.`,
    );
    assertIncludes(
      out.stdout,
      `"sandbox": {"network":{"allowedDomains":["127.0.0.1"]},"filesystem":{"allowWrite":[${
        JSON.stringify(store)
      }]}}`,
    );
    assertIncludes(
      out.stdout,
      "break   The server needs a sign-in, and in the sandbox the bridge cannot open a browser",
    );
    assertIncludes(out.stdout, "Result: 2 things would break in VS Code.");
    assertClean(out.stdout + out.stderr);
  } finally {
    await Deno.remove(store, { recursive: true });
  }
});

Deno.test("doctor: a URL that does not answer: exit 1, the cause, no path or query", async () => {
  await using upstream = serveMcp(() => new Response("no", { status: 404 }));
  const out = await runBridge(["doctor", "--header-env", "Authorization=K", upstream.url], {
    K: "Bearer v4lue-s3cr3t",
  });
  strictEqual(out.code, 1, out.stdout + out.stderr);
  assertIncludes(out.stdout, "The Authorization header of --header-env");
  assertIncludes(
    out.stdout,
    "break   The upstream server does not start or answer: discover_failed: HTTP status 404.",
  );
  assertClean(out.stdout + out.stderr);
});

Deno.test("doctor: a token store of another user is a break (root's directory, seen by the owner's uid)", async () => {
  // Only where the test runs as a user who does not own /: the root directory is then "another user's".
  const rootOwner = (await Deno.lstat("/")).uid;
  if (rootOwner === Deno.uid()) {
    // As root every directory of root is the user's own: make one of another user instead.
    const store = await Deno.makeTempDir();
    await Deno.chown(store, 65534, 65534);
    await Deno.chmod(store, 0o700);
    await using upstream = protectedUpstream();
    try {
      const out = await runBridge(["doctor", "--token-store", store, upstream.url]);
      strictEqual(out.code, 1, out.stdout + out.stderr);
      assertIncludes(out.stdout, `break   The token store ${store} belongs to another user`);
    } finally {
      await Deno.remove(store, { recursive: true });
    }
    return;
  }
  await using upstream = protectedUpstream();
  const out = await runBridge(["doctor", "--token-store", "/", upstream.url]);
  strictEqual(out.code, 1, out.stdout + out.stderr);
  assertIncludes(out.stdout, "break   The token store / belongs to another user");
});
