/**
 * The ready state of one connection (a real upstream: an SDK v2 server over
 * the memory link, a raw server at a URL): the icon rule of the link, the
 * listen stream opened once at notifications/initialized, resources/subscribe
 * through it, the URL prompt of a later sign-in only for a client that
 * declared elicitation.url, and a forwarded request with its rules applied.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { initializeUpstream } from "../../lib/frontend/initialize_step.ts";
import type { Ready } from "../../lib/frontend/ready.ts";
import type { Json, JsonObject, Message } from "../../lib/jsonrpc/message.ts";
import type { BridgeError } from "../../lib/errors/errors.ts";
import { createHttpLink } from "../../lib/upstream/http.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import type { TokenSource } from "../../lib/http/token_source.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { serveMcp } from "../fixtures/http_raw.ts";
import { initializeContext } from "./initialize_context.ts";

/** The ready state of `connect` for a client with `capabilities`, and what it wrote. */
async function readyOf(
  connect: Connect,
  capabilities: JsonObject = {},
): Promise<{ ready: Ready; written: Message[] } & AsyncDisposable> {
  const written: Message[] = [];
  const started = await initializeUpstream(initializeContext(connect, {
    params: {
      protocolVersion: "2025-11-25",
      capabilities,
      clientInfo: { name: "t", version: "1" },
    },
    write: (message) => void written.push(message),
  }));
  if (started.kind !== "ready") throw new Error(`not ready: ${started.kind}`);
  const ready = started.ready as Ready;
  return {
    ready,
    written,
    [Symbol.asyncDispose]: async () => {
      await ready.listener?.close();
      await ready.session.close();
    },
  };
}

const memory = () => connectMemoryLink(buildServer);

/** The outcome of one subscription change. */
function subscribe(
  ready: Ready,
  params: Json | undefined,
): Promise<{ result: Json } | BridgeError> {
  return new Promise((resolve) => ready.subscription("resources/subscribe", params, resolve));
}

const causeOf = (outcome: { result: Json } | BridgeError) =>
  "result" in outcome ? undefined : (outcome.data as { cause: string }).cause;

Deno.test("ready: the icon rule is all for a local link, data_only for a server at a URL", async () => {
  await using local = await readyOf(memory);
  strictEqual(local.ready.icons, "all");
  await using upstream = serveMcp(() => undefined);
  await using remote = await readyOf(() =>
    createHttpLink({ url: new URL(upstream.url), maxResponseBytes: 1 << 20 })
  );
  strictEqual(remote.ready.icons, "data_only");
});

Deno.test("ready: resources/subscribe is method_not_found before the listen stream, invalid_params without a uri, then reaches the stream", async () => {
  await using r = await readyOf(memory);
  strictEqual(r.ready.listener, undefined);
  strictEqual(causeOf(await subscribe(r.ready, { uri: "embedded://readme" })), "method_not_found");
  r.ready.initialized();
  const listener = r.ready.listener;
  ok(listener !== undefined);
  // A second notifications/initialized opens no second stream.
  r.ready.initialized();
  strictEqual(r.ready.listener, listener);
  strictEqual(causeOf(await subscribe(r.ready, { url: "embedded://readme" })), "invalid_params");
  strictEqual(causeOf(await subscribe(r.ready, undefined)), "invalid_params");
  deepStrictEqual(await subscribe(r.ready, { uri: "embedded://readme" }), { result: {} });
});

Deno.test("ready: a server that declares no list change and no subscribe gets no listen stream", async () => {
  await using upstream = serveMcp(() => undefined, { tools: {} });
  await using r = await readyOf(() =>
    createHttpLink({ url: new URL(upstream.url), maxResponseBytes: 1 << 20 })
  );
  r.ready.initialized();
  strictEqual(r.ready.listener, undefined);
  strictEqual(causeOf(await subscribe(r.ready, { uri: "x://y" })), "method_not_found");
});

Deno.test("ready: a later sign-in may ask with a URL elicitation only when the client declared elicitation.url", async () => {
  for (
    const [capabilities, asks] of [[{ elicitation: { url: {} } }, true], [{
      elicitation: { form: {} },
    }, false]] as const
  ) {
    let prompt: unknown;
    const source: TokenSource = {
      authorization: () => Promise.resolve(undefined),
      challenge: () => Promise.resolve("refused"),
      setUrlPrompt: (p) => void (prompt = p),
      nextSignIn: () => Promise.resolve(),
    };
    await using upstream = serveMcp(() => undefined, { tools: {} });
    await using r = await readyOf(
      () =>
        createHttpLink({
          url: new URL(upstream.url),
          maxResponseBytes: 1 << 20,
          tokenSource: source,
        }),
      capabilities,
    );
    strictEqual(prompt, undefined);
    r.ready.initialized();
    strictEqual(typeof prompt === "function", asks, JSON.stringify(capabilities));
  }
});

Deno.test("ready: a forwarded request gets the result rules of the profile (R6, no modern members)", async () => {
  await using r = await readyOf(memory);
  const list = await r.ready.forward("tools/list", {}, new AbortController().signal);
  strictEqual(list.kind, "result");
  const result = (list as { result: Json }).result as { tools: JsonObject[] } & JsonObject;
  strictEqual(result.resultType, undefined);
  const echo = result.tools.find((tool) => tool.name === "echo")!;
  deepStrictEqual((echo.inputSchema as { properties: JsonObject }).properties.tags, {
    type: "array",
    items: {},
  });
  const call = await r.ready.forward(
    "tools/call",
    { name: "echo", arguments: { text: "hi" }, task: { ttl: 1 } },
    new AbortController().signal,
  );
  deepStrictEqual(call, { kind: "result", result: { content: [{ type: "text", text: "hi" }] } });
});
