/**
 * The limit flags of `lib/settings/limits.ts`: their bad values, their good
 * values, and their effect over the wire (the bridge in the test's own
 * process, `tests/frontend/in_process.ts`, in front of a real upstream
 * child). Their help and a bad value of the real program are in
 * tests/process/cli_test.ts; the exit 2 of each flag in tests/cli/run_test.ts.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  DEFAULT_LIMITS,
  LIMIT_FLAGS,
  MAX_LIMIT_MS,
  parseLimitFlags,
} from "../../lib/settings/limits.ts";
import { parseCommandLine } from "../../lib/cli/command_line.ts";
import { InProcessBridge } from "../frontend/in_process.ts";
import { DENO, RAW_SERVER, ROOT } from "../process/helpers.ts";

const STUBBORN = [DENO, "run", "-A", `${ROOT}tests/fixtures/stubborn_server.ts`];
/**
 * The stubborn upstream runs on after the end of its stdin: the bridge stops
 * it after the stop grace. A short one ends each test without the default
 * 2 s wait (the process test killed the bridge instead); nothing the tests
 * check happens at the stop.
 */
const SHORT_STOP = ["--stop-grace", "0.05"];

function errorOf(msg: Record<string, unknown>): Record<string, unknown> {
  return msg.error as Record<string, unknown>;
}

/** Values that each flag refuses; a secret-like text must not come back in the message. */
function badValues(unit: string, zero: boolean): string[] {
  const common = ["", " 5", "5 ", "-1", "1e3", "0x10", "sk-secret-token", "Infinity", "NaN"];
  if (unit === "seconds") {
    return [...common, ...(zero ? [] : ["0", "0.0004"]), String(MAX_LIMIT_MS / 1000 + 1)];
  }
  return [...common, "0", "1.5", "9007199254740993"];
}

Deno.test("parseLimitFlags: every bad value of every flag is refused with a line naming the flag", () => {
  for (const entry of LIMIT_FLAGS) {
    for (const value of badValues(entry.unit, entry.zero)) {
      const parsed = parseLimitFlags({ [entry.flag.slice(2)]: value });
      strictEqual(parsed.ok, false, `${entry.flag} ${JSON.stringify(value)}`);
      if (parsed.ok) continue;
      strictEqual(parsed.message.startsWith(`${entry.flag} needs `), true, parsed.message);
      strictEqual(parsed.message.includes("\n"), false);
      if (value.length > 2) strictEqual(parsed.message.includes(value.trim()), false);
    }
  }
});

Deno.test("parseLimitFlags: good values set every limit of the flag, in the unit of the limit", () => {
  const parsed = parseLimitFlags({
    "request-timeout": "0.3",
    "call-timeout": "7200",
    "input-timeout": "1.5",
    "discover-timeout": "90",
    "max-line-bytes": "4096",
    "max-in-flight": "8",
    "shutdown-grace": "0",
    "stop-grace": ".25",
  });
  deepStrictEqual(parsed, {
    ok: true,
    limits: {
      ...DEFAULT_LIMITS,
      list_timeout_ms: 300,
      first_round_timeout_ms: 300,
      long_round_timeout_ms: 7_200_000,
      input_answer_timeout_ms: 1500,
      discover_timeout_ms: 90_000,
      max_line_bytes: 4096,
      max_in_flight_requests: 8,
      shutdown_grace_ms: 0,
      child_stop_grace_ms: 250,
    },
  });
  // The longest timer is valid; no flag: the defaults.
  const longest = parseLimitFlags({ "call-timeout": String(Math.floor(MAX_LIMIT_MS / 1000)) });
  strictEqual(longest.ok && longest.limits.long_round_timeout_ms, 2_147_483_000);
  deepStrictEqual(parseLimitFlags({}), { ok: true, limits: DEFAULT_LIMITS });
  const cli = parseCommandLine(["--request-timeout", "2", "--", "x"]);
  strictEqual(cli.kind === "run" && cli.limits.first_round_timeout_ms, 2000);
});

Deno.test("--request-timeout over the wire: the list requests and the first round of prompts/get", async () => {
  await using bridge = new InProcessBridge(["--request-timeout", "0.3", ...SHORT_STOP], STUBBORN);
  await bridge.initialize();
  const started = Date.now();
  await bridge.request(2, "tools/list");
  await bridge.request(3, "prompts/get", { name: "p" });
  deepStrictEqual(errorOf(await bridge.response(2, 5000)), {
    code: -32603,
    message: "The upstream server did not answer in time. See the Output channel of the server.",
    data: { cause: "timeout", detail: "method: tools/list, limit: 300 ms" },
  });
  deepStrictEqual(
    errorOf(await bridge.response(3, 5000)).data,
    { cause: "timeout", detail: "method: prompts/get, limit: 300 ms" },
  );
  strictEqual(Date.now() - started < 3000, true);
});

Deno.test("--call-timeout over the wire: a round of tools/call", async () => {
  await using bridge = new InProcessBridge(["--call-timeout", "0.3", ...SHORT_STOP], STUBBORN);
  await bridge.initialize();
  await bridge.request(2, "tools/call", { name: "hang", arguments: {} });
  deepStrictEqual(
    errorOf(await bridge.response(2, 5000)).data,
    { cause: "timeout", detail: "method: tools/call, limit: 300 ms" },
  );
});

Deno.test("--input-timeout over the wire: a question that the client does not answer", async () => {
  await using bridge = new InProcessBridge(["--input-timeout", "0.3"], RAW_SERVER("ok"));
  await bridge.initialize({ elicitation: { form: {} } });
  const form = {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: "Your name?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } } },
    },
  };
  await bridge.request(2, "tools/call", { name: "ask", arguments: { sequence: [{ f: form }] } });
  const question = await bridge.next(5000);
  strictEqual(question?.method, "elicitation/create");
  deepStrictEqual(errorOf(await bridge.response(2, 5000)).data, { cause: "input_timeout" });
});

Deno.test("--max-in-flight over the wire: the request above the limit gets too_many_requests", async () => {
  await using bridge = new InProcessBridge(["--max-in-flight", "2", ...SHORT_STOP], STUBBORN);
  await bridge.initialize();
  for (const id of [2, 3, 4]) {
    await bridge.request(id, "tools/call", { name: "hang", arguments: {} });
  }
  deepStrictEqual(errorOf(await bridge.response(4, 5000)).data, { cause: "too_many_requests" });
  // A slot frees when a request ends: the next one goes upstream.
  await bridge.send({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 2 },
  });
  // The slot of the canceled request frees once its task has ended: under load that can
  // take a moment, so the next request is sent again until it goes upstream.
  let freed: Record<string, unknown> | undefined;
  for (let id = 5; id < 50 && !freed; id++) {
    await bridge.request(id, "tools/call", { name: "pid", arguments: {} });
    const response = await bridge.response(id, 5000);
    if ("result" in response) freed = response;
    else deepStrictEqual(errorOf(response).data, { cause: "too_many_requests" });
    if (!freed) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  strictEqual(typeof freed?.result, "object");
});
