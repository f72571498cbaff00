/**
 * `serve`'s Output channel (issue 36): each failed request of a session
 * whose message sends the user to the Output channel has its line in the
 * log of `serve`, naming the session, the method, the id and the cause
 * ("session #1: tools/call (request 2) failed: upstream_exited"), and
 * never what the upstream child wrote on its stderr. The upstream is a child
 * on stdio: `raw_server.ts`, shared by the sessions, or with `--protocol
 * auto` `legacy_raw_server.ts`, a child for each session; the failures of the
 * HTTP links are the same lines of the same front end
 * (tests/process/http_cut_body_test.ts, tests/upstream/http_resend_test.ts).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { DENO, INITIALIZE_REQUEST, RAW_SERVER, ROOT } from "./helpers.ts";
import { ServeProcess } from "./serve_helpers.ts";
import { waitFor } from "../wait.ts";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** A call: its tool (and arguments), the cause of its error, and the rest of its line. */
interface Case {
  readonly name: string;
  readonly args?: Record<string, unknown>;
  readonly cause: string;
  readonly rest: string;
}

/** Each upstream of a session, and its calls in order. */
const FACES: readonly { what: string; argv: string[]; cases: readonly Case[] }[] = [
  {
    what: "a child of revision 2026-07-28",
    argv: ["--max-line-bytes", "2048", "--", ...RAW_SERVER()],
    cases: [
      { name: "bad_error", cause: "rpc", rest: "" },
      { name: "no_result", cause: "invalid_response", rest: "" },
      { name: "long", cause: "invalid_response", rest: "" },
      { name: "silent", cause: "timeout", rest: ": method: tools/call, limit: 300 ms" },
      {
        name: "ask",
        args: { sequence: [{ raw: { resultType: "input_required", inputRequests: "x" } }] },
        cause: "invalid_input_request",
        rest: ": the inputRequests member is not an object",
      },
      { name: "die", cause: "upstream_exited", rest: "" },
      // A request after the end of the child.
      { name: "echo", cause: "upstream_exited", rest: "" },
    ],
  },
  {
    what: "--protocol auto, a child of revision 2025-11-25 (its own for the session)",
    argv: [
      "--protocol",
      "auto",
      "--",
      DENO,
      "run",
      "-A",
      `${ROOT}tests/fixtures/legacy_raw_server.ts`,
    ],
    cases: [
      { name: "bad_error", cause: "rpc", rest: "" },
      { name: "no_result", cause: "invalid_response", rest: "" },
      { name: "not_json", cause: "invalid_response", rest: "" },
      { name: "slow", cause: "timeout", rest: ": method: tools/call, limit: 300 ms" },
      { name: "close_stdout", cause: "closed", rest: "" },
      { name: "echo", cause: "closed", rest: "" },
    ],
  },
];

for (const { what, argv, cases } of FACES) {
  Deno.test(`serve, ${what}: each failure of a session that names the Output channel has its line, with the session: ${cases.map((c) => c.name).join(", ")}`, async () => {
    await using serve = await ServeProcess.start(["--call-timeout", "0.3", ...argv]);
    const post = async (body: unknown, session?: string) => {
      const response = await fetch(serve.url(), {
        method: "POST",
        headers: { ...HEADERS, ...(session !== undefined && { "mcp-session-id": session }) },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return { session: response.headers.get("mcp-session-id"), text };
    };
    const init = await post(INITIALIZE_REQUEST);
    const session = init.session!;
    ok(session, init.text);
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    let id = 2;
    for (const { name, cause, rest, args = {} } of cases) {
      const { text } = await post(
        { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
        session,
      );
      // One event of the SSE stream, or a JSON body.
      const body = JSON.parse(text.replace(/^data: /m, "").trim().split("\n")[0]!);
      strictEqual(body.error?.data?.cause, cause, `${name}: ${text}`);
      const line = `warn: session #1: tools/call (request ${id}) failed: ${cause}${rest}\n`;
      await waitFor(`the line "${line.trim()}"`, () => serve.stderr.includes(line));
      const mine = serve.stderr.split("\n").filter((l) => l.includes(`(request ${id}) failed`));
      deepStrictEqual(mine.length, 1, serve.stderr);
      id++;
    }
    strictEqual(await serve.stop(), 0);
  });
}

/** A child whose start fails, the cause of initialize's error, and the session's line. */
const START_CASES = [
  {
    mode: "error",
    cause: "discover_failed",
    line: "initialize failed: discover_failed: discover refused",
  },
  {
    mode: "exit",
    cause: "discover_failed",
    line: "initialize failed: discover_failed: the upstream server process stopped",
  },
] as const;

for (const { mode, cause, line } of START_CASES) {
  Deno.test(`serve: an initialize that fails (server/discover: ${mode}) has the start's line, with the session`, async () => {
    await using serve = await ServeProcess.start(["--", ...RAW_SERVER(mode)]);
    const response = await fetch(serve.url(), {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify(INITIALIZE_REQUEST),
    });
    const text = await response.text();
    const body = JSON.parse(text.replace(/^data: /m, "").trim().split("\n")[0]!);
    strictEqual(body.error?.data?.cause, cause, text);
    const full = `error: session #1: ${line}\n`;
    await waitFor(`the line "${full.trim()}"`, () => serve.stderr.includes(full));
  });
}
