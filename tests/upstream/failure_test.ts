import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type Cause, ERROR_TABLE } from "../../lib/errors/error_table.ts";
import { SIGN_IN_CAUSES, type SignInCause, UpstreamFailure } from "../../lib/upstream/failure.ts";

Deno.test("UpstreamFailure: the message names the kind, the code or the status, nothing else", () => {
  deepStrictEqual(
    [
      new UpstreamFailure("timeout"),
      new UpstreamFailure("transport_failed", { status: 404 }),
      new UpstreamFailure("rpc", { error: { code: -32001, message: "secret text" } }),
      new UpstreamFailure("rpc"),
      new UpstreamFailure("sign_in", { signIn: { cause: "sandbox", detail: "d" } }),
    ].map((f) => [f.name, f.message]),
    [
      ["UpstreamFailure", "upstream request failed: timeout"],
      ["UpstreamFailure", "upstream request failed: transport_failed, HTTP status 404"],
      ["UpstreamFailure", "upstream error -32001"],
      ["UpstreamFailure", "upstream request failed: rpc"],
      ["UpstreamFailure", "upstream request failed: sign_in"],
    ],
  );
});

Deno.test("SIGN_IN_CAUSES are the sign-in rows of the error table, from sign_in_failed to its end", () => {
  const causes = Object.keys(ERROR_TABLE);
  deepStrictEqual([...SIGN_IN_CAUSES], causes.slice(causes.indexOf("sign_in_failed")));
  // Each is a cause of the table with a response (not the canceled row).
  const typed: readonly Exclude<Cause, "canceled">[] = SIGN_IN_CAUSES;
  const first: SignInCause = SIGN_IN_CAUSES[0];
  strictEqual(typed[0], first);
});
