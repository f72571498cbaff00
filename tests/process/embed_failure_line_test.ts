/**
 * The embedded bridge as a server author runs it (`serveStdio` in a program
 * of its own, `tests/fixtures/embed_failing_server.ts`): the line of a
 * failed request goes to the program's stderr, which VS Code shows in the
 * Output channel of the server, and never to its stdout. Each cause of the
 * legacy path is in tests/embed/embed_failure_lines_test.ts.
 */

import { ok, strictEqual } from "node:assert/strict";
import { DENO, INITIALIZE_REQUEST, LineSplitter, ROOT } from "./helpers.ts";
import { within } from "../wait.ts";

Deno.test("embed as a program: the line of a failed request is on its stderr", async () => {
  const child = new Deno.Command(DENO, {
    args: ["run", "-q", "-P", `${ROOT}tests/fixtures/embed_failing_server.ts`],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  const stderr = new Response(child.stderr).text();
  let out = "";
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    [Symbol.asyncIterator]();
  const response = async (id: number): Promise<Record<string, unknown>> => {
    for (;;) {
      const next = await within(lines.next(), 10_000, `the response of ${id}`);
      if (next.done) throw new Error(`no response of ${id}:\n${out}`);
      out += next.value + "\n";
      const message = JSON.parse(next.value);
      if (message.id === id) return message;
    }
  };
  await send(INITIALIZE_REQUEST);
  ok("result" in await response(1));
  await send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "bigint", arguments: {} },
  });
  const answer = await response(2) as { error?: { data?: { cause?: string } } };
  strictEqual(answer.error?.data?.cause, "invalid_response", out);
  await writer.close();
  while (!(await lines.next()).done);
  strictEqual((await child.status).code, 0);
  const err = await stderr;
  ok(
    err.includes("[mcp-bridge-vscode] warn: tools/call (request 2) failed: invalid_response\n"),
    err,
  );
  ok(!out.includes("failed:"), out);
});
