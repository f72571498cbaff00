import type { SignInCause } from "../../lib/upstream/failure.ts";
import { strictEqual } from "node:assert/strict";
import { CODES } from "../../lib/errors/error_table.ts";
import { mapUpstreamFailure } from "../../lib/errors/failures.ts";
import { type FailureKind, UpstreamFailure } from "../../lib/upstream/failure.ts";

const KINDS: FailureKind[] = [
  "rpc",
  "timeout",
  "canceled",
  "exited",
  "closed",
  "transport_failed",
  "invalid_response",
  "spawn_failed",
  "connect_failed",
  "sign_in",
];
const SIGN_IN: SignInCause[] = [
  "sign_in_failed",
  "sign_in_timeout",
  "sign_in_denied",
  "sign_in_error",
  "sign_in_invalid_url",
  "sign_in_start_reused",
  "sandbox",
];

// The request-state rule of input.ts reads the error that mapUpstreamFailure gives: the code
// -32602 must mean that the upstream server answered -32602, and nothing else.
Deno.test("input rounds: only an upstream error -32602 maps to -32602 (the request-state rule)", () => {
  const failures = [
    ...KINDS.map((kind) => new UpstreamFailure(kind, { status: 400 })),
    ...SIGN_IN.map((cause) => new UpstreamFailure("sign_in", { signIn: { cause } })),
    new UpstreamFailure("rpc", { error: { code: -32601, message: "no" } }),
    new Error("not a failure"),
  ];
  for (const failure of failures) {
    const error = mapUpstreamFailure(failure, "tools/call", "1 s");
    strictEqual(error.code === CODES.INVALID_PARAMS, false, failure.message);
  }
  const stale = new UpstreamFailure("rpc", {
    error: { code: -32602, message: "the state expired", data: { reason: "expired" } },
  });
  const error = mapUpstreamFailure(stale, "tools/call", "1 s");
  strictEqual(error.code, CODES.INVALID_PARAMS);
  strictEqual(error.message, "the state expired");
});
