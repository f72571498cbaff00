/**
 * The send policy of the HTTP link, end to end (the bridge in process with
 * the real wiring of the command line, over HTTP/2 to a server of scripted
 * faults, `tests/fixtures/h2_faults.ts`): what the server provably did not
 * process goes once more (the streams above a GOAWAY's last stream id,
 * REFUSED_STREAM); what may have run fails once with its cause, unless it
 * is repeatable (a list request, a tool that the last tools/list marked
 * read-only or idempotent, not with `--no-hinted-resend`); every failure has
 * its line in the log, with what the transport saw.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type FaultRequest, serveFaults, type StreamFault } from "../fixtures/h2_faults.ts";
import { makeCertificates } from "../fixtures/http_tls.ts";
import { InProcessBridge } from "../frontend/in_process.ts";

type Obj = Record<string, unknown>;
const certificates = await makeCertificates();
const tls = { cert: certificates.cert, key: certificates.key };

/** The first attempt of each call (and of the first tools/list) gets `fault`; the rest an answer. */
function firstAttempts(fault: StreamFault): (request: FaultRequest) => StreamFault {
  const seen = new Set<string>();
  return (request) => {
    const key = request.callId ?? request.method;
    if (request.method === "server/discover" || seen.has(key)) return "answer";
    seen.add(key);
    return fault;
  };
}

function textOf(response: Obj): string | undefined {
  const content = (response.result as { content?: { text: string }[] } | undefined)?.content;
  return content?.[0]?.text;
}

function causeOf(response: Obj): string | undefined {
  return ((response.error as { data?: { cause?: string } } | undefined)?.data)?.cause;
}

Deno.test("http resend: the calls above a GOAWAY's last stream id go once more on a new connection; each runs once, none fails", async () => {
  let sent = false;
  await using server = await serveFaults(tls, (request) => {
    // The fifth call and those after it are above the last stream id.
    if (request.method !== "tools/call" || sent || request.stream < 11) return "answer";
    sent = true;
    return "goaway";
  });
  await using bridge = new InProcessBridge(
    ["--ca-file", certificates.caFile, "--log-level", "debug"],
    server.url,
  );
  await bridge.initialize();
  const ids = Array.from({ length: 8 }, (_, i) => `c${i}`);
  for (const [n, id] of ids.entries()) {
    await bridge.request(n + 1, "tools/call", { name: "write", arguments: { id } });
  }
  for (const [n, id] of ids.entries()) strictEqual(textOf(await bridge.response(n + 1)), id);
  ok(sent, "the server sent its GOAWAY");
  deepStrictEqual([...server.runs.values()], Array(8).fill(1));
  strictEqual(server.connections(), 2);
  ok(
    /tools\/call: sent once more after GOAWAY NO_ERROR/.test(bridge.stderr),
    bridge.stderr,
  );
  ok(!bridge.stderr.includes("failed:"), bridge.stderr);
});

Deno.test("http resend: a stream refused with REFUSED_STREAM goes once more, and runs once", async () => {
  await using server = await serveFaults(tls, firstAttempts("refuse"));
  await using bridge = new InProcessBridge(["--ca-file", certificates.caFile], server.url);
  await bridge.initialize();
  await bridge.request(1, "tools/call", { name: "write", arguments: { id: "w" } });
  strictEqual(textOf(await bridge.response(1)), "w");
  deepStrictEqual([...server.runs], [["w", 1]]);
});

for (const hinted of [true, false]) {
  Deno.test(`http resend: after a reset of a stream that ran, ${hinted ? "a list and the calls of read-only and idempotent tools go once more; another call fails once, with its line" : "--no-hinted-resend: only the list goes once more"}`, async () => {
    await using server = await serveFaults(tls, firstAttempts("reset_after_run"));
    await using bridge = new InProcessBridge(
      ["--ca-file", certificates.caFile, ...(hinted ? [] : ["--no-hinted-resend"])],
      server.url,
    );
    await bridge.initialize();
    // VS Code lists the tools before it calls one: the list (reset once) gives the hints.
    await bridge.request(1, "tools/list", {});
    const listed = await bridge.response(1);
    strictEqual((listed.result as { tools: unknown[] }).tools.length, 3);
    const calls = [["read", "r"], ["same", "s"], ["write", "w"]] as const;
    for (const [n, [name, id]] of calls.entries()) {
      await bridge.request(n + 2, "tools/call", { name, arguments: { id } });
    }
    const [read, same, write] = [
      await bridge.response(2),
      await bridge.response(3),
      await bridge.response(4),
    ];
    if (hinted) {
      strictEqual(textOf(read), "r");
      strictEqual(textOf(same), "s");
      // The server's own promise: the second run has no further effect.
      deepStrictEqual([server.runs.get("r"), server.runs.get("s")], [2, 2]);
    } else {
      strictEqual(causeOf(read), "transport_failed");
      strictEqual(causeOf(same), "transport_failed");
      deepStrictEqual([server.runs.get("r"), server.runs.get("s")], [1, 1]);
    }
    // A call that may have changed something is never sent twice.
    strictEqual(causeOf(write), "transport_failed");
    strictEqual(server.runs.get("w"), 1);
    const lines = bridge.logs.filter((line) => line.includes("failed:"));
    strictEqual(lines.length, hinted ? 1 : 3, lines.join(""));
    ok(
      lines.some((line) =>
        line.includes("warn: tools/call (request 4) failed: transport_failed") &&
        line.includes("[the server reset the stream (INTERNAL_ERROR)]")
      ),
      lines.join(""),
    );
    ok(!bridge.stderr.includes(server.url) && !bridge.stderr.includes("/mcp"), bridge.stderr);
  });
}

Deno.test("http resend: over HTTP/2, a 200 whose stream ends after its head without the response (the server's session ends): the list and the calls of read-only and idempotent tools go once more, another call fails once; each line in the log", async () => {
  await using server = await serveFaults(tls, firstAttempts("cut_after_head"));
  await using bridge = new InProcessBridge(
    ["--ca-file", certificates.caFile, "--log-level", "debug"],
    server.url,
  );
  await bridge.initialize();
  await bridge.request(1, "tools/list", {});
  strictEqual(((await bridge.response(1)).result as { tools: unknown[] }).tools.length, 3);
  const calls = [["read", "r"], ["same", "s"], ["write", "w"]] as const;
  const answers: Obj[] = [];
  // One at a time: the cut ends the whole connection.
  for (const [n, [name, id]] of calls.entries()) {
    await bridge.request(n + 2, "tools/call", { name, arguments: { id } });
    answers.push(await bridge.response(n + 2));
  }
  deepStrictEqual(answers.slice(0, 2).map(textOf), ["r", "s"]);
  deepStrictEqual((answers[2]!.error as { data?: unknown }).data, {
    cause: "transport_failed",
    detail: "HTTP status 200",
  });
  deepStrictEqual([...server.runs], [["r", 2], ["s", 2], ["w", 1]]);
  // Deno's fetch reads the end of the destroyed session as the end of the stream.
  const ended = "the stream ended before its response";
  const lines = (text: string) =>
    bridge.logs.filter((line) => line.includes(text)).map((line) =>
      line.slice(line.indexOf("] ") + 2).trimEnd()
    );
  deepStrictEqual(lines("failed:"), [
    `warn: tools/call (request 4) failed: transport_failed: HTTP status 200 [${ended}]`,
  ]);
  deepStrictEqual(lines("sent once more"), [
    `debug: tools/list: sent once more after ${ended}`,
    `debug: tools/call: sent once more after ${ended}`,
    `debug: tools/call: sent once more after ${ended}`,
  ]);
  ok(!bridge.stderr.includes(server.url) && !bridge.stderr.includes("/mcp"), bridge.stderr);
});

for (const hinted of [true, false]) {
  Deno.test(`http resend, --protocol auto with a 2025-11-25 server: after a reset of a stream that ran, ${hinted ? "the call of a read-only tool goes once more, another fails once" : "--no-hinted-resend: no call goes once more"}`, async () => {
    await using server = await serveFaults(tls, firstAttempts("reset_after_run"), true);
    await using bridge = new InProcessBridge(
      [
        "--ca-file",
        certificates.caFile,
        "--protocol",
        "auto",
        ...(hinted ? [] : ["--no-hinted-resend"]),
      ],
      server.url,
    );
    const init = await bridge.initialize();
    strictEqual((init.result as { serverInfo: { name: string } }).serverInfo.name, "faults-legacy");
    await bridge.request(1, "tools/list", {});
    strictEqual(((await bridge.response(1)).result as { tools: unknown[] }).tools.length, 3);
    await bridge.request(2, "tools/call", { name: "read", arguments: { id: "r" } });
    await bridge.request(3, "tools/call", { name: "write", arguments: { id: "w" } });
    const [read, write] = [await bridge.response(2), await bridge.response(3)];
    if (hinted) strictEqual(textOf(read), "r");
    else strictEqual(causeOf(read), "transport_failed");
    strictEqual(server.runs.get("r"), hinted ? 2 : 1);
    strictEqual(causeOf(write), "transport_failed");
    strictEqual(server.runs.get("w"), 1);
    // A reset stream fails its request only: the server is there, the session lives on.
    ok(!bridge.stderr.includes("new session"), bridge.stderr);
    ok(
      bridge.logs.some((line) =>
        line.includes("tools/call (request 3) failed: transport_failed") &&
        line.includes("reset the stream (INTERNAL_ERROR)")
      ),
      bridge.stderr,
    );
  });
}
