import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertIncludes } from "../assert.ts";
import { ERROR_TABLE } from "../../lib/errors/error_table.ts";
import { BridgeError } from "../../lib/errors/errors.ts";
import {
  failureSummary,
  mapDiscoverFailure,
  mapUpstreamFailure,
  statusDetail,
} from "../../lib/errors/failures.ts";
import type { ErrorObject } from "../../lib/jsonrpc/message.ts";
import {
  FAILURE_KINDS,
  type FailureFacts,
  type FailureKind,
  type SignInFailureInfo,
  UpstreamFailure,
} from "../../lib/upstream/failure.ts";

const json = (e: BridgeError): ErrorObject => e.toJSON();
const dataOf = (e: BridgeError) => json(e).data;
const forwarded = (kind: FailureKind, facts?: FailureFacts) =>
  dataOf(mapUpstreamFailure(new UpstreamFailure(kind, facts), "tools/list", "120 s"));
const discover = (kind: FailureKind, facts?: FailureFacts) =>
  dataOf(mapDiscoverFailure(new UpstreamFailure(kind, facts), "60 s"));

Deno.test("statusDetail: HTTP status N, or nothing", () => {
  deepStrictEqual([statusDetail(404), statusDetail(undefined)], ["HTTP status 404", undefined]);
});

Deno.test("forwarded requests: every failure kind gives its cause", () => {
  deepStrictEqual(Object.fromEntries(FAILURE_KINDS.map((kind) => [kind, forwarded(kind)])), {
    rpc: { cause: "rpc" },
    timeout: { cause: "timeout", detail: "method: tools/list, limit: 120 s" },
    // Only the bridge cancels without the client: the client sees a closed request.
    canceled: { cause: "closed" },
    exited: { cause: "upstream_exited" },
    closed: { cause: "closed" },
    transport_failed: { cause: "transport_failed" },
    invalid_response: { cause: "invalid_response" },
    spawn_failed: { cause: "spawn_failed" },
    connect_failed: { cause: "connect_failed" },
    sign_in: { cause: "sign_in_failed" },
  });
});

Deno.test("forwarded requests: the message and code are the table's", () => {
  const error = json(mapUpstreamFailure(new UpstreamFailure("closed"), "m", "1 s"));
  deepStrictEqual([error.code, error.message], [-32603, ERROR_TABLE.closed.message]);
});

Deno.test("forwarded requests: an HTTP status becomes the detail HTTP status N", () => {
  const facts = { status: 404 };
  deepStrictEqual(
    (["rpc", "closed", "transport_failed", "invalid_response"] as const).map((kind) =>
      forwarded(kind, facts)
    ),
    [
      { cause: "rpc", detail: "HTTP status 404" },
      { cause: "closed", detail: "HTTP status 404" },
      { cause: "transport_failed", detail: "HTTP status 404" },
      { cause: "invalid_response", detail: "HTTP status 404" },
    ],
  );
  // The timeout keeps its own detail; a stopped child has none.
  deepStrictEqual(
    [forwarded("timeout", facts), forwarded("exited", facts)],
    [{ cause: "timeout", detail: "method: tools/list, limit: 120 s" }, {
      cause: "upstream_exited",
    }],
  );
});

Deno.test("forwarded requests: the upstream error passes unchanged, but -32042", () => {
  const error = { code: -32001, message: "no", data: { why: 1 } };
  deepStrictEqual(
    json(mapUpstreamFailure(new UpstreamFailure("rpc", { error }), "m", "1 s")),
    error,
  );
  deepStrictEqual(
    json(
      mapUpstreamFailure(
        new UpstreamFailure("rpc", {
          error: { code: -32042, message: "open", data: { url: "x" } },
        }),
        "m",
        "1 s",
      ),
    ),
    { code: -32603, message: "open" },
  );
});

Deno.test("forwarded requests: a thrown value that is no UpstreamFailure", () => {
  deepStrictEqual(
    [
      dataOf(mapUpstreamFailure(new RangeError("Invalid string length"), "m", "1 s")),
      dataOf(mapUpstreamFailure(new Error("x"), "m", "1 s")),
      dataOf(mapUpstreamFailure("x", "m", "1 s")),
    ],
    [{ cause: "out_of_memory" }, { cause: "transport_failed" }, { cause: "transport_failed" }],
  );
});

Deno.test("sign-in failures keep their cause, detail and placeholders", () => {
  const timeout = mapUpstreamFailure(
    new UpstreamFailure("sign_in", {
      signIn: { cause: "sign_in_timeout", placeholders: { seconds: 300, name: "mcp-bridge" } },
    }),
    "tools/list",
    "120 s",
  );
  deepStrictEqual(json(timeout), {
    code: -32603,
    message: ERROR_TABLE.sign_in_timeout.message.replace("{seconds}", "300").replace(
      "{name}",
      "mcp-bridge",
    ),
    data: { cause: "sign_in_timeout" },
  });
  const port = json(
    mapUpstreamFailure(
      new UpstreamFailure("sign_in", {
        signIn: { cause: "redirect_port_unavailable", detail: "d", placeholders: { port: 8765 } },
      }),
      "m",
      "1 s",
    ),
  );
  assertIncludes(port.message, "port 8765.");
  deepStrictEqual(port.data, { cause: "redirect_port_unavailable", detail: "d" });
  deepStrictEqual(
    [
      // Without a detail of its own, the HTTP status is the detail.
      forwarded("sign_in", { status: 403, signIn: { cause: "access_refused" } }),
      forwarded("sign_in", { status: 403, signIn: { cause: "sandbox", detail: "own" } }),
      // No cause at all is sign_in_failed.
      forwarded("sign_in", { status: 401 }),
    ],
    [
      { cause: "access_refused", detail: "HTTP status 403" },
      { cause: "sandbox", detail: "own" },
      { cause: "sign_in_failed" },
    ],
  );
});

Deno.test("sign-in failures: a cause the table lacks and the canceled row do not type-check", () => {
  // These were sign_in_failed at run time while the cause was a string; the type
  // SignInCause now refuses them, so deno task check fails if one compiles.
  const refused: SignInFailureInfo[] = [
    // @ts-expect-error: not a cause of the table
    { cause: "no_such_cause", detail: "d" },
    // @ts-expect-error: the canceled row has no response
    { cause: "canceled" },
  ];
  strictEqual(refused.length, 2);
});

Deno.test("server/discover: each failure kind gives discover_failed with why, or the start's own cause", () => {
  deepStrictEqual(Object.fromEntries(FAILURE_KINDS.map((kind) => [kind, discover(kind)])), {
    rpc: { cause: "discover_failed", detail: "the error has no error object" },
    timeout: { cause: "discover_failed", detail: "no response in 60 s" },
    canceled: { cause: "discover_failed", detail: "no response in 60 s" },
    exited: { cause: "discover_failed", detail: "the upstream server process stopped" },
    closed: { cause: "discover_failed", detail: "the upstream server process stopped" },
    transport_failed: { cause: "discover_failed", detail: "the connection failed" },
    invalid_response: { cause: "discover_failed", detail: "the response is not valid" },
    spawn_failed: { cause: "spawn_failed" },
    connect_failed: { cause: "connect_failed" },
    sign_in: { cause: "sign_in_failed" },
  });
  deepStrictEqual(
    [
      discover("closed", { status: 502 }),
      discover("transport_failed", { status: 502 }),
      discover("invalid_response", { status: 502 }),
      discover("sign_in", { signIn: { cause: "sign_in_denied" } }),
      dataOf(mapDiscoverFailure(new Error("x"), "60 s")),
    ],
    [
      { cause: "discover_failed", detail: "HTTP status 502" },
      { cause: "discover_failed", detail: "HTTP status 502" },
      { cause: "discover_failed", detail: "HTTP status 502" },
      { cause: "sign_in_denied" },
      { cause: "discover_failed", detail: "no response in 60 s" },
    ],
  );
});

Deno.test("server/discover: the upstream code is kept, -32042 becomes -32603, the message is the detail", () => {
  deepStrictEqual(
    json(
      mapDiscoverFailure(
        new UpstreamFailure("rpc", { error: { code: -32001, message: "no" } }),
        "60 s",
      ),
    ),
    {
      code: -32001,
      message: ERROR_TABLE.discover_failed.message,
      data: { cause: "discover_failed", detail: "no" },
    },
  );
  deepStrictEqual(
    json(
      mapDiscoverFailure(
        new UpstreamFailure("rpc", { error: { code: -32042, message: "url" } }),
        "60 s",
      ),
    ),
    {
      code: -32603,
      message: ERROR_TABLE.discover_failed.message,
      data: { cause: "discover_failed", detail: "url" },
    },
  );
});

Deno.test("failureSummary: the cause alone without a detail", () => {
  strictEqual(failureSummary(BridgeError.of("spawn_failed")), "spawn_failed");
  strictEqual(
    failureSummary(BridgeError.of("timeout", "method: x, limit: 1 s")),
    "timeout: method: x, limit: 1 s",
  );
});

Deno.test("failureSummary: an error of the upstream server (no cause) is its code and message, on one line", () => {
  strictEqual(
    failureSummary(BridgeError.passthrough({ code: -32001, message: "index\nnot ready" })),
    "error -32001: index not ready",
  );
  const long = failureSummary(BridgeError.passthrough({ code: 1, message: "x".repeat(500) }));
  strictEqual(long, `error 1: ${"x".repeat(200)}...`);
});
