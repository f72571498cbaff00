/**
 * The embedded bridge's Output channel (issue 36): on the legacy path, each
 * failed request whose message sends the user to the Output channel has its
 * line in the embedder's log (`serveStdio` writes it to stderr; here the
 * logger of `serveStdioAuto` keeps it), with the method, the id and the
 * cause. The causes that can occur over the memory link are in the table;
 * those that cannot (no time limit on this link, no process, no transport,
 * no sign-in; an SDK server always sends an error object) have no row. A failed start
 * (a factory that throws) has the start's line. The modern path makes none
 * of these errors: the SDK answers there.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { fromJsonSchema, inputRequired, McpServer } from "@modelcontextprotocol/server";
import { serveStdioAuto } from "../../lib/embed/embed.ts";
import type { ServerFactory } from "../../lib/upstream/memory.ts";
import { createLogger } from "../../lib/log.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";
import { INIT, type Obj } from "./embedded.ts";

type Args = Record<string, unknown>;

/** A server whose tools fail in each way that the memory link can see. */
function build(): McpServer {
  const server = new McpServer({ name: "failing", version: "1" });
  const anyArgs = fromJsonSchema<Args>({ type: "object" });
  // A BigInt has no JSON: the bridge cannot read the result.
  server.registerTool("bigint", { inputSchema: anyArgs }, () => ({
    content: [],
    structuredContent: { n: 1n } as unknown as Record<string, unknown>,
  }));
  // Input again and again: above the limit of rounds.
  server.registerTool(
    "rounds",
    { inputSchema: anyArgs },
    () => inputRequired({ requestState: "s" }),
  );
  // An elicitation whose requestedSchema is not a schema of a form.
  server.registerTool("bad_input", { inputSchema: anyArgs }, () =>
    inputRequired({
      inputRequests: {
        x: inputRequired.elicit(
          { message: "m", requestedSchema: { type: "object", properties: 5 } } as never,
        ),
      },
    }));
  // The server closes its connection while a call is in flight.
  server.registerTool("close", { inputSchema: anyArgs }, () => {
    setTimeout(() => void server.close(), 0);
    return new Promise<never>(() => {});
  });
  server.registerTool("echo", { inputSchema: anyArgs }, () => ({ content: [] }));
  return server;
}

/** Each request in order, the cause of its error, and the detail on its line. */
const CASES = [
  { id: 2, name: "bigint", cause: "invalid_response", rest: "" },
  { id: "r-3", name: "rounds", cause: "too_many_rounds", rest: "" },
  {
    id: 4,
    name: "bad_input",
    cause: "invalid_input_request",
    rest: ": input request 'x': the input request does not have the shape of the schema",
  },
  { id: 5, name: "close", cause: "closed", rest: "" },
  // A request after the end of the link.
  { id: 6, name: "echo", cause: "closed", rest: "" },
] as const;

/** serveStdioAuto of `factory` in process, with its log lines kept. */
function embedded(factory: ServerFactory) {
  const log: string[] = [];
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream())
    .pipeThrough(new LineSplitter())[Symbol.asyncIterator]();
  const serving = serveStdioAuto(factory, {
    profile: VSCODE_PROFILE,
    discover: "answer",
    limits: { ...DEFAULT_LIMITS, mrtr_max_rounds_client: 2 },
    log: createLogger("embed", "info", (line) => log.push(line)),
    input: input.readable,
    output: output.writable,
    closeOutput: true,
  });
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const response = async (id: unknown): Promise<Obj> => {
    for (;;) {
      const next = await within(lines.next(), 10_000, `the response of ${id}`);
      if (next.done) throw new Error(`the output ended before the response of ${id}`);
      const message = JSON.parse(next.value) as Obj;
      if (message.id === id && !("method" in message)) return message;
    }
  };
  const end = async () => {
    await writer.close();
    while (!(await lines.next()).done);
    await within(serving, 15_000, "the end of the embedded bridge");
  };
  return { log, send, response, end };
}

Deno.test("embed: on the legacy path each failure that names the Output channel has its line in the embedder's log: a result that is not valid, too many rounds, an input request that is not valid, a server that closed, a request after it", async () => {
  const { log, send, response, end } = embedded(build);
  // A client that takes forms: the server may ask for one.
  const params = { ...INIT, capabilities: { elicitation: { form: {} } } };
  await send({ jsonrpc: "2.0", id: 1, method: "initialize", params });
  ok("result" in await response(1));
  for (const { id, name, cause, rest } of CASES) {
    await send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
    const error = (await response(id)).error as { data?: { cause?: string } };
    strictEqual(error.data?.cause, cause, name);
    const idText = JSON.stringify(id);
    const mine = log.filter((line) => line.includes(`(request ${idText}) failed`));
    deepStrictEqual(
      mine,
      [`[embed] warn: tools/call (request ${idText}) failed: ${cause}${rest}\n`],
      `${name}:\n${log.join("")}`,
    );
  }
  await end();
});

Deno.test("embed: a factory that throws fails initialize with discover_failed, and the start's line; the error of the factory is no part of it", async () => {
  const { log, send, response, end } = embedded(() => {
    throw new Error("factory s3cret");
  });
  await send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  const error = (await response(1)).error as { data?: { cause?: string } };
  strictEqual(error.data?.cause, "discover_failed");
  deepStrictEqual(log, [
    "[embed] error: initialize failed: discover_failed: Internal server error\n",
  ]);
  await end();
});
