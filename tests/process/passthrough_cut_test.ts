/**
 * `--protocol auto` in front of a raw server of revision 2025-11-25 at a URL
 * (Deno.serve on 127.0.0.1) whose 200 responses end before their response
 * message: a JSON body that the connection cuts or that ends too soon, an SSE
 * stream cut after its headers or after an event, or one that ends without
 * the response. Each request gets one error at once (invalid_response for a
 * JSON body, transport_failed for a stream, with the status in data.detail),
 * its one line in the log, and the session lives on. Nothing names the URL.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { BridgeProcess } from "./helpers.ts";

type Json = Record<string, unknown>;

const enc = new TextEncoder();

/** A body of `head`, then its end: closed, or errored (the server drops the connection). */
function body(head: string, end: "close" | "error"): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      if (head !== "") controller.enqueue(enc.encode(head));
    },
    pull(controller) {
      if (end === "close") controller.close();
      else controller.error(new Error("cut"));
    },
  });
}

const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/** The cut answers, by the tool's name. */
function cutTools(name: string, id: unknown): Response | undefined {
  const json = { headers: { "content-type": "application/json" } };
  const stream = { headers: { "content-type": "text/event-stream" } };
  const half = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } }).slice(0, 20);
  const log = event({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: "working" },
  });
  switch (name) {
    case "json_cut":
      return new Response(body(half, "error"), json);
    case "json_short":
      return new Response(body(half, "close"), json);
    case "json_other":
      // Whole and valid, but not the response of the request.
      return new Response(log.slice(log.indexOf("{"), log.lastIndexOf("}") + 1), json);
    case "sse_head":
      return new Response(body("", "error"), stream);
    case "sse_cut":
      return new Response(body(log, "error"), stream);
    case "sse_end":
      return new Response(body(log, "close"), stream);
  }
  return undefined;
}

const dataOf = (response: Json) => (response.error as { data?: Json } | undefined)?.data;

Deno.test("auto over HTTP: a 200 whose body ends before its response gives the request one error at once; the session lives on", async () => {
  await using upstream = serveLegacy({ tool: cutTools });
  await using bridge = new BridgeProcess([
    "--protocol",
    "auto",
    "--log-level",
    "debug",
    upstream.url,
  ]);
  await bridge.initialize({});
  await bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const names = ["json_cut", "json_short", "json_other", "sse_head", "sse_cut", "sse_end"];
  const started = Date.now();
  const failures: (Json | undefined)[] = [];
  for (const [n, name] of names.entries()) {
    await bridge.request(`c-${n}`, "tools/call", { name, arguments: {} });
    failures.push(dataOf(await bridge.response(`c-${n}`, 5_000)));
  }
  // At once: far below any time limit (a tools/call has an hour).
  ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
  const json = { cause: "invalid_response", detail: "HTTP status 200" };
  const sse = { cause: "transport_failed", detail: "HTTP status 200" };
  deepStrictEqual(failures, [json, json, json, sse, sse, sse]);
  // One response each: no second error for any of them.
  await bridge.request("c-9", "tools/call", { name: "echo", arguments: {} });
  const rest = await bridge.until("c-9");
  deepStrictEqual(rest.filter((m) => "error" in m || "result" in m).map((m) => m.id), ["c-9"]);
  ok(!bridge.stderr.includes("new session"), bridge.stderr);
  const calls = upstream.requests.filter((r) => r.message?.method === "tools/call");
  strictEqual(calls.length, names.length + 1, "no request went twice");
  const lines = bridge.stderr.split("\n").filter((line) => line.includes("failed:"))
    .map((line) => line.replace(/^\[[^\]]*\] /, ""));
  const failed = (n: number, cause: string, seen?: string) =>
    `warn: tools/call (request "c-${n}") failed: ${cause}: HTTP status 200` +
    (seen === undefined ? "" : ` [${seen}]`);
  const body = "the connection failed during the body of the response";
  deepStrictEqual(lines, [
    failed(0, "invalid_response", body),
    failed(1, "invalid_response"),
    failed(2, "invalid_response"),
    failed(3, "transport_failed", body),
    failed(4, "transport_failed", body),
    failed(5, "transport_failed", "the stream ended before its response"),
  ]);
  strictEqual(await bridge.exit(), 0);
  ok(!bridge.stderr.includes(upstream.url) && !bridge.stdout.includes(upstream.url));
});
