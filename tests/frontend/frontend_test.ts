/** The front end in process, with small limits and a real upstream child. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { MODERN_SERVER } from "../process/helpers.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { startFrontend } from "./harness.ts";

Deno.test("a request without a response in its limit gets timeout with the method and the limit", async () => {
  const t = startFrontend({ long_round_timeout_ms: 300, list_timeout_ms: 5000 }, MODERN_SERVER);
  await t.initialize();
  strictEqual(t.frontend.state, "ready");
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow", arguments: { ms: 3000 } },
  });
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    id: 2,
    error: {
      code: -32603,
      message: "The upstream server did not answer in time. See the Output channel of the server.",
      data: { cause: "timeout", detail: "method: tools/call, limit: 300 ms" },
    },
  });
  strictEqual(await t.close(), 0);
  strictEqual(t.frontend.state, "closing");
});

Deno.test("the in-flight limit is a named limit that tests can make smaller", async () => {
  // Over the memory link: an SDK v2 server in process, no child to start.
  const t = startFrontend({ max_in_flight_requests: 2 }, buildServer);
  await t.initialize();
  for (const id of [2, 3, 4]) {
    await t.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 200 } },
    });
  }
  const first = await t.next();
  deepStrictEqual([first.id, (first.error as { data: { cause: string } }).data.cause], [
    4,
    "too_many_requests",
  ]);
  const ids = [(await t.next()).id, (await t.next()).id].sort();
  deepStrictEqual(ids, [2, 3]);
  strictEqual(await t.close(), 0);
});

Deno.test("no answers in the answer limit: input_timeout, and the questions get notifications/cancelled", async () => {
  // Over the memory link: the limit of the client's answers applies there too.
  const t = startFrontend({ input_answer_timeout_ms: 300 }, buildServer);
  await t.initialize({ elicitation: { form: {} } });
  await t.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "confirm", arguments: {} },
  });
  deepStrictEqual((await t.next()).method, "elicitation/create");
  deepStrictEqual(await t.next(), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "b-1", reason: "no answer in time" },
  });
  const response = await t.next();
  deepStrictEqual([response.id, (response.error as { data: unknown }).data], [2, {
    cause: "input_timeout",
  }]);
  strictEqual(await t.close(), 0);
});
