/** What the bridge keeps exactly on the wire: the first bytes of the input, the ids of the client. */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { BridgeProcess, MODERN_SERVER } from "./helpers.ts";
import { RawBridge } from "./raw_bridge.ts";
import { waitFor } from "../wait.ts";

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

/** Ids whose token no JavaScript value writes back as it came, and plain ones beside them. */
const EXACT_IDS = [
  "9007199254740993",
  "9007199254740992",
  "-9007199254740993",
  "123456789012345678901234567890",
  "1e308",
  "1E2",
  "1.0",
  "1.5e1",
  "-0",
  "0",
  "7",
  '"\\u0041"',
  '"a\\"b\\\\"',
  '"\\ud83d\\ude00 \\/"',
  '"é"',
  '"plain"',
];

Deno.test("the client gets back the exact token of its id: ping, a forwarded call, and each error path", async () => {
  await using bridge = new RawBridge(MODERN_SERVER);
  await bridge.initialize(false);
  for (const token of EXACT_IDS) {
    await bridge.write(`{"jsonrpc":"2.0","id":${token},"method":"ping"}\n`);
    strictEqual(await bridge.line(), `{"jsonrpc":"2.0","id":${token},"result":{}}`);
    // The SDK 1.x order: the id last.
    await bridge.write(
      `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}},` +
        `"jsonrpc":"2.0","id":${token}}\n`,
    );
    const call = await bridge.line();
    ok(call?.startsWith(`{"jsonrpc":"2.0","id":${token},"result":`), `${token}: ${call}`);
    // The id scan of lines that do not parse keeps the token too.
    await bridge.write(`{"jsonrpc":"2.0","id":${token},"method":"ping",,}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32700`));
    await bridge.write(`{"jsonrpc":"2.0","id":${token},"method":"ping","params":${"[".repeat(70)}`);
    await bridge.write(`${"]".repeat(70)}}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32600`));
    await bridge.write(`{"jsonrpc":"2.0","id":${token}}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32600`));
  }
  strictEqual(await bridge.exit(), 0);
});

Deno.test("a fraction is not an id, also when its double is an integer", async () => {
  await using bridge = new RawBridge(MODERN_SERVER);
  for (const token of ["1.5", "9007199254740993.5", "1e-1", "1.0000000000000000000001"]) {
    await bridge.write(`{"jsonrpc":"2.0","id":${token},"method":"ping"}\n`);
    const line = await bridge.line();
    ok(line?.startsWith('{"jsonrpc":"2.0","id":null,"error":{"code":-32600'), `${token}: ${line}`);
  }
  strictEqual(await bridge.exit(), 0);
});

Deno.test("ids that one double holds are two requests; a cancel matches its own token only", async () => {
  await using bridge = new RawBridge(MODERN_SERVER);
  await bridge.initialize(false);
  const call = (token: string, ms: number) =>
    `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":{"name":"slow","arguments":{"ms":${ms}}}}\n`;
  const cancel = (token: string) =>
    `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${token}}}\n`;
  const started = (n: number) => () => bridge.stderr.split("slow started").length > n;
  const canceled = (n: number) => () => bridge.stderr.split("slow canceled").length > n;
  // Both in flight at once: not refused as a duplicate id.
  await bridge.write(call("9007199254740993", 800));
  await bridge.write(call("9007199254740992", 60_000));
  await waitFor("two calls", started(2), { timeoutMs: 10_000, intervalMs: 20 });
  // The value 2^53 (another token of it) cancels 2^53, not 2^53 + 1.
  await bridge.write(cancel("9007199254740992.0"));
  await waitFor("the cancel", canceled(1), { timeoutMs: 10_000, intervalMs: 20 });
  ok((await bridge.line())?.startsWith('{"jsonrpc":"2.0","id":9007199254740993,"result":'));
  // The exact token cancels its request.
  await bridge.write(call("9007199254740993", 60_000));
  await waitFor("the third call", started(3), { timeoutMs: 10_000, intervalMs: 20 });
  await bridge.write(cancel("9007199254740993"));
  await waitFor("its cancel", canceled(2), { timeoutMs: 10_000, intervalMs: 20 });
  // A string id and its escaped spelling are the same id.
  await bridge.write(call('"\\u0041"', 60_000));
  await waitFor("the fourth call", started(4), { timeoutMs: 10_000, intervalMs: 20 });
  await bridge.write(cancel('"A"'));
  await waitFor("its cancel", canceled(3), { timeoutMs: 10_000, intervalMs: 20 });
  // None of the canceled calls got a response.
  await bridge.write('{"jsonrpc":"2.0","id":"last","method":"ping"}\n');
  strictEqual(await bridge.line(), '{"jsonrpc":"2.0","id":"last","result":{}}');
  strictEqual(await bridge.exit(), 0);
});
