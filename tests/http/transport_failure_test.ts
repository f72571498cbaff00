/**
 * What the transport saw, from the texts that Deno's fetch gives (the h2
 * crate's `Display` of its errors, hyper's, hyper-util's, the OS's): the
 * texts of the table were seen with a node:http2 server that sends a GOAWAY
 * below streams in flight, refuses or resets a stream, and ends its session
 * (tests/fixtures/h2_faults.ts, tests/upstream/http_resend_test.ts), and
 * behind nginx (tests/http/nginx_test.ts). The words of the log line never
 * hold the text of the error, which names the URL.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { provablyUnprocessed, transportSight } from "../../lib/http/transport_failure.ts";

const fetchError = (cause: string) =>
  new TypeError("fetch failed", {
    cause: new Error(`error sending request for url (https://mcp.example/secret?k=1): ${cause}`),
  });

Deno.test("transportSight: each failure's kind, HTTP/2 code and words, never the text of the error", () => {
  const rows: [string, string, string | undefined, string, boolean][] = [
    // [the text, the kind, the code, the words, provably not processed]
    [
      "client error (Connect): tcp connect error: Connection refused (os error 111)",
      "connect",
      undefined,
      "the connection failed (connection refused)",
      true,
    ],
    [
      "client error (Connect): invalid peer certificate: UnknownIssuer",
      "connect",
      undefined,
      "the connection failed (the TLS handshake failed)",
      true,
    ],
    // A stream above the last-stream-id of the server's GOAWAY (h2: Initiator::Remote).
    [
      "connection error received: not a result of an error",
      "goaway",
      "NO_ERROR",
      "GOAWAY NO_ERROR (the stream was above the server's last stream id)",
      true,
    ],
    [
      "stream error received: refused stream before processing any application logic",
      "refused_stream",
      "REFUSED_STREAM",
      "the server refused the stream (REFUSED_STREAM)",
      true,
    ],
    // nginx's proxy_read_timeout resets a silent stream so.
    [
      "stream error received: unexpected internal error encountered",
      "stream_reset",
      "INTERNAL_ERROR",
      "the server reset the stream (INTERNAL_ERROR)",
      false,
    ],
    // A stream below the last-stream-id that the close of the session cut: it may have run.
    [
      "stream error received: not a result of an error",
      "stream_reset",
      "NO_ERROR",
      "the server reset the stream (NO_ERROR)",
      false,
    ],
    [
      "stream closed because of a broken pipe",
      "closed",
      undefined,
      "the connection closed before the response",
      false,
    ],
    [
      "client error (SendRequest): connection closed before message completed",
      "incomplete",
      undefined,
      "the connection closed before the response",
      false,
    ],
    [
      "Connection reset by peer (os error 104)",
      "reset",
      undefined,
      "the connection was reset",
      false,
    ],
    [
      "client error (Connect): unsuccessful tunnel",
      "proxy_refused",
      undefined,
      "the proxy refused the tunnel",
      false,
    ],
    // The body of a 200 that the connection cut (closed or reset: Deno keeps no cause).
    [
      "error reading a body from connection",
      "body",
      undefined,
      "the connection failed during the body of the response",
      false,
    ],
    ["something new", "other", undefined, "the transport failed", false],
  ];
  for (const [text, kind, code, words, unprocessed] of rows) {
    const sight = transportSight(fetchError(text));
    deepStrictEqual(
      { kind: sight.kind, code: sight.code, words: sight.words },
      { kind, code, words },
      text,
    );
    deepStrictEqual(provablyUnprocessed(sight), unprocessed, text);
    ok(!sight.words.includes("secret") && !sight.words.includes("example"), sight.words);
  }
});
