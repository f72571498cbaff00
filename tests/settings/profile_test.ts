/**
 * A profile is the product: the core follows the profile that it is given
 * (the protocolVersion of the initialize result, the prefix of the bridge's
 * requests to the client, the items rule), never the clientInfo that the
 * client sends. The same client, the same server, two profiles: two
 * products. Through the legacy path of the embedded bridge, a Frontend over
 * the memory link to an SDK v2 server.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveStdioAuto } from "../../lib/embed/embed.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import type { Profile } from "../../lib/settings/profile.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";

type Obj = Record<string, unknown>;

/** Another product: the same bridge with other rules. */
const OTHER: Profile = {
  name: "mcp-bridge-other",
  reply_protocol_version: "2025-06-18",
  request_id_prefix: "other-",
  meta_passthrough: { keys: [], prefixes: [] },
  quirks: {
    normalize_array_items: false,
    drop_non_object_output_schema: false,
    strict_legacy_results: true,
  },
};

/** What the client of VS Code sends, whatever the product. */
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: { form: {} } },
  clientInfo: { name: "Visual Studio Code", version: "1.99.0" },
};

/** One connection of the client to the bridge of `profile`: the initialize, a list, a question. */
async function session(profile: Profile): Promise<{ init: Obj; echo: Obj; questionId: unknown }> {
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const done = serveStdioAuto(buildServer, {
    profile,
    discover: "refuse",
    limits: DEFAULT_LIMITS,
    log: SILENT_LOGGER,
    input: input.readable,
    output: output.writable,
    closeOutput: true,
  });
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(
    new LineSplitter(),
  )[Symbol.asyncIterator]();
  const send = (message: Obj) =>
    writer.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"));
  const next = async (): Promise<Obj> => {
    const { done, value } = await within(lines.next(), 10_000, "a message of the bridge");
    if (done) throw new Error("the output ended");
    return JSON.parse(value);
  };
  await send({ id: 1, method: "initialize", params: INIT });
  const init = (await next()).result as Obj;
  await send({ id: 2, method: "tools/list" });
  const tools = (await next()).result as { tools: Obj[] };
  const echo = tools.tools.find((tool) => tool.name === "echo")!;
  await send({ id: 3, method: "tools/call", params: { name: "confirm", arguments: {} } });
  const question = await next();
  strictEqual(question.method, "elicitation/create");
  await send({ id: question.id, result: { action: "accept", content: { ok: true } } });
  strictEqual(
    ((await next()).result as { content: { text: string }[] }).content[0]!.text,
    "confirmed",
  );
  await writer.close();
  for (let m = await lines.next(); !m.done; m = await lines.next());
  await within(done, 10_000, "the end of the connection");
  return { init, echo, questionId: question.id };
}

Deno.test("profile: the same client gets the rules of the bridge's profile, not of its clientInfo", async () => {
  const vscode = await session(VSCODE_PROFILE);
  const other = await session(OTHER);
  strictEqual(vscode.init.protocolVersion, "2025-11-25");
  strictEqual(other.init.protocolVersion, "2025-06-18");
  ok(String(vscode.questionId).startsWith("b-"), String(vscode.questionId));
  ok(String(other.questionId).startsWith("other-"), String(other.questionId));
  // The items rule (R6) of VS Code's quirks; the other product keeps the schema as it is.
  const tags = (echo: Obj) => (echo.inputSchema as { properties: Obj }).properties.tags;
  deepStrictEqual(tags(other.echo), { type: "array" });
  ok(Object.hasOwn(tags(vscode.echo) as Obj, "items"), JSON.stringify(tags(vscode.echo)));
});
