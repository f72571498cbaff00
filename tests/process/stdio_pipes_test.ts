/**
 * The pipe of the upstream child over the real program: a child that dies in
 * the middle of a line. The request of that line gets invalid_response (its
 * half line names it), each other request in flight and each later one gets
 * upstream_exited, each exactly once; what the child wrote on its stderr (a
 * secret of the server) reaches the bridge's stderr (the Output channel)
 * and never its client. And a child killed by a signal, in the log.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { BridgeProcess, DENO, ROOT } from "./helpers.ts";

const STUBBORN = [DENO, "run", "-A", `${ROOT}tests/fixtures/stubborn_server.ts`];
const SECRET = "sk-live-0f9e8d7c6b5a";

const EXITED = {
  code: -32603,
  message: "The upstream server process stopped. See the Output channel of the server.",
  data: { cause: "upstream_exited" },
};

const INVALID = {
  code: -32603,
  message:
    "The upstream server sent a response that is not valid. See the Output channel of the server.",
  data: { cause: "invalid_response" },
};

Deno.test("an upstream that dies in the middle of a line: that request fails, the others get upstream_exited, once each; its stderr never reaches the client", async () => {
  await using bridge = new BridgeProcess(["--stop-grace", "0.3", "--", ...STUBBORN]);
  await bridge.initialize();
  // Three calls in flight, then the one whose answer the child cuts.
  for (let id = 2; id <= 4; id++) {
    await bridge.request(id, "tools/call", { name: "held", arguments: {} });
  }
  await bridge.request(5, "tools/call", { name: "die_mid_line", arguments: { secret: SECRET } });
  // Its half line names its id, and it is read before the end of the output: that request's
  // answer is not valid.
  deepStrictEqual((await bridge.response(5, 5000)).error, INVALID);
  for (let id = 2; id <= 4; id++) deepStrictEqual((await bridge.response(id, 5000)).error, EXITED);
  await bridge.request(6, "tools/list");
  deepStrictEqual((await bridge.response(6, 5000)).error, EXITED);
  await bridge.request(7, "ping");
  deepStrictEqual((await bridge.response(7)).result, {});
  strictEqual(await bridge.exit(), 1);
  // One answer each, nothing more.
  deepStrictEqual(bridge.queued, []);
  // The secret went to the Output channel only.
  ok(bridge.stderr.includes(`stubborn: secret ${SECRET}`), bridge.stderr);
  ok(!bridge.stdout.includes(SECRET), bridge.stdout);
  ok(!bridge.stdout.includes("stubborn"), bridge.stdout);
});

Deno.test("an upstream child killed by a signal: the log says it stopped by a signal, not 'code null'", async () => {
  await using bridge = new BridgeProcess(["--", ...STUBBORN]);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "pid", arguments: {} });
  const pid = ((await bridge.response(2)).result as { structuredContent: { pid: number } })
    .structuredContent.pid;
  Deno.kill(pid, "SIGKILL");
  await bridge.request(3, "tools/list");
  deepStrictEqual((await bridge.response(3, 5000)).error, EXITED);
  strictEqual(await bridge.exit(), 1);
  ok(
    bridge.stderr.includes(
      "[mcp-bridge-vscode] error: the upstream server process stopped by a signal\n",
    ),
    bridge.stderr,
  );
  ok(!bridge.stderr.includes("code null"), bridge.stderr);
});
