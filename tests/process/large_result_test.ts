/** Large results through the real program: the skeleton path keeps every byte and every rule. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { LONG_ICON, LONG_TEXT } from "../fixtures/large_server.ts";
import { BridgeProcess, DENO, ROOT } from "./helpers.ts";

const LARGE_SERVER = [DENO, "run", "-A", `${ROOT}tests/fixtures/large_server.ts`];
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

async function call(bridge: BridgeProcess, id: number, name: string) {
  await bridge.request(id, "tools/call", { name, arguments: {} });
  const msg = await bridge.next(30_000);
  strictEqual(msg?.id, id);
  return msg!;
}

Deno.test("a large result: long strings come back whole, modern members go, the rules apply", async () => {
  await using bridge = new BridgeProcess([], LARGE_SERVER);
  await bridge.request(1, "initialize", INIT);
  strictEqual((await bridge.next())?.id, 1);

  const text = await call(bridge, 2, "text");
  deepStrictEqual(text.result, {
    content: [
      { type: "text", text: LONG_TEXT },
      {
        type: "resource_link",
        uri: "file:///a",
        name: "a",
        icons: [{ src: LONG_ICON }, { src: "https://example.com/i.png" }],
      },
    ],
  });

  // The text mirror of a large structuredContent has the long string whole.
  const structured = await call(bridge, 3, "structured");
  deepStrictEqual(structured.result, {
    structuredContent: { blob: LONG_TEXT },
    content: [{ type: "text", text: JSON.stringify({ blob: LONG_TEXT }) }],
  });

  // A long string that JSON.parse would refuse fails only its own request.
  for (const [id, name] of [[4, "bad_utf8"], [5, "control"]] as const) {
    const bad = await call(bridge, id, name);
    strictEqual((bad.error as { data: { cause: string } }).data.cause, "invalid_response");
  }
  await bridge.request(6, "ping");
  deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 6, result: {} });
});
