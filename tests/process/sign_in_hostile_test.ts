/**
 * The sign-in of the real program against a hostile server on loopback:
 * endless bodies at each endpoint (the bridge reads at most 1 MiB, its peak
 * memory stays low, the connection is closed), a token endpoint that never
 * answers (`--sign-in-timeout` stops it: sign_in_timeout), and endpoints of
 * the authorization server that are plain http on a host that is not
 * loopback (the sign-in fails before a request goes there).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { writeBrowserScript } from "../fixtures/auth/browser_script.ts";
import {
  type HostileFault,
  type HostileServer,
  type MetadataOverrides,
  startHostile,
} from "../fixtures/auth/hostile_server.ts";
import { freePort } from "../free_port.ts";
import { waitFor } from "../wait.ts";
import { BridgeProcess, peakRssMb } from "./helpers.ts";

/** True once the server has no open connection; false after `ms`. */
function closed(server: { open(): number }, ms: number): Promise<boolean> {
  return waitFor("no open connection", () => server.open() === 0, { timeoutMs: ms, intervalMs: 20 })
    .catch(() => false);
}

interface Outcome {
  readonly error: { message: string; data?: { cause?: string; detail?: string } };
  readonly ms: number;
  readonly peakMb: number;
  readonly server: HostileServer;
  readonly stderr: string;
}

/** Initializes a bridge in front of the hostile server; the error of initialize. */
async function signInAgainst(
  fault: HostileFault | undefined,
  options: { overrides?: MetadataOverrides; issuer?: string; args?: string[] } = {},
  check: (outcome: Outcome) => Promise<void> | void,
): Promise<void> {
  const server = startHostile(fault, options.overrides, options.issuer);
  const dir = await Deno.makeTempDir({ prefix: "auth-hostile-" });
  try {
    const bridge = new BridgeProcess([
      server.url,
      "--token-store",
      `${dir}/store`,
      "--redirect-port",
      String(freePort()),
      "--discover-timeout",
      "60",
      ...(options.args ?? []),
    ], { BROWSER: await writeBrowserScript(dir) });
    try {
      const start = Date.now();
      const response = await bridge.initialize().catch(() => undefined);
      const ms = Date.now() - start;
      ok(response, `no answer to initialize; stderr:\n${bridge.stderr}`);
      const error = response.error as Outcome["error"];
      ok(error, JSON.stringify(response));
      await check({
        error,
        ms,
        peakMb: peakRssMb(bridge.child.pid),
        server,
        stderr: bridge.stderr,
      });
    } finally {
      await bridge[Symbol.asyncDispose]();
    }
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const endless: [HostileFault["at"], string][] = [
  ["resource-metadata", "protected resource metadata"],
  ["as-metadata", "authorization server metadata"],
  ["registration", "registration"],
  ["token", "token request"],
];

for (const [at, step] of endless) {
  Deno.test(`process: an endless body of the ${step} is cut at 1 MiB, the connection closed`, async () => {
    await signInAgainst({ at, how: "endless" }, {}, async (outcome) => {
      strictEqual(outcome.error.data?.cause, "sign_in_failed", JSON.stringify(outcome.error));
      strictEqual(
        outcome.error.data?.detail,
        `${step}: HTTP status 200, a response larger than 1 MiB`,
      );
      ok(outcome.peakMb < 200, `peak RSS ${outcome.peakMb} MB`);
      ok(outcome.ms < 20_000, `${outcome.ms} ms`);
      // The bridge read little of it (the socket buffers hold a few MB at most).
      ok(outcome.server.sent() < 64 * 1024 * 1024, `${outcome.server.sent()} bytes sent`);
      ok(
        await closed(outcome.server, 5_000),
        `${outcome.server.open()} connections still open`,
      );
    });
  });
}

Deno.test("process: a token endpoint that never answers is sign_in_timeout at --sign-in-timeout", async () => {
  await signInAgainst(
    { at: "token", how: "silent" },
    { args: ["--sign-in-timeout", "4"] },
    async (outcome) => {
      strictEqual(outcome.error.data?.cause, "sign_in_timeout", JSON.stringify(outcome.error));
      ok(outcome.error.message.includes("did not complete in 4 s"), outcome.error.message);
      strictEqual(outcome.server.hits.get("/token"), 1, "the token request was sent");
      ok(outcome.ms >= 4_000 && outcome.ms < 7_000, `${outcome.ms} ms`);
      ok(
        await closed(outcome.server, 3_000),
        `${outcome.server.open()} connections still open`,
      );
    },
  );
});

Deno.test("process: an http authorization server that is not loopback gets no request", async () => {
  await signInAgainst(undefined, { issuer: "http://auth.invalid.test" }, (outcome) => {
    strictEqual(outcome.error.data?.cause, "sign_in_failed", JSON.stringify(outcome.error));
    strictEqual(
      outcome.error.data?.detail,
      "authorization server metadata: the endpoint is not https",
    );
    strictEqual(outcome.server.hits.get("/.well-known/oauth-authorization-server"), undefined);
  });
});

for (
  const [name, step] of [
    ["registration_endpoint", "registration"],
    // The SDK refused it before its request: the detail said the registration's 201.
    ["token_endpoint", "token request"],
  ] as const
) {
  Deno.test(`process: an http ${name} that is not loopback fails before any registration`, async () => {
    await signInAgainst(
      undefined,
      { overrides: { [name]: `http://auth.invalid.test/${name}` } },
      (outcome) => {
        strictEqual(outcome.error.data?.cause, "sign_in_failed", JSON.stringify(outcome.error));
        strictEqual(outcome.error.data?.detail, `${step}: the endpoint is not https`);
        deepStrictEqual(
          [...outcome.server.hits.keys()].filter((path) =>
            ["/reg", "/authorize", "/token"].includes(path)
          ),
          [],
          "no request after the metadata",
        );
        ok(!outcome.stderr.includes("/start/"), "no browser was asked");
      },
    );
  });
}

Deno.test("process: a failed token request names its own step and status, not the registration's", async () => {
  await signInAgainst(undefined, {}, (outcome) => {
    strictEqual(outcome.error.data?.cause, "sign_in_failed", JSON.stringify(outcome.error));
    strictEqual(outcome.error.data?.detail, "token request: HTTP status 500");
    strictEqual(outcome.server.hits.get("/reg"), 1);
  });
});
