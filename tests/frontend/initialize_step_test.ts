/**
 * The first initialize, from the client's params to what the ready state
 * holds: a ReadySession and the initialize result of the profile for a
 * server of revision 2026-07-28; with `--protocol auto` a PassThrough and
 * the older server's own result; a connect that fails, and a cancel.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type InitializeContext, initializeUpstream } from "../../lib/frontend/initialize_step.ts";
import { ReadySession } from "../../lib/frontend/ready.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";
import { connectLegacyHttp } from "../../lib/legacy/http_link.ts";
import { PassThrough } from "../../lib/legacy/passthrough.ts";
import { createHttpLink } from "../../lib/upstream/http.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { initializeContext } from "./initialize_context.ts";

const PARAMS: JsonObject = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: { form: {} } },
  clientInfo: { name: "Visual Studio Code", version: "1.99.0" },
};

/** The context of a VS Code client that declared form elicitation. */
const context = (connect: Connect, extra: Partial<InitializeContext> = {}) =>
  initializeContext(connect, { params: PARAMS, ...extra });

Deno.test("initializeUpstream: a server of revision 2026-07-28 gives a ReadySession and the profile's initialize result", async () => {
  const started = await initializeUpstream(context(() => connectMemoryLink(buildServer)));
  strictEqual(started.kind, "ready");
  if (started.kind !== "ready") return;
  ok(started.ready instanceof ReadySession);
  const result = started.result as JsonObject;
  strictEqual(result.protocolVersion, "2025-11-25");
  deepStrictEqual(result.serverInfo, {
    name: "embedded-example",
    version: "1.0.0",
    title: "Embedded example",
  });
  strictEqual(result.instructions, "An example of the embedded bridge.");
  // The ready state knows what the client declared: a form question, nothing else.
  deepStrictEqual(started.ready.rounds.declared, {
    form: true,
    url: false,
    roots: false,
    sampling: false,
    samplingTools: false,
  });
  await started.ready.session.close();
});

Deno.test("initializeUpstream: --protocol auto and an older server at a URL: a PassThrough and the server's own result", async () => {
  await using server = serveLegacy();
  const url = new URL(server.url);
  const started = await initializeUpstream(context(
    () => createHttpLink({ url, maxResponseBytes: 1 << 20 }),
    { legacy: { connect: () => connectLegacyHttp({ url, maxResponseBytes: 1 << 20 }) } },
  ));
  strictEqual(started.kind, "ready");
  if (started.kind !== "ready") return;
  ok(started.ready instanceof PassThrough);
  const result = started.result as JsonObject;
  strictEqual(result.protocolVersion, "2025-06-18");
  strictEqual((result.serverInfo as JsonObject).name, "raw-http");
  await started.ready.session.close();
});

Deno.test("initializeUpstream: without --protocol auto an older server is discover_failed", async () => {
  await using server = serveLegacy();
  const url = new URL(server.url);
  const started = await initializeUpstream(
    context(() => createHttpLink({ url, maxResponseBytes: 1 << 20 })),
  );
  strictEqual(started.kind, "failed");
  if (started.kind !== "failed") return;
  strictEqual((started.error.data as { cause: string }).cause, "discover_failed");
  await started.stopped;
});

Deno.test("initializeUpstream: a connect that fails is failed with spawn_failed; an aborted signal is canceled", async () => {
  const failed = await initializeUpstream(context(() => Promise.reject(new Error("no such file"))));
  strictEqual(failed.kind, "failed");
  if (failed.kind === "failed") {
    strictEqual((failed.error.data as { cause: string }).cause, "spawn_failed");
    await failed.stopped;
  }
  const abort = new AbortController();
  abort.abort();
  const canceled = await initializeUpstream(
    context(() => connectMemoryLink(buildServer), { signal: abort.signal }),
  );
  strictEqual(canceled.kind, "canceled");
  if (canceled.kind === "canceled") await canceled.stopped;
});
