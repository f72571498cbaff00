/**
 * The bridge's own stdin and stdout (`Deno.stdin` and `Deno.stdout`, read
 * and written without a web stream: lib/jsonrpc/byte_io.ts) over the real
 * program: files instead of pipes, a client that closes its end of stdout
 * (no crash of the bridge), stdout and stderr as one pipe.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, INITIALIZE_REQUEST, MODERN_SERVER, programArgs, ROOT } from "./helpers.ts";

const BRIDGE = programArgs(["--", ...MODERN_SERVER]);

Deno.test("stdin and stdout that are files: the requests that need no upstream get their responses", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    await Deno.writeTextFile(`${dir}/in`, lines.map((l) => JSON.stringify(l) + "\n").join(""));
    // sh opens the files: the bridge's fd 0 and fd 1 are regular files.
    const { code, stderr } = await new Deno.Command("sh", {
      args: ["-c", 'exec "$@" < "$IN" > "$OUT"', "sh", DENO, ...BRIDGE],
      env: { IN: `${dir}/in`, OUT: `${dir}/out` },
      cwd: ROOT,
      stdout: "null",
      stderr: "piped",
    }).output();
    strictEqual(code, 0, new TextDecoder().decode(stderr));
    const out = (await Deno.readTextFile(`${dir}/out`)).trimEnd().split("\n").map((l) =>
      JSON.parse(l)
    );
    deepStrictEqual(out[0], { jsonrpc: "2.0", id: 1, result: {} });
    strictEqual(out[1].id, 2);
    strictEqual(out[1].error.data.cause, "not_initialized");
    strictEqual(out.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a client that closes its end of stdout: the bridge goes on quietly and exits 0 at the end of stdin", async () => {
  const child = new Deno.Command(DENO, {
    args: BRIDGE,
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const reader = child.stdout.getReader();
  await writer.write(enc.encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'));
  const first = await reader.read();
  ok(!first.done && new TextDecoder().decode(first.value).includes('"id":1'), "the first pong");
  // The read end of the pipe closes: each later write of the bridge fails with EPIPE.
  await reader.cancel();
  for (let id = 2; id < 200; id++) {
    await writer.write(enc.encode(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  await writer.close();
  const status = await child.status;
  const stderr = new TextDecoder().decode(
    (await new Response(child.stderr).arrayBuffer()) as ArrayBuffer,
  );
  strictEqual(status.code, 0, stderr);
  ok(!/Uncaught|panicked/.test(stderr), `no crash; stderr: ${stderr}`);
});

Deno.test("stdout and stderr as one pipe (2>&1): the responses and the log lines both come whole", async () => {
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'exec "$@" 2>&1',
      "sh",
      DENO,
      ...programArgs(["--log-level", "debug", "--", ...MODERN_SERVER]),
    ],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = [
    INITIALIZE_REQUEST,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "one pipe" } },
    },
  ];
  const text = child.stdout.pipeThrough(new TextDecoderStream());
  let output = "";
  const reading = (async () => {
    for await (const part of text) output += part;
  })();
  await writer.write(new TextEncoder().encode(JSON.stringify(lines[0]) + "\n"));
  const has = (id: number) =>
    output.split("\n").some((l) => l.startsWith(`{"jsonrpc":"2.0","id":${id},"result"`));
  const deadline = Date.now() + 10_000;
  while (!has(1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await writer.write(
    new TextEncoder().encode(lines.slice(1).map((l) => JSON.stringify(l) + "\n").join("")),
  );
  while (!has(2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await writer.close();
  strictEqual((await child.status).code, 0);
  await reading;
  const all = output.trimEnd().split("\n");
  const response = all.find((l) => l.startsWith('{"jsonrpc":"2.0","id":2,'));
  deepStrictEqual(JSON.parse(response ?? "null")?.result?.content, [{
    type: "text",
    text: "one pipe",
  }]);
  ok(all.some((l) => l.startsWith("[mcp-bridge-vscode] debug:")), `a log line; output:\n${output}`);
  // Every line is a whole message or a whole log line.
  for (const line of all) ok(line.startsWith("{") || line.startsWith("["), `a torn line: ${line}`);
});
