import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";
import { endWords, failureOfEnd, type LinkEnd } from "../../lib/upstream/link.ts";

Deno.test("failureOfEnd: the one mapping of how a link ended", () => {
  const status = new UpstreamFailure("transport_failed", { status: 503 });
  const signIn = new UpstreamFailure("sign_in", { signIn: { cause: "sign_in_denied" } });
  const rows: [LinkEnd, string, number | undefined][] = [
    [{ kind: "exited", code: 0 }, "exited", undefined],
    [{ kind: "exited", code: 1 }, "exited", undefined],
    [{ kind: "exited", code: null }, "exited", undefined],
    [{ kind: "closed" }, "closed", undefined],
    [{ kind: "failed" }, "transport_failed", undefined],
    [{ kind: "failed", failure: status }, "transport_failed", 503],
    [{ kind: "failed", failure: signIn }, "sign_in", undefined],
  ];
  deepStrictEqual(
    rows.map(([end]) => {
      const failure = failureOfEnd(end);
      return [end, failure.kind, failure.status];
    }),
    rows,
  );
  // A failed transport keeps its own failure, not a copy.
  strictEqual(failureOfEnd({ kind: "failed", failure: status }), status);
  strictEqual(failureOfEnd({ kind: "failed", failure: signIn }).signIn?.cause, "sign_in_denied");
});

Deno.test("endWords: a child stopped by a signal says so, never 'code null'", () => {
  deepStrictEqual(
    ([
      { kind: "exited", code: 3 },
      { kind: "exited", code: null },
      { kind: "closed" },
      { kind: "failed" },
    ] as LinkEnd[]).map(endWords),
    [
      "the upstream server process stopped with the code 3",
      "the upstream server process stopped by a signal",
      "the upstream connection closed",
      "the upstream connection closed",
    ],
  );
});
