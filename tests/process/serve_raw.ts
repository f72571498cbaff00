/**
 * A raw client of `serve` for the black-box tests: requests as fetch sends
 * them (each header of the transport by default, any of them changed or
 * left out), one HTTP/1.1 request over a socket where fetch would fix a
 * header, the messages of a JSON body or an SSE stream, and a session
 * opened as the transport says (initialize, then notifications/initialized).
 */

import { ok, strictEqual } from "node:assert/strict";
import { readEvents } from "../../lib/http/sse.ts";
import { waitFor } from "../wait.ts";
import type { ServeProcess } from "./serve_helpers.ts";

export type Obj = Record<string, unknown>;

export const BOTH = "application/json, text/event-stream";
const dec = new TextDecoder();

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {} },
    clientInfo: { name: "blackbox", version: "1" },
  },
};

/** One request to `serve`, as a client that follows the transport sends it unless told. */
export interface Send {
  readonly method?: string;
  readonly path?: string;
  readonly session?: string;
  /** Replaces the default headers of the same name; null leaves one out. */
  readonly headers?: Record<string, string | null>;
  /** A message (sent as JSON) or the raw text of the body. */
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

export function send(serve: ServeProcess, s: Send): Promise<Response> {
  const method = s.method ?? "POST";
  const headers: Record<string, string | null> = {
    ...(method === "POST" && { "content-type": "application/json", accept: BOTH }),
    ...(method === "GET" && { accept: "text/event-stream" }),
    ...(s.session !== undefined && {
      "mcp-session-id": s.session,
      "mcp-protocol-version": "2025-11-25",
    }),
    ...s.headers,
  };
  const body = s.body === undefined
    ? undefined
    : typeof s.body === "string"
    ? s.body
    : JSON.stringify(s.body);
  return fetch(serve.url(s.path), {
    method,
    headers: Object.fromEntries(
      Object.entries(headers).filter((e): e is [string, string] => e[1] !== null),
    ),
    ...(body !== undefined && { body }),
    ...(s.signal && { signal: s.signal }),
  });
}

/** The messages of a response: its JSON body, or each event of its SSE stream. */
export async function messagesOf(response: Response): Promise<Obj[]> {
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("application/json")) return [await response.json()];
  ok(type.startsWith("text/event-stream"), `not messages: ${response.status} ${type}`);
  const out: Obj[] = [];
  for await (const event of readEvents(response.body!, 1 << 24)) {
    out.push(JSON.parse(dec.decode(event.data)));
  }
  return out;
}

/** The events of an open SSE stream, read as they come. */
export class Events {
  readonly seen: Obj[] = [];
  ended = false;
  readonly done: Promise<void>;

  constructor(response: Response) {
    strictEqual(response.status, 200);
    ok(response.headers.get("content-type")?.startsWith("text/event-stream"));
    this.done = (async () => {
      try {
        for await (const event of readEvents(response.body!, 1 << 24)) {
          this.seen.push(JSON.parse(dec.decode(event.data)));
        }
      } catch {
        // cut: it ended too
      }
      this.ended = true;
    })();
  }

  /** Waits for a message that `match` takes. */
  next(what: string, match: (m: Obj) => boolean, timeoutMs = 10_000): Promise<Obj> {
    return waitFor(what, () => this.seen.find(match), { timeoutMs });
  }
}

/**
 * One HTTP/1.1 request over a TCP socket, exactly as written (fetch adds an
 * Accept and sets the Host itself); the status, the headers and the body.
 */
export async function rawHttp(
  serve: ServeProcess,
  head: string[],
  body = "",
): Promise<{ status: number; head: string; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: serve.port });
  const bytes = new TextEncoder().encode(body);
  const text = [...head, `content-length: ${bytes.length}`, "connection: close", "", ""].join(
    "\r\n",
  );
  await conn.write(new TextEncoder().encode(text));
  if (bytes.length > 0) await conn.write(bytes);
  let all = "";
  for await (const chunk of conn.readable) all += dec.decode(chunk, { stream: true });
  const end = all.indexOf("\r\n\r\n");
  return {
    status: Number(all.slice(9, 12)),
    head: all.slice(0, end).toLowerCase(),
    body: all.slice(end + 4),
  };
}

/** A refusal: its status, and a JSON-RPC error without an id as its body. */
export async function refused(response: Response, status: number): Promise<Obj> {
  const text = await response.text();
  strictEqual(response.status, status, text);
  ok(response.headers.get("content-type")?.startsWith("application/json"), text);
  const body = JSON.parse(text);
  strictEqual(body.jsonrpc, "2.0");
  strictEqual(body.id, null, text);
  ok(Number.isInteger(body.error?.code) && typeof body.error.message === "string", text);
  return body.error;
}

/** A new session: its id (after initialize and notifications/initialized). */
export async function initialize(serve: ServeProcess, name = "blackbox"): Promise<string> {
  const init = structuredClone(INITIALIZE);
  init.params.clientInfo.name = name;
  const response = await send(serve, { body: init });
  const id = response.headers.get("mcp-session-id");
  const [answer] = await messagesOf(response);
  ok(id !== null && answer?.result, `no session: ${JSON.stringify(answer)}`);
  const initialized = await send(serve, {
    session: id,
    body: { jsonrpc: "2.0", method: "notifications/initialized" },
  });
  strictEqual(initialized.status, 202);
  strictEqual(await initialized.text(), "");
  return id;
}

/** A tools/call of `name`. */
export function call(id: number | string, name: string, args: Obj = {}): Obj {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/** The text of a tools/call result message. */
export function textOf(message: Obj | undefined): string {
  const result = message?.result as { content?: { text?: string }[] } | undefined;
  return result?.content?.[0]?.text ?? `(no result: ${JSON.stringify(message)})`;
}
