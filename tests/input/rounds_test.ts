import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { assertIncludes } from "../assert.ts";
import { inProcessTransport } from "../frontend/v1_client.ts";
import { CODES } from "../../lib/errors/error_table.ts";
import { mapUpstreamFailure } from "../../lib/errors/failures.ts";
import { FAILURE_KINDS, type SignInCause, UpstreamFailure } from "../../lib/upstream/failure.ts";
import {
  ALL_CAPS,
  answerUntil,
  FORM,
  type Obj,
  rawAskServer,
  result,
  ROOTS,
  SAMPLING,
  startRaw,
  url,
} from "./raw_rounds.ts";

const SIGN_IN: SignInCause[] = [
  "sign_in_failed",
  "sign_in_timeout",
  "sign_in_denied",
  "sign_in_error",
  "sign_in_invalid_url",
  "sign_in_start_reused",
  "sandbox",
];

// The request-state rule of input.ts reads the error that mapUpstreamFailure gives: the code
// -32602 must mean that the upstream server answered -32602, and nothing else.
Deno.test("input rounds: only an upstream error -32602 maps to -32602 (the request-state rule)", () => {
  const failures = [
    ...FAILURE_KINDS.map((kind) => new UpstreamFailure(kind, { status: 400 })),
    ...SIGN_IN.map((cause) => new UpstreamFailure("sign_in", { signIn: { cause } })),
    new UpstreamFailure("rpc", { error: { code: -32601, message: "no" } }),
    new Error("not a failure"),
  ];
  for (const failure of failures) {
    const error = mapUpstreamFailure(failure, "tools/call", "1 s");
    strictEqual(error.code === CODES.INVALID_PARAMS, false, failure.message);
  }
  const stale = new UpstreamFailure("rpc", {
    error: { code: -32602, message: "the state expired", data: { reason: "expired" } },
  });
  const error = mapUpstreamFailure(stale, "tools/call", "1 s");
  strictEqual(error.code, CODES.INVALID_PARAMS);
  strictEqual(error.message, "the state expired");
});

// Through the whole bridge, in this process (tests/input/raw_rounds.ts): the client as raw
// lines or the v1 SDK client, the raw server's tool "ask" as the upstream.

/** The v1 SDK client as VS Code, with `capabilities`; `events` gets what it was asked. */
async function legacyClient(capabilities: Obj, events: unknown[]): Promise<Client> {
  const transport = inProcessTransport(rawAskServer);
  const client = new Client({ name: "vscode-like", version: "1" }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: Obj }) => {
    events.push(["elicit", request.params]);
    if (request.params.mode === "url") return { action: "accept" };
    const schema = request.params.requestedSchema as { properties: Obj };
    if ("continue" in schema.properties) {
      return { action: "accept", content: { continue: "Continue" } };
    }
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    events.push(["sampling"]);
    return { role: "assistant", content: { type: "text", text: "hello" }, model: "m" };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    events.push(["roots"]);
    return { roots: [{ uri: "file:///work", name: "w" }, { uri: "https://x/y" }] };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n: { params: Obj }) => {
    events.push(["complete", n.params]);
  });
  await client.connect(transport);
  return client;
}

/** The Continue form that follows a URL step, as the client must see it. */
const CONTINUE_FORM = {
  mode: "form",
  message: "Complete the step in the web browser. Then select Continue.",
  requestedSchema: {
    type: "object",
    properties: {
      continue: { type: "string", title: "Continue", enum: ["Continue"], default: "Continue" },
    },
    required: ["continue"],
  },
};

Deno.test("v1 client answers form, sampling and roots of one round; the upstream gets inputResponses and requestState", async () => {
  const events: unknown[] = [];
  const client = await legacyClient(ALL_CAPS, events);
  try {
    const result = await client.callTool({
      name: "ask",
      arguments: { sequence: [{ f: FORM, s: SAMPLING, r: ROOTS }] },
    });
    deepStrictEqual(result.structuredContent, {
      inputResponses: {
        f: { action: "accept", content: { name: "Ada" } },
        s: { role: "assistant", content: { type: "text", text: "hello" }, model: "m" },
        r: { roots: [{ uri: "file:///work", name: "w" }] },
      },
      requestState: "opaque-state:1:x/y+z=",
    });
    deepStrictEqual(events.length, 3);
  } finally {
    await client.close();
  }
});

Deno.test("v1 client: a URL step, the Continue form when asked again, and the complete notification before the response", async () => {
  const events: unknown[] = [];
  const client = await legacyClient(ALL_CAPS, events);
  try {
    const u = "https://auth.example.com/step?x=1";
    const result = await client.callTool({
      name: "ask",
      arguments: { sequence: [{ a: url(u) }, { a: url(u) }, { b: url(u) }] },
    });
    deepStrictEqual(result.structuredContent, {
      inputResponses: { b: { action: "accept" } },
      requestState: "opaque-state:3:x/y+z=",
    });
    deepStrictEqual(events, [
      ["elicit", { mode: "url", message: "Sign in", url: u, elicitationId: "elicitation-1" }],
      ["elicit", CONTINUE_FORM],
      ["elicit", CONTINUE_FORM],
      ["complete", { elicitationId: "elicitation-1" }],
    ]);
  } finally {
    await client.close();
  }
});

Deno.test("the request-state rule: tools/call gets an isError result, prompts/get an error with the upstream code", async () => {
  await using bridge = await startRaw();
  await bridge.request(2, "tools/call", {
    name: "ask",
    arguments: { sequence: [{ a: ROOTS }, "stale"] },
  });
  const { response } = await answerUntil(bridge, 2, (q) => result(q.id, { roots: [] }));
  deepStrictEqual(response.result, {
    content: [{
      type: "text",
      text: "The upstream server did not accept the saved state of the request. " +
        "The answer possibly came after the time limit of the state, or the server started again. " +
        "Upstream message: the state expired. Run the tool again.",
    }],
    isError: true,
  });
  await bridge.request(3, "prompts/get", {
    name: "ask",
    arguments: { sequence: [{ a: ROOTS }, "stale"] },
  });
  const second = await answerUntil(bridge, 3, (q) => result(q.id, { roots: [] }));
  const error = second.response.error as Obj;
  strictEqual(error.code, -32602);
  match(String(error.message), /Upstream message: the state expired\. Send the request again\.$/);
  deepStrictEqual(error.data, { reason: "expired" });
  assertIncludes(bridge.stderr, "warn: the upstream server did not accept the saved state");
});
