/** The front end in process, with small limits and a real upstream child. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Frontend } from "../../lib/bridge/frontend.ts";
import { DEFAULT_LIMITS, type Limits } from "../../lib/bridge/limits.ts";
import { SILENT_LOGGER } from "../../lib/bridge/log.ts";
import { spawnStdioLink } from "../../lib/upstream/stdio.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter, MODERN_SERVER, RAW_SERVER } from "../process/helpers.ts";

function start(limits: Partial<Limits>) {
  const all = { ...DEFAULT_LIMITS, ...limits };
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const [command, ...args] = MODERN_SERVER;
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: all,
    log: SILENT_LOGGER,
    fallback: { name: "t", version: "0" },
    connect: () =>
      spawnStdioLink({
        command: command!,
        args,
        maxLineBytes: all.max_line_bytes,
        stopGraceMs: 500,
      }),
    output: output.writable,
  });
  const exit = frontend.run(input.readable);
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    [Symbol.asyncIterator]();
  const enc = new TextEncoder();
  return {
    frontend,
    send: (m: unknown) => writer.write(enc.encode(JSON.stringify(m) + "\n")),
    next: async () => JSON.parse((await lines.next()).value),
    close: async () => {
      await writer.close();
      return await exit;
    },
  };
}

const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

Deno.test("a request without a response in its limit gets timeout with the method and the limit", async () => {
  const t = start({ long_round_timeout_ms: 300, list_timeout_ms: 5000 });
  await t.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  deepStrictEqual((await t.next()).id, 1);
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
  const t = start({ max_in_flight_requests: 2 });
  await t.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await t.next();
  for (const id of [2, 3, 4]) {
    await t.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 200 } },
    });
  }
  const first = await t.next();
  deepStrictEqual([first.id, first.error?.data?.cause], [4, "too_many_requests"]);
  const ids = [(await t.next()).id, (await t.next()).id].sort();
  deepStrictEqual(ids, [2, 3]);
  strictEqual(await t.close(), 0);
});

Deno.test("no answers in the answer limit: input_timeout, and the questions get notifications/cancelled", async () => {
  const all = { ...DEFAULT_LIMITS, input_answer_timeout_ms: 300 };
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const [command, ...args] = RAW_SERVER("ok");
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: all,
    log: SILENT_LOGGER,
    fallback: { name: "t", version: "0" },
    connect: () =>
      spawnStdioLink({
        command: command!,
        args,
        maxLineBytes: all.max_line_bytes,
        stopGraceMs: 500,
      }),
    output: output.writable,
  });
  const exit = frontend.run(input.readable);
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    [Symbol.asyncIterator]();
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  const next = async () => JSON.parse((await lines.next()).value);
  await send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { ...INIT, capabilities: { roots: {} } },
  });
  await next();
  await send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "ask", arguments: { sequence: [{ r: { method: "roots/list", params: {} } }] } },
  });
  deepStrictEqual((await next()).method, "roots/list");
  deepStrictEqual(await next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "no answer in time" },
  });
  const response = await next();
  deepStrictEqual([response.id, response.error.data], [2, { cause: "input_timeout" }]);
  await writer.close();
  strictEqual(await exit, 0);
});
