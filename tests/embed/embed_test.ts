/**
 * The embedded bridge in process (serveStdio with `input` and `output`
 * streams): the first line selects the path, the discover rule, the legacy
 * path. The modern path's own rules are in embed_modern_test.ts, the example
 * program's session in tests/vscode/serve_test.ts.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { Embedded, ENVELOPE, INIT, isModernRejection, modernCall, type Obj } from "./embedded.ts";

const enc = new TextEncoder();

Deno.test("embed: initialize takes the legacy path (the bridge's initialize result)", async () => {
  const e = new Embedded();
  await e.request(1, "initialize", INIT);
  const [result] = await e.untilId(1);
  const r = result!.result as Obj;
  strictEqual(r.protocolVersion, "2025-11-25");
  deepStrictEqual(r.serverInfo, {
    name: "embedded-example",
    version: "1.0.0",
    title: "Embedded example",
  });
  strictEqual(r.instructions, "An example of the embedded bridge.");
  await e.request(2, "tools/call", { name: "echo", arguments: { text: "hi" } });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, { content: [{ type: "text", text: "hi" }] });
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed: a modern request takes the modern path (the SDK's result)", async () => {
  const e = new Embedded();
  await e.request(1, "tools/call", {
    name: "echo",
    arguments: { text: "hi" },
    _meta: ENVELOPE,
  });
  const result = (await e.untilId(1)).at(-1)!.result as Obj;
  strictEqual(result.resultType, "complete");
  deepStrictEqual(result.content, [{ type: "text", text: "hi" }]);
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed: the end of the input before a request writes nothing", async () => {
  const e = new Embedded();
  await e.raw("\n  \r\n");
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed first line: the word initialize in a value does not select the legacy path", async () => {
  const e = new Embedded();
  await e.request(1, "tools/call", { name: "initialize", arguments: {} });
  ok(isModernRejection((await e.untilId(1))[0]));
  await e.request(2, "initialize", INIT);
  ok(isModernRejection((await e.untilId(2))[0]));
  await e.end();
});

for (
  const [label, line, reply] of [
    ["a notification", '{"jsonrpc":"2.0","method":"notifications/initialized"}', undefined],
    ["a response", '{"jsonrpc":"2.0","id":"x","result":{}}', undefined],
    ["invalid JSON", '{"jsonrpc":"2.0","id":4,', { id: 4, code: -32700 }],
    ["a line deeper than the limit", `{"jsonrpc":"2.0","id":5,"params":${"[".repeat(70)}`, {
      id: 5,
      code: -32600,
    }],
    ["JSON that is not JSON-RPC", '{"id":6,"hello":true}', { id: 6, code: -32600 }],
    ["JSON that is not an object", "[1,2]", { id: null, code: -32600 }],
  ] as const
) {
  Deno.test(`embed first line: ${label} selects the modern path`, async () => {
    const e = new Embedded();
    await e.raw(line + "\n");
    await e.request(9, "initialize", INIT);
    const messages = await e.untilId(9);
    if (reply) {
      strictEqual(messages.length, 2);
      strictEqual(messages[0]!.id, reply.id);
      strictEqual((messages[0]!.error as Obj).code, reply.code);
    } else strictEqual(messages.length, 1);
    ok(isModernRejection(messages.at(-1)));
    await e.end();
  });
}

Deno.test("embed first line: invalid UTF-8 gets -32700 and selects the modern path", async () => {
  const e = new Embedded();
  await e.raw(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
  await e.request(9, "initialize", INIT);
  const messages = await e.untilId(9);
  deepStrictEqual((messages[0]!.error as Obj).code, -32700);
  strictEqual(messages[0]!.id, null);
  ok(isModernRejection(messages[1]));
  await e.end();
});

Deno.test("embed first line: blank lines are skipped, a too-long line is dropped without a response", async () => {
  const e = new Embedded({ limits: { max_line_bytes: 200 } });
  await e.raw(`\n \r\n{"jsonrpc":"2.0","id":1,"method":"ping","x":"${"a".repeat(300)}"}\n`);
  await e.request(2, "initialize", INIT);
  const messages = await e.untilId(2);
  strictEqual(messages.length, 1);
  strictEqual((messages[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed first line: the end of the input after a too-long line writes nothing", async () => {
  const e = new Embedded({ limits: { max_line_bytes: 100 } });
  await e.raw("x".repeat(500));
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed first line: two messages in one chunk and a line split across chunks", async () => {
  const e = new Embedded();
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  // ping is answered in every state: its response shows that the second message arrived.
  await e.raw(`${init}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0",`);
  await e.raw('"id":3,"method":"ping"}\n');
  const ids = [(await e.next())!.id, (await e.next())!.id, (await e.next())!.id];
  deepStrictEqual(ids.sort(), [1, 2, 3]);
  await e.end();

  const m = new Embedded();
  const call = JSON.stringify(modernCall(1, "echo", { text: "a" }));
  await m.raw(`${call}\n${JSON.stringify(modernCall(2, "echo", { text: "b" }))}\n`);
  await m.raw(call.slice(0, 10).replace('"id":1', '"id":3'));
  await m.raw(JSON.stringify(modernCall(3, "echo", { text: "c" })).slice(10) + "\n");
  const texts = new Map<unknown, unknown>();
  for (let i = 0; i < 3; i++) {
    const message = (await m.next())!;
    texts.set(message.id, (message.result as { content: { text: string }[] }).content[0]!.text);
  }
  deepStrictEqual(texts, new Map<unknown, unknown>([[1, "a"], [2, "b"], [3, "c"]]));
  await m.end();
});

Deno.test("embed discover rule: refuse answers -32601, then initialize takes the legacy path", async () => {
  const e = new Embedded({ discover: "refuse" });
  await e.request(1, "server/discover", { _meta: ENVELOPE });
  await e.request(2, "server/discover", {});
  const refused = [...await e.untilId(1), ...await e.untilId(2)];
  deepStrictEqual(refused.map((m) => (m.error as Obj).code), [-32601, -32601]);
  await e.request(3, "initialize", INIT);
  strictEqual(((await e.untilId(3))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed discover rule: answer lets the server answer; then initialize or a modern request selects", async () => {
  const e = new Embedded();
  await e.request(1, "server/discover", { _meta: ENVELOPE });
  const discover = (await e.untilId(1))[0]!.result as Obj;
  deepStrictEqual(discover.supportedVersions, ["2026-07-28"]);
  await e.request(2, "initialize", INIT);
  strictEqual(((await e.untilId(2))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();

  const m = new Embedded({ discover: "answer" });
  await m.request(1, "server/discover", { _meta: ENVELOPE });
  await m.untilId(1);
  await m.send(modernCall(2, "echo", { text: "modern" }));
  strictEqual(((await m.untilId(2))[0]!.result as Obj).resultType, "complete");
  await m.end();
});

Deno.test("embed legacy path: the end of the input stops as the front end does; no response in flight", async () => {
  const e = new Embedded({ limits: { shutdown_grace_ms: 300 } });
  await e.request(1, "initialize", INIT);
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "slow", arguments: { ms: 10_000 } });
  deepStrictEqual(await e.end(), []);
});

Deno.test("embed legacy path: an input round as a question, a list change before the result", async () => {
  const e = new Embedded();
  await e.request(1, "initialize", { ...INIT, capabilities: { elicitation: { form: {} } } });
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "confirm", arguments: {} });
  const question = (await e.next())!;
  strictEqual(question.method, "elicitation/create");
  strictEqual((question.params as Obj).message, "Go on?");
  await e.send({
    jsonrpc: "2.0",
    id: question.id,
    result: { action: "accept", content: { ok: true } },
  });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, {
    content: [{ type: "text", text: "confirmed" }],
  });
  await e.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  for (let i = 0; i < 3; i++) ok(String((await e.next())!.method).endsWith("/list_changed"));
  await e.request(3, "tools/call", { name: "add_tool", arguments: { name: "x" } });
  deepStrictEqual((await e.untilId(3)).map((m) => m.method ?? m.id), [
    "notifications/tools/list_changed",
    3,
  ]);
  await e.end();
});

Deno.test("embed first line: a UTF-8 byte order mark at the start of the input is skipped", async () => {
  const e = new Embedded();
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
  await e.raw(new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(init + "\n")]));
  strictEqual(((await e.untilId(1))[0]!.result as Obj).protocolVersion, "2025-11-25");
  await e.end();
});

Deno.test("embed legacy path: the request time limits do not apply over the memory link", async () => {
  const e = new Embedded({
    limits: { long_round_timeout_ms: 20, list_timeout_ms: 20, discover_timeout_ms: 20 },
  });
  await e.request(1, "initialize", INIT);
  await e.untilId(1);
  await e.request(2, "tools/call", { name: "slow", arguments: { ms: 150 } });
  deepStrictEqual((await e.untilId(2)).at(-1)!.result, {
    content: [{ type: "text", text: "slow done" }],
  });
  await e.end();
});

/** The names of a tools/list result. */
const names = (message: Obj | undefined): string[] =>
  ((message!.result as Obj).tools as { name: string }[]).map((t) => t.name).sort();

for (const path of ["legacy", "modern"] as const) {
  Deno.test(`embed ${path} path: the options tools and ignoreTools hide tools; a hidden tool's call never runs`, async () => {
    const e = new Embedded({ ignoreTools: ["add_tool", "sl*"] });
    const meta = path === "modern" ? { _meta: ENVELOPE } : {};
    if (path === "legacy") {
      await e.request(1, "initialize", INIT);
      await e.untilId(1);
    }
    await e.request(2, "tools/list", { ...meta });
    deepStrictEqual(names((await e.untilId(2)).at(-1)), ["confirm", "echo", "log", "touch"]);
    // add_tool would add the tool "fresh", which no list hides.
    await e.request(3, "tools/call", { name: "add_tool", arguments: { name: "fresh" }, ...meta });
    const refused = (await e.untilId(3)).at(-1)!.error as { code: number; data: unknown };
    deepStrictEqual([refused.code, refused.data], [-32602, { cause: "tool_not_allowed" }]);
    await e.request(4, "tools/list", { ...meta });
    deepStrictEqual(names((await e.untilId(4)).at(-1)), ["confirm", "echo", "log", "touch"]);
    await e.request(5, "tools/call", { name: "echo", arguments: { text: "hi" }, ...meta });
    const called = (await e.untilId(5)).at(-1)!.result as Obj;
    deepStrictEqual(called.content, [{ type: "text", text: "hi" }]);
    await e.end();
  });
}

Deno.test("embed: the option tools shows only its globs; an empty glob throws before a byte is read", async () => {
  const e = new Embedded({ tools: ["echo", "to*"] });
  await e.request(1, "initialize", INIT);
  await e.untilId(1);
  await e.request(2, "tools/list", {});
  deepStrictEqual(names((await e.untilId(2)).at(-1)), ["echo", "touch"]);
  await e.end();
  // serveStdio is async: its promise rejects at once.
  await rejects(new Embedded({ tools: [""] }).done, TypeError);
});
