/** The front end as a state machine: the message table, and one response per request. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Frontend } from "../../lib/frontend/frontend.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import {
  NOTIFICATION_TABLE,
  notificationKind,
  REQUEST_TABLE,
  requestKind,
  STATES,
} from "../../lib/frontend/message_table.ts";
import type { JsonObject, Message } from "../../lib/jsonrpc/message.ts";
import type { LinkEnd, UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter } from "../process/helpers.ts";
import { waitFor } from "../wait.ts";

Deno.test("message table: every state has a row for every kind, as the spec's table says", () => {
  for (const state of STATES) {
    strictEqual(REQUEST_TABLE.ping[state], "pong");
    strictEqual(REQUEST_TABLE["server/discover"][state], "method_not_found");
    strictEqual(NOTIFICATION_TABLE["notifications/cancelled"][state], "cancel");
    strictEqual(NOTIFICATION_TABLE.other[state], "debug");
    if (state === "passthrough") continue;
    strictEqual(REQUEST_TABLE["logging/setLevel"][state], "set_level");
    strictEqual(NOTIFICATION_TABLE["notifications/roots/list_changed"][state], "ignore");
    strictEqual(NOTIFICATION_TABLE["notifications/progress"][state], "debug");
  }
  deepStrictEqual(REQUEST_TABLE.initialize, {
    awaiting_initialize: "initialize",
    initializing: "already_initialized",
    ready: "already_initialized",
    passthrough: "already_initialized",
    closing: "closing",
  });
  for (const kind of ["forwarded", "subscription", "unknown"] as const) {
    strictEqual(REQUEST_TABLE[kind].awaiting_initialize, "not_ready");
    strictEqual(REQUEST_TABLE[kind].initializing, "not_ready");
    strictEqual(REQUEST_TABLE[kind].closing, "closing");
  }
  strictEqual(REQUEST_TABLE.forwarded.ready, "forward");
  strictEqual(REQUEST_TABLE.subscription.ready, "subscription");
  strictEqual(REQUEST_TABLE.unknown.ready, "method_not_found");
  strictEqual(NOTIFICATION_TABLE["notifications/initialized"].ready, "initialized");
  strictEqual(NOTIFICATION_TABLE["notifications/initialized"].initializing, "ignore");
});

Deno.test("message table: the pass-through (LEGACY.md) sends the client's messages upstream", () => {
  // setLevel, subscriptions and unknown methods go to the upstream server of 2025-11-25.
  for (const kind of ["logging/setLevel", "forwarded", "subscription", "unknown"] as const) {
    strictEqual(REQUEST_TABLE[kind].passthrough, "pass");
  }
  strictEqual(REQUEST_TABLE.ping.passthrough, "pong");
  // initialized, roots/list_changed and progress go upstream; a cancel cancels the flight.
  for (
    const kind of [
      "notifications/initialized",
      "notifications/roots/list_changed",
      "notifications/progress",
    ] as const
  ) {
    strictEqual(NOTIFICATION_TABLE[kind].passthrough, "pass");
  }
  strictEqual(NOTIFICATION_TABLE["notifications/cancelled"].passthrough, "cancel");
});

Deno.test("message table: methods find their rows", () => {
  deepStrictEqual(
    ["tools/call", "completion/complete", "resources/subscribe", "resources/unsubscribe", "x/y"]
      .map(requestKind),
    ["forwarded", "forwarded", "subscription", "subscription", "unknown"],
  );
  strictEqual(requestKind("initialize"), "initialize");
  strictEqual(notificationKind("notifications/initialized"), "notifications/initialized");
  strictEqual(notificationKind("notifications/progress"), "notifications/progress");
  strictEqual(notificationKind("notifications/message"), "other");
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
