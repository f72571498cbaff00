import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { server } from "../fixtures/modern_server.ts";
import { ConsoleErrors } from "../frontend/in_process_tools.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { waitFor } from "../wait.ts";
import {
  idKey,
  idOfToken,
  integerDigits,
  isRawId,
  isRequestId,
  type RequestId,
} from "../../lib/jsonrpc/message.ts";

Deno.test("integerDigits gives the exact integer of a token, or undefined for a fraction", () => {
  const cases: [string, string | undefined][] = [
    ["0", "0"],
    ["-0", "0"],
    ["7", "7"],
    ["-12", "-12"],
    ["1.0", "1"],
    ["1.5e1", "15"],
    ["1E2", "100"],
    ["1e+2", "100"],
    ["9007199254740993", "9007199254740993"],
    ["9.007199254740993e15", "9007199254740993"],
    ["1e308", "1" + "0".repeat(308)],
    ["0.000e5", "0"],
    ["1.5", undefined],
    ["1e-1", undefined],
    ["9007199254740993.5", undefined],
    ["1e999", undefined],
    ["01", undefined],
    ["+1", undefined],
    ['"1"', undefined],
  ];
  for (const [token, digits] of cases) strictEqual(integerDigits(token), digits, token);
});

Deno.test("idOfToken: plain values where they write back the same, the token where not", () => {
  for (const token of ["7", "-3", "0", '"a"', '"é"', "9007199254740991"]) {
    const id = idOfToken(token);
    strictEqual(isRawId(id), false, token);
    strictEqual(JSON.stringify(id), token);
  }
  for (const token of ["9007199254740993", "1e308", "-0", "1.0", '"\\u0041"', '"\\/"']) {
    const id = idOfToken(token);
    strictEqual(isRawId(id), true, token);
    strictEqual(isRequestId(id), true, token);
    strictEqual(JSON.stringify({ id }), `{"id":${token}}`);
  }
  for (const token of ["1.5", "null", "true", "{}", "[1]", "nope", "1e-5"]) {
    strictEqual(idOfToken(token), undefined, token);
  }
});

Deno.test("idKey: the same value is the same key, whatever its token; 2^53 and 2^53 + 1 differ", () => {
  const key = (token: string) => idKey(idOfToken(token) as RequestId);
  deepStrictEqual(
    ["1", "1.0", "1e0", "10e-1"].map(key),
    ["n:1", "n:1", "n:1", "n:1"],
  );
  strictEqual(key("-0"), key("0"));
  strictEqual(key('"\\u0041"'), key('"A"'));
  strictEqual(key('"1"') === key("1"), false);
  strictEqual(key("9007199254740993") === key("9007199254740992"), false);
  strictEqual(key("9007199254740992"), key("9007199254740992.0"));
  // A plain number beyond 2^53 (from a plain parse) has the key of its exact value.
  strictEqual(idKey(1e21), key("1000000000000000000000"));
});

// The exact tokens on the wire: the bridge of the command line in process, its output as raw lines.

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
  await using bridge = new InProcessBridge([], server);
  await bridge.initialize();
  for (const token of EXACT_IDS) {
    await bridge.writeRaw(`{"jsonrpc":"2.0","id":${token},"method":"ping"}\n`);
    strictEqual(await bridge.line(), `{"jsonrpc":"2.0","id":${token},"result":{}}`);
    // The SDK 1.x order: the id last.
    await bridge.writeRaw(
      `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}},` +
        `"jsonrpc":"2.0","id":${token}}\n`,
    );
    const call = await bridge.line();
    ok(call?.startsWith(`{"jsonrpc":"2.0","id":${token},"result":`), `${token}: ${call}`);
    // The id scan of lines that do not parse keeps the token too.
    await bridge.writeRaw(`{"jsonrpc":"2.0","id":${token},"method":"ping",,}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32700`));
    await bridge.writeRaw(
      `{"jsonrpc":"2.0","id":${token},"method":"ping","params":${"[".repeat(70)}`,
    );
    await bridge.writeRaw(`${"]".repeat(70)}}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32600`));
    await bridge.writeRaw(`{"jsonrpc":"2.0","id":${token}}\n`);
    ok((await bridge.line())?.startsWith(`{"jsonrpc":"2.0","id":${token},"error":{"code":-32600`));
  }
  strictEqual(await bridge.exit(), 0);
});

Deno.test("a fraction is not an id, also when its double is an integer", async () => {
  await using bridge = new InProcessBridge([], server);
  for (const token of ["1.5", "9007199254740993.5", "1e-1", "1.0000000000000000000001"]) {
    await bridge.writeRaw(`{"jsonrpc":"2.0","id":${token},"method":"ping"}\n`);
    const line = await bridge.line();
    ok(line?.startsWith('{"jsonrpc":"2.0","id":null,"error":{"code":-32600'), `${token}: ${line}`);
  }
  strictEqual(await bridge.exit(), 0);
});

Deno.test("ids that one double holds are two requests; a cancel matches its own token only", async () => {
  // The fixture's lines, which the process test reads in the stderr of the child.
  using upstream = new ConsoleErrors();
  await using bridge = new InProcessBridge([], server);
  await bridge.initialize();
  const call = (token: string, ms: number) =>
    `{"jsonrpc":"2.0","id":${token},"method":"tools/call","params":{"name":"slow","arguments":{"ms":${ms}}}}\n`;
  const cancel = (token: string) =>
    `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${token}}}\n`;
  const started = (n: number) => () => upstream.text.split("slow started").length > n;
  const canceled = (n: number) => () => upstream.text.split("slow canceled").length > n;
  // Both in flight at once: not refused as a duplicate id.
  await bridge.writeRaw(call("9007199254740993", 800));
  await bridge.writeRaw(call("9007199254740992", 60_000));
  await waitFor("two calls", started(2), { timeoutMs: 10_000, intervalMs: 20 });
  // The value 2^53 (another token of it) cancels 2^53, not 2^53 + 1.
  await bridge.writeRaw(cancel("9007199254740992.0"));
  await waitFor("the cancel", canceled(1), { timeoutMs: 10_000, intervalMs: 20 });
  ok((await bridge.line())?.startsWith('{"jsonrpc":"2.0","id":9007199254740993,"result":'));
  // The exact token cancels its request.
  await bridge.writeRaw(call("9007199254740993", 60_000));
  await waitFor("the third call", started(3), { timeoutMs: 10_000, intervalMs: 20 });
  await bridge.writeRaw(cancel("9007199254740993"));
  await waitFor("its cancel", canceled(2), { timeoutMs: 10_000, intervalMs: 20 });
  // A string id and its escaped spelling are the same id.
  await bridge.writeRaw(call('"\\u0041"', 60_000));
  await waitFor("the fourth call", started(4), { timeoutMs: 10_000, intervalMs: 20 });
  await bridge.writeRaw(cancel('"A"'));
  await waitFor("its cancel", canceled(3), { timeoutMs: 10_000, intervalMs: 20 });
  // None of the canceled calls got a response.
  await bridge.writeRaw('{"jsonrpc":"2.0","id":"last","method":"ping"}\n');
  strictEqual(await bridge.line(), '{"jsonrpc":"2.0","id":"last","result":{}}');
  strictEqual(await bridge.exit(), 0);
});
