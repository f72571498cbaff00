/**
 * The front end in process: with small limits and a real upstream child, and
 * on a scripted link for its one response per request.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Frontend } from "../../lib/frontend/frontend.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import type { JsonObject, Message } from "../../lib/jsonrpc/message.ts";
import type { LinkEnd, UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter, MODERN_SERVER } from "../process/helpers.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { waitFor } from "../wait.ts";
import { startFrontend } from "./harness.ts";

Deno.test("a request without a response in its limit gets timeout with the method and the limit", async () => {
  const t = startFrontend({ long_round_timeout_ms: 300, list_timeout_ms: 5000 }, MODERN_SERVER);
  await t.initialize();
  strictEqual(t.frontend.state, "ready");
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 3000 } },
  });
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    id: 2,
    error: {
      code: -32603,
      message: "The upstream server did not answer in time. See the Output channel of the server.",
      data: { cause: "timeout", detail: "method: tools/call, limit: 300 ms" },
    },
  });
  strictEqual(await t.close(), 0);
  strictEqual(t.frontend.state, "closing");
});

Deno.test("the in-flight limit is a named limit that tests can make smaller", async () => {
  // Over the memory link: an SDK v2 server in process, no child to start.
  const t = startFrontend({ max_in_flight_requests: 2 }, buildServer);
  await t.initialize();
  for (const id of [2, 3, 4]) {
    await t.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 200 } },
    });
  }
  const first = await t.next();
  deepStrictEqual([first.id, (first.error as { data: { cause: string } }).data.cause], [
    4,
    "too_many_requests",
  ]);
  const ids = [(await t.next()).id, (await t.next()).id].sort();
  deepStrictEqual(ids, [2, 3]);
  strictEqual(await t.close(), 0);
});

Deno.test("no answers in the answer limit: input_timeout, and the questions get notifications/cancelled", async () => {
  // Over the memory link: the limit of the client's answers applies there too.
  const t = startFrontend({ input_answer_timeout_ms: 300 }, buildServer);
  await t.initialize({ elicitation: { form: {} } });
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "confirm", arguments: {} },
  });
  deepStrictEqual((await t.next()).method, "elicitation/create");
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "no answer in time" },
  });
  const response = await t.next();
  deepStrictEqual([response.id, (response.error as { data: unknown }).data], [2, {
    cause: "input_timeout",
  }]);
  strictEqual(await t.close(), 0);
});

/**
 * A link whose upstream answers server/discover, and answers each other
 * request with `result`: the only peer of the front end in this test.
 */
function scriptedLink(result: () => unknown): UpstreamLink {
  let deliver: ((frame: UpstreamFrame) => void) | undefined;
  let end!: (end: LinkEnd) => void;
  const ended = new Promise<LinkEnd>((resolve) => end = resolve);
  return {
    isRemote: false,
    read(onFrame) {
      deliver = (frame) => void onFrame(frame);
      return ended.then(() => {});
    },
    send(message: Message) {
      const m = message as JsonObject;
      if (typeof m.id === "number") {
        const value = m.method === "server/discover"
          ? { jsonrpc: "2.0", id: m.id, result: { capabilities: { tools: {} } } }
          : { jsonrpc: "2.0", id: m.id, result: result() };
        queueMicrotask(() => deliver?.({ kind: "message", value: value as JsonObject }));
      }
      return Promise.resolve();
    },
    ended,
    close() {
      end({ kind: "closed" });
      return Promise.resolve();
    },
  };
}

async function session(link: UpstreamLink, lines: unknown[]): Promise<unknown[]> {
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: { ...DEFAULT_LIMITS, shutdown_grace_ms: 200 },
    log: SILENT_LOGGER,
    fallback: { name: "t", version: "0" },
    connect: () => Promise.resolve(link),
    output: output.writable,
  });
  const out: unknown[] = [];
  const reading = (async () => {
    const text = output.readable.pipeThrough(new TextDecoderStream());
    for await (const line of text.pipeThrough(new LineSplitter())) out.push(JSON.parse(line));
  })();
  const encode = (messages: unknown[]) =>
    new TextEncoder().encode(messages.map((line) => JSON.stringify(line) + "\n").join(""));
  const input = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encode(lines.slice(0, 1)));
      // The rest after the initialize result.
      await waitFor("the initialize result", () => out.length === 1);
      controller.enqueue(encode(lines.slice(1)));
      // The end of the input only once each request has its response.
      await waitFor("a response to each request", () => out.length === lines.length);
      controller.close();
    },
  });
  const [exit] = await Promise.all([frontend.run(input), reading]);
  strictEqual(exit, 0);
  return out;
}

Deno.test("a throw in the handling of a request still gives its one response: -32603, no detail", async () => {
  // A result that throws when the result rules read it: an unexpected exception.
  const hostile = () =>
    new Proxy({}, {
      get: () => undefined,
      deleteProperty() {
        throw new Error("secret detail of the exception");
      },
      ownKeys() {
        throw new Error("secret detail of the exception");
      },
    });
  const out = await session(scriptedLink(hostile), [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", id: 3, method: "ping" },
  ]);
  strictEqual((out[0] as { id: number }).id, 1);
  const byId = (a: unknown, b: unknown) => (a as { id: number }).id - (b as { id: number }).id;
  deepStrictEqual(out.slice(1).sort(byId), [
    { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "Internal error" } },
    { jsonrpc: "2.0", id: 3, result: {} },
  ]);
});
