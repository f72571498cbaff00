/** The wire error of the bridge, and the errors of the upstream server that pass through. */

import { deepStrictEqual } from "node:assert/strict";
import { assertIncludes } from "../assert.ts";
import { BridgeError, fromUpstreamError } from "../../lib/errors/errors.ts";

Deno.test("a bridge error carries data.cause and data.detail, and fills placeholders", () => {
  deepStrictEqual(BridgeError.of("line_too_long", "limit: 10 bytes").toJSON(), {
    code: -32600,
    message: "The request is longer than the line limit of the bridge.",
    data: { cause: "line_too_long", detail: "limit: 10 bytes" },
  });
  const e = BridgeError.of("redirect_port_unavailable", undefined, { port: 8765 });
  assertIncludes(e.message, "port 8765.");
  deepStrictEqual(e.data, { cause: "redirect_port_unavailable" });
});

Deno.test("upstream errors pass unchanged, except -32042", () => {
  deepStrictEqual(fromUpstreamError({ code: -32002, message: "nope", data: { a: 1 } }).toJSON(), {
    code: -32002,
    message: "nope",
    data: { a: 1 },
  });
  deepStrictEqual(
    fromUpstreamError({ code: -32042, message: "go", data: { url: "https://x" } }).toJSON(),
    {
      code: -32603,
      message: "go",
    },
  );
});
