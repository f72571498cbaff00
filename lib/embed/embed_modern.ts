/**
 * The modern path of the embedded bridge: a client of revision 2026-07-28
 * talks to the server through the SDK v2 stdio server transport, served by
 * the SDK's `serveStdio` (its era rules and listen streams).
 *
 * The reader of the embedded bridge frames the input and gives each line to
 * the transport. The path adds what the SDK transport does not do (spec M5):
 * - a line above the line limit is dropped without a response (the SDK
 *   closes the connection on a line over 10 MB);
 * - invalid UTF-8, invalid JSON, a line deeper than the depth limit and JSON
 *   that is not a JSON-RPC message get an error response (the SDK skips them
 *   without a word);
 * - a request above the limit of requests in flight gets -32603 at once, so
 *   the reader always reads the cancellations and the end of the input;
 * - the end of the input ends the listen streams, waits for the requests for
 *   at most the shutdown grace, then cancels what is left (the SDK drops the
 *   requests in flight at the end of its input).
 *
 * @module
 */

import { PassThrough, Writable } from "node:stream";
import {
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type Transport,
} from "@modelcontextprotocol/server";
import {
  serveStdio as sdkServeStdio,
  type StdioServerHandle,
  StdioServerTransport,
} from "@modelcontextprotocol/server/stdio";
import type { Frame } from "../jsonrpc/framer.ts";
import { scanIdFromHead } from "../jsonrpc/id_scan.ts";
import {
  idKey,
  isObject,
  isRequestId,
  type Json,
  type JsonObject,
  type Message,
  type RequestId,
} from "../jsonrpc/message.ts";
import { classify, parseLine } from "../jsonrpc/parse.ts";
import { type ServerFactory, serverInfoOf } from "../upstream/memory.ts";
import { BridgeError } from "../errors/errors.ts";
import type { Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/** Options of a {@linkcode ModernPath}. */
export interface ModernPathOptions {
  readonly limits: Limits;
  readonly log: Logger;
  /** The client's output; the path takes its lock. */
  readonly output: WritableStream<Uint8Array>;
  /** The tools that the client neither sees nor calls. */
  readonly tools?: ToolFilter | undefined;
}

type WireMessage = Parameters<Transport["send"]>[0];

const NEWLINE = 0x0a;
/** The id of the requests that the path itself sends to the server. */
const OWN_ID_PREFIX = "mcp-bridge-embed-";

interface InFlight {
  readonly id: RequestId;
  readonly listen: boolean;
}

/** Resolves on the event, or after `ms`; the timer never outlives the wait. */
function within(ms: number, start: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    start(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** One connection on the modern path. */
export class ModernPath {
  readonly #options: ModernPathOptions;
  readonly #input = new PassThrough();
  readonly #output: Writable;
  readonly #transport: StdioServerTransport;
  readonly #handle: StdioServerHandle;
  /** The requests of the client that the server has not answered, by id key. */
  readonly #inFlight = new Map<string, InFlight>();
  /** Ids whose response must not reach the client: canceled at the end, or the path's own. */
  readonly #silenced = new Set<string>();
  /** Listen streams that the path ended: their later events are dropped. */
  readonly #endedStreams = new Set<string>();
  /** The tools/list requests in flight: their results lose the hidden tools. */
  readonly #toolLists = new Set<string>();
  #serverInfo: JsonObject | undefined;
  #onIdle: (() => void) | undefined;
  #ownAnswer: ((key: string) => void) | undefined;
  #closed = false;

  constructor(factory: ServerFactory, options: ModernPathOptions) {
    this.#options = options;
    const sink = options.output.getWriter();
    this.#output = new Writable({
      write(chunk: Uint8Array, _encoding, callback) {
        sink.write(chunk).then(() => callback(), (error) => callback(error));
      },
      final(callback) {
        sink.close().then(() => callback(), () => callback());
      },
    });
    // A line of the path is at most the line limit and its newline; the
    // transport's buffer never holds more than one line.
    this.#transport = new StdioServerTransport(this.#input, this.#output, {
      maxBufferSize: options.limits.max_line_bytes + 1,
    });
    const send = this.#transport.send.bind(this.#transport);
    this.#transport.send = (message: WireMessage) => {
      if (!this.#outgoing(message)) return Promise.resolve();
      return send(message);
    };
    const capture: ServerFactory = async (ctx) => {
      const product = await factory(ctx);
      this.#serverInfo ??= serverInfoOf(product);
      return product;
    };
    this.#handle = sdkServeStdio(capture, {
      transport: this.#transport,
      // A client of revision 2025-11-25 takes the legacy path of the bridge,
      // not the SDK's shim: a request without the envelope gets its error.
      legacy: "reject",
      onerror: (error) => options.log.debug(`the server reported: ${error.message}`),
    });
  }

  /** True when the message may go to the client; updates the requests in flight. */
  #outgoing(message: WireMessage): boolean {
    const raw = message as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof raw.method === "string") {
      // An event of a listen stream that the path ended never follows its end.
      const meta = isObject(raw.params) ? raw.params._meta : undefined;
      const sub = isObject(meta) ? meta[SUBSCRIPTION_ID_META_KEY] : undefined;
      return !(isRequestId(sub) && this.#endedStreams.has(idKey(sub)));
    }
    if (!isRequestId(raw.id)) return true;
    const key = idKey(raw.id);
    if (this.#silenced.has(key)) {
      this.#silenced.delete(key);
      this.#ownAnswer?.(key);
      return false;
    }
    if (this.#toolLists.delete(key)) {
      const result = (raw as { result?: Json }).result;
      if (isObject(result)) this.#options.tools?.filterList(result);
    }
    this.#settle(key);
    return true;
  }

  #settle(key: string): void {
    if (!this.#inFlight.delete(key)) return;
    if (this.#onIdle && this.#waiting() === 0) this.#onIdle();
  }

  /** Requests in flight other than the listen streams. */
  #waiting(): number {
    let n = 0;
    for (const flight of this.#inFlight.values()) if (!flight.listen) n++;
    return n;
  }

  /** Writes a message of the path itself, in order with those of the server. */
  #write(message: Message): void {
    if (!this.#closed) this.#output.write(JSON.stringify(message) + "\n");
  }

  #reject(id: RequestId | null, error: BridgeError): void {
    this.#write({ jsonrpc: "2.0", id, error: error.toJSON() });
  }

  #deliver(bytes: Uint8Array): boolean {
    const line = new Uint8Array(bytes.length + 1);
    line.set(bytes);
    line[bytes.length] = NEWLINE;
    return this.#input.write(line);
  }

  /**
   * Handles one frame of the client. Returns a promise while the output or
   * the transport is full: the reader reads on when it settles.
   */
  accept(frame: Frame): Promise<void> | undefined {
    if (this.#closed) return undefined;
    const { limits, log } = this.#options;
    if (frame.kind === "too_long") {
      log.debug(`dropped a line of ${frame.length} bytes, above the line limit`);
      return this.#hold(true);
    }
    const parsed = parseLine(frame.bytes, limits.max_depth);
    if (!parsed.ok) {
      const scan = scanIdFromHead(frame.bytes);
      const detail = parsed.cause === "too_deep" ? `limit: ${limits.max_depth} levels` : undefined;
      this.#reject(scan.found ? scan.id : null, BridgeError.of(parsed.cause, detail));
      return this.#hold(true);
    }
    const message = classify(parsed.value);
    switch (message.kind) {
      case "invalid":
        if (message.replyId === undefined) log.debug("dropped a response that is not valid");
        else this.#reject(message.replyId, BridgeError.of("invalid_request_shape"));
        return this.#hold(true);
      case "request": {
        if (this.#inFlight.size >= limits.max_in_flight_requests) {
          this.#reject(message.id, BridgeError.of("too_many_requests"));
          return this.#hold(true);
        }
        const { tools } = this.#options;
        // A hidden tool is refused here: nothing of the call reaches the server.
        const refusal = message.method === "tools/call"
          ? tools?.refusal(message.params)
          : undefined;
        if (refusal) {
          this.#reject(message.id, refusal);
          return this.#hold(true);
        }
        const listen = message.method === "subscriptions/listen";
        this.#inFlight.set(idKey(message.id), { id: message.id, listen });
        if (tools && message.method === "tools/list") this.#toolLists.add(idKey(message.id));
        break;
      }
      case "notification": {
        const params = message.params;
        const requestId = isObject(params) ? params.requestId : undefined;
        // A canceled request gets no response: it is no longer in flight.
        if (message.method === "notifications/cancelled" && isRequestId(requestId)) {
          this.#settle(idKey(requestId));
        }
        break;
      }
      case "response":
        break;
    }
    return this.#hold(this.#deliver(frame.bytes));
  }

  #hold(taken: boolean): Promise<void> | undefined {
    const waits: Promise<void>[] = [];
    if (!taken) waits.push(new Promise((r) => this.#input.once("drain", () => r())));
    if (this.#output.writableNeedDrain) {
      waits.push(new Promise((r) => this.#output.once("drain", () => r())));
    }
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => {});
  }

  /** Sends a notification of the path itself to the server. */
  #notify(method: string, params: JsonObject): void {
    this.#deliver(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", method, params })));
  }

  /**
   * Resolves when the server has read every message given to it so far: the
   * answer of a ping of the path itself (the server reads its input in order),
   * or after `ms`.
   */
  #read(ms: number): Promise<void> {
    const key = idKey(`${OWN_ID_PREFIX}drain`);
    this.#silenced.add(key);
    return within(ms, (done) => {
      this.#ownAnswer = (answered) => {
        if (answered !== key) return;
        this.#ownAnswer = undefined;
        done();
      };
      const ping = { jsonrpc: "2.0", id: `${OWN_ID_PREFIX}drain`, method: "ping" };
      this.#deliver(new TextEncoder().encode(JSON.stringify(ping)));
    }).finally(() => {
      this.#silenced.delete(key);
      this.#ownAnswer = undefined;
    });
  }

  /**
   * The end of the input: ends the listen streams of the server (each gets
   * its result), waits for the other requests for at most the shutdown
   * grace (a response in that time still goes out), then cancels the rest:
   * they get no response. Resolves when the server and the output are
   * closed; no timer is left.
   */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    const { limits } = this.#options;
    for (const [key, flight] of [...this.#inFlight]) {
      if (!flight.listen) continue;
      this.#inFlight.delete(key);
      this.#endedStreams.add(key);
      // The SDK's listen router forgets the stream; the client gets the result of its end.
      this.#notify("notifications/cancelled", { requestId: flight.id, reason: "shutdown" });
      const meta: JsonObject = { [SUBSCRIPTION_ID_META_KEY]: flight.id };
      if (this.#serverInfo) meta[SERVER_INFO_META_KEY] = this.#serverInfo;
      this.#write({
        jsonrpc: "2.0",
        id: flight.id,
        result: { resultType: "complete", _meta: meta },
      });
    }
    if (this.#waiting() > 0) {
      await within(limits.shutdown_grace_ms, (done) => this.#onIdle = done);
      this.#onIdle = undefined;
    }
    const left = [...this.#inFlight.values()];
    this.#inFlight.clear();
    for (const flight of left) {
      this.#silenced.add(idKey(flight.id));
      this.#notify("notifications/cancelled", {
        requestId: flight.id,
        reason: "the input of the client ended",
      });
    }
    // The cancellations reach the handlers (their signals fire) before the close.
    if (left.length > 0 || this.#endedStreams.size > 0) await this.#read(limits.shutdown_grace_ms);
    this.#closed = true;
    await this.#handle.close();
    this.#input.destroy();
    await new Promise<void>((resolve) => this.#output.end(resolve));
  }
}
