/**
 * Input rounds through the whole bridge, in the test's own process: the
 * bridge (`InProcessBridge`) in front of the tool "ask" of the raw server
 * (tests/fixtures/ask_rounds.ts), which returns the rounds that the test
 * lists, including what an SDK server will not send. The raw server is in
 * process too ({@linkcode rawAskServer}, over the memory link), or a child on
 * stdio (`RAW_SERVER` of tests/process/helpers.ts) where the test needs a
 * process that stops. The test plays the client with raw lines, or with the
 * v1 SDK client (tests/frontend/v1_client.ts).
 *
 * @module
 */

import { type JSONRPCMessage, Server, type Transport } from "@modelcontextprotocol/server";
import type { ServerFactory } from "../../lib/upstream/memory.ts";
import { askRound } from "../fixtures/ask_rounds.ts";
import { InProcessBridge, type Upstream } from "../frontend/in_process.ts";
import type { BridgeLines } from "../process/helpers.ts";

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** A form elicitation with one required property. */
export const FORM = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Your name?",
    requestedSchema: {
      type: "object",
      properties: { name: { type: "string", minLength: 2 } },
      required: ["name"],
    },
  },
};

/** A URL elicitation of `u`. */
export const url = (u: string): Obj => ({
  method: "elicitation/create",
  params: { mode: "url", message: "Sign in", url: u },
});

/** A roots/list input request. */
export const ROOTS = { method: "roots/list", params: {} };

/** A sampling/createMessage input request. */
export const SAMPLING = {
  method: "sampling/createMessage",
  params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 },
};

/** The client capabilities of every kind of input. */
export const ALL_CAPS = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/** The capabilities of the raw server in mode "ok". */
const CAPABILITIES = { tools: {}, tasks: { list: {} } };

/**
 * The raw server of mode "ok" for the tool "ask", in this process: an SDK
 * server object only so that the memory link takes it; its `connect` takes
 * the messages raw, as raw_server.ts reads its stdin, and writes its answers
 * raw, so nothing of the SDK checks or changes what it sends.
 */
class RawAskServer extends Server {
  #channel: Transport | undefined;

  constructor() {
    super({ name: "raw", version: "1" }, { capabilities: { tools: {} } });
  }

  override async connect(transport: Transport): Promise<void> {
    this.#channel = transport;
    transport.onmessage = (message) => void this.#answer(transport, message);
    await transport.start();
  }

  async #answer(transport: Transport, message: JSONRPCMessage): Promise<void> {
    if (!("method" in message) || !("id" in message)) return;
    const { id, method } = message;
    const params = (message.params ?? {}) as Obj;
    const write = (body: object) =>
      transport.send({ jsonrpc: "2.0", id, ...body } as JSONRPCMessage);
    if (method === "server/discover") {
      const result = { resultType: "complete", supportedVersions: ["2026-07-28"] };
      return await write({ result: { ...result, capabilities: CAPABILITIES } });
    }
    if ((method === "tools/call" || method === "prompts/get") && params.name === "ask") {
      return await write(askRound(method, params, (params.arguments ?? {}) as Obj, () => {
        throw new Error("dieAfterMs stops a process: start the raw server as a child");
      }));
    }
    await write({ error: { code: -32601, message: "Method not found" } });
  }

  override async close(): Promise<void> {
    await this.#channel?.close();
  }
}

/** The raw server of the tool "ask" in this process, for the memory link. */
export const rawAskServer: ServerFactory = (): Server => new RawAskServer();

/**
 * The bridge in process in front of the raw server (in process by default),
 * initialized with `capabilities`.
 */
export async function startRaw(
  capabilities: Obj = ALL_CAPS,
  options: string[] = [],
  upstream: Upstream = rawAskServer,
): Promise<InProcessBridge> {
  const bridge = new InProcessBridge(options, upstream);
  await bridge.initialize(capabilities);
  return bridge;
}

/** Calls the tool "ask" with the rounds of `sequence`. */
export const ask = (bridge: BridgeLines, id: number, sequence: unknown[]): Promise<void> =>
  bridge.request(id, "tools/call", { name: "ask", arguments: { sequence } });

/** The data of the error of a response. */
export function errorData(msg: Obj | null): unknown {
  return (msg?.error as Obj | undefined)?.data;
}

/** The line of a result of `id`. */
export const result = (id: unknown, value: unknown): string =>
  JSON.stringify({ jsonrpc: "2.0", id, result: value });

/** The inputResponses that the upstream got, as the tool "ask" echoes them. */
export const inputResponses = (response: Obj): unknown =>
  ((response.result as Obj).structuredContent as Obj).inputResponses;

/** Answers every question of the bridge with `answer(question)` until the response of `id`. */
export async function answerUntil(
  bridge: BridgeLines,
  id: unknown,
  answer: (q: Obj) => string | null,
): Promise<{ response: Obj; seen: Obj[] }> {
  const seen: Obj[] = [];
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error(`no response; stderr: ${bridge.stderr}`);
    if (msg.id === id && !("method" in msg)) return { response: msg, seen };
    seen.push(msg);
    if (typeof msg.method === "string" && typeof msg.id === "string") {
      const line = answer(msg);
      if (line !== null) await bridge.writeRaw(line + "\n");
    }
  }
}

/** Answers each form with `content` until the response of `id`; gives the response and the questions. */
export async function answerAll(
  bridge: BridgeLines,
  id: number,
  content: Obj,
): Promise<{ response: Obj; questions: number }> {
  let questions = 0;
  for (;;) {
    const msg = await bridge.next();
    if (msg === null) throw new Error(`no response; stderr: ${bridge.stderr}`);
    if (msg.id === id && !("method" in msg)) return { response: msg, questions };
    if (msg.method === "elicitation/create") {
      questions++;
      await bridge.send({ jsonrpc: "2.0", id: msg.id, result: { action: "accept", content } });
    }
  }
}

/** The client capabilities of the schema tests: forms only. */
export const FORM_CAPS = { elicitation: { form: {} } };

/** A form elicitation with `requestedSchema`. */
export const formOf = (requestedSchema: Obj): Obj => ({
  method: "elicitation/create",
  params: { mode: "form", message: "Your name?", requestedSchema },
});
