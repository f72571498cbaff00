/** What the bridge keeps exactly on the wire: the first bytes of the input, the ids of the client. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { BridgeProcess, MODERN_SERVER } from "./helpers.ts";

Deno.test("a byte order mark at the start of the input is skipped; one later in the input is not", async () => {
  await using bridge = new BridgeProcess([], MODERN_SERVER);
  await bridge.writeRaw('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  deepStrictEqual(await bridge.next(), { jsonrpc: "2.0", id: 1, result: {} });
  await bridge.writeRaw('\ufeff{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  const msg = await bridge.next();
  // Not at the start of the input: a parse error (the id scan needs the brace first).
  deepStrictEqual([msg?.id, (msg?.error as { code: number }).code], [null, -32700]);
  strictEqual(await bridge.exit(), 0);
});
