/**
 * Every error whose message sends the user to the Output channel has its
 * line there: each such cause of the error table through `failureLine`,
 * and, through the bridge (in process, real upstreams on stdio), each way a
 * request of the client fails with one: a time limit, a server that
 * stopped (and a request after it), a response that is not valid, an
 * error without an error object, the input rounds' own causes. The HTTP
 * link's failures (with what the transport saw) are in
 * tests/upstream/http_resend_test.ts; a failed initialize has the start's
 * own line (tests/start/start_test.ts).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type Cause, ERROR_TABLE, SEE_OUTPUT } from "../../lib/errors/error_table.ts";
import { BridgeError } from "../../lib/errors/errors.ts";
import { failureLine } from "../../lib/errors/failures.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { MODERN_SERVER, RAW_SERVER } from "../process/helpers.ts";

type Obj = Record<string, unknown>;

Deno.test("failureLine: each cause whose message names the Output channel gets a line with the method, the id, the cause and what the transport saw; no other does", () => {
  let named = 0;
  for (const [cause, row] of Object.entries(ERROR_TABLE)) {
    if (cause === "canceled") continue;
    const error = BridgeError.of(cause as Exclude<Cause, "canceled">, "a detail")
      .withSeen("GOAWAY NO_ERROR");
    const line = failureLine("tools/call", "r-7", error);
    if (!row.message.includes(SEE_OUTPUT)) {
      strictEqual(line, undefined, cause);
      continue;
    }
    named++;
    strictEqual(
      line,
      `tools/call (request "r-7") failed: ${cause}: a detail [GOAWAY NO_ERROR]`,
      cause,
    );
  }
  ok(named >= 15, `${named} causes name the Output channel`);
  // An error of the upstream server reaches the client as it is: no line of ours.
  strictEqual(
    failureLine("x", 1, BridgeError.passthrough({ code: -32001, message: "no" })),
    undefined,
  );
});

/** The error of a response, and the log lines of failed requests. */
function causeOf(response: Obj): string | undefined {
  return ((response.error as { data?: { cause?: string } } | undefined)?.data)?.cause;
}

function failureLines(bridge: InProcessBridge): string[] {
  return bridge.logs.filter((line) => / failed: /.test(line) && line.includes("(request "));
}

/** One request that fails with `cause`: the client gets it, and the log has its one line. */
async function failsWithLine(
  bridge: InProcessBridge,
  id: string,
  method: string,
  params: Obj,
  cause: string,
): Promise<void> {
  await bridge.request(id, method, params);
  const response = await bridge.response(id);
  strictEqual(causeOf(response), cause, JSON.stringify(response));
  const lines = failureLines(bridge).filter((line) => line.includes(`(request "${id}")`));
  deepStrictEqual(lines.length, 1, bridge.stderr);
  ok(lines[0]!.includes(`warn: ${method} (request "${id}") failed: ${cause}`), lines[0]);
}

Deno.test("failure lines on stdio: an error without an error object, a line over the limit, an input request that is not valid", async () => {
  await using bridge = new InProcessBridge(["--max-line-bytes", "2048"], RAW_SERVER(), {
    limits: { long_round_timeout_ms: 300 },
  });
  await bridge.initialize();
  await failsWithLine(bridge, "bad", "tools/call", { name: "bad_error" }, "rpc");
  await failsWithLine(bridge, "long", "tools/call", { name: "long" }, "invalid_response");
  await failsWithLine(bridge, "ask", "tools/call", {
    name: "ask",
    arguments: { sequence: [{ raw: { resultType: "input_required", inputRequests: "x" } }] },
  }, "invalid_input_request");
});

Deno.test("failure lines on stdio: a time limit", async () => {
  await using bridge = new InProcessBridge([], MODERN_SERVER, {
    limits: { long_round_timeout_ms: 300 },
  });
  await bridge.initialize();
  await failsWithLine(
    bridge,
    "slow",
    "tools/call",
    { name: "slow", arguments: { ms: 5000 } },
    "timeout",
  );
  ok(failureLines(bridge)[0]!.includes("method: tools/call, limit: 300 ms"), bridge.stderr);
});

Deno.test("failure lines on stdio: too many rounds of input", async () => {
  await using bridge = new InProcessBridge([], RAW_SERVER(), {
    limits: { mrtr_max_rounds_client: 1 },
  });
  await bridge.initialize();
  await failsWithLine(bridge, "rounds", "tools/call", {
    name: "ask",
    arguments: {
      sequence: [{ raw: { resultType: "input_required", inputRequests: {}, requestState: "s:1" } }],
    },
  }, "too_many_rounds");
});

Deno.test("failure lines on stdio: a server that stops fails the call in flight and each request after it, each with its line", async () => {
  await using bridge = new InProcessBridge([], MODERN_SERVER);
  await bridge.initialize();
  await failsWithLine(bridge, "die", "tools/call", { name: "die" }, "upstream_exited");
  await failsWithLine(bridge, "after", "tools/list", {}, "upstream_exited");
  ok(bridge.stderr.includes("error: the upstream server process stopped"), bridge.stderr);
});
