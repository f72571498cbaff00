import { deepStrictEqual } from "node:assert/strict";
import { mapDiscoverFailure, mapUpstreamFailure } from "../../lib/bridge/failures.ts";
import { UpstreamFailure } from "../../lib/upstream/failure.ts";

const data = (e: { toJSON(): unknown }) => e.toJSON();

Deno.test("forwarded requests: each failure kind gives its cause", () => {
  deepStrictEqual(
    (["timeout", "exited", "closed", "transport_failed", "invalid_response", "rpc"] as const).map((
      kind,
    ) =>
      (data(mapUpstreamFailure(new UpstreamFailure(kind), "tools/list", "120 s")) as {
        data: unknown;
      }).data
    ),
    [
      { cause: "timeout", detail: "method: tools/list, limit: 120 s" },
      { cause: "upstream_exited" },
      { cause: "closed" },
      { cause: "transport_failed" },
      { cause: "invalid_response" },
      { cause: "rpc" },
    ],
  );
});

Deno.test("server/discover: the upstream code is kept, -32042 becomes -32603, the detail says why", () => {
  deepStrictEqual(
    data(
      mapDiscoverFailure(
        new UpstreamFailure("rpc", { error: { code: -32001, message: "no" } }),
        "60 s",
      ),
    ),
    {
      code: -32001,
      message: "The upstream server did not answer server/discover. " +
        "It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server.",
      data: { cause: "discover_failed", detail: "no" },
    },
  );
  deepStrictEqual(
    (data(
      mapDiscoverFailure(
        new UpstreamFailure("rpc", { error: { code: -32042, message: "url" } }),
        "60 s",
      ),
    ) as {
      code: number;
    }).code,
    -32603,
  );
  deepStrictEqual(
    (data(mapDiscoverFailure(new UpstreamFailure("timeout"), "60 s")) as { data: unknown }).data,
    { cause: "discover_failed", detail: "no response in 60 s" },
  );
  deepStrictEqual(
    (data(mapDiscoverFailure(new UpstreamFailure("rpc"), "60 s")) as { data: unknown }).data,
    { cause: "discover_failed", detail: "the error has no error object" },
  );
});
