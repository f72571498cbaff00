/**
 * The memory link: the upstream server is an SDK v2 server in the same
 * process. `InMemoryTransport.createLinkedPair()` joins the two ends; the
 * server end is served by the SDK's `serveStdio(factory, { transport })`, as
 * a stdio connection would be, so the server sees revision 2026-07-28 with
 * its listen streams.
 *
 * Differences from the stdio link, all from the spec (M5):
 * - the server is on this host: not remote, every icon stays;
 * - the requests have no time limit ({@linkcode UpstreamLink.untimed}); the
 *   wait for the answers of the client keeps its own limit;
 * - the server publishes each event on the task that changes it, and this
 *   link gives each message to the bridge at once, in the order of the
 *   server's sends: the events (and the log messages) of a request reach the
 *   bridge before its result.
 *
 * @module
 */

import { InMemoryTransport, type McpServer, type Server } from "@modelcontextprotocol/server";
import { serveStdio, type StdioServerHandle } from "@modelcontextprotocol/server/stdio";
import { LARGE_MESSAGE_BYTES, markLarge } from "../jsonrpc/large.ts";
import {
  isObject,
  isRequestId,
  type Json,
  type JsonObject,
  type Message,
} from "../jsonrpc/message.ts";
import { UpstreamFailure } from "./failure.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink } from "./link.ts";

/**
 * The server product of a factory: what `serveStdio` of the SDK accepts.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { serverInfoOf, type ServerProduct } from "./memory.ts";
 * const server = new McpServer({ name: "demo", version: "1.0.0" });
 * // An McpServer, or its low-level Server.
 * const products: ServerProduct[] = [server, server.server];
 * if (products.some((product) => serverInfoOf(product)?.name !== "demo")) throw new Error();
 * ```
 */
export type ServerProduct = McpServer | Server;

/**
 * Makes a fresh SDK v2 server for one connection, as `serveStdio` of the SDK takes it.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { connectMemoryLink, type ServerFactory } from "./memory.ts";
 * const eras: string[] = [];
 * // A fresh server for each connection; `era` says which revision the client speaks.
 * const factory: ServerFactory = ({ era }) => {
 *   eras.push(era);
 *   return new McpServer({ name: "demo", version: "1.0.0" });
 * };
 * const link = await connectMemoryLink(factory);
 * await link.close();
 * if (eras.some((era) => era !== "legacy" && era !== "modern")) throw new Error();
 * ```
 */
export type ServerFactory = (
  ctx: { readonly era: "legacy" | "modern" },
) => ServerProduct | Promise<ServerProduct>;

/** Options of {@linkcode connectMemoryLink}. */
export interface MemoryLinkOptions {
  /** Errors that the SDK reports out of band (reporting only). */
  readonly onError?: (error: Error) => void;
}

type WireMessage = Parameters<InMemoryTransport["send"]>[0];

/**
 * The message as the bridge gets it: a copy made by a JSON round trip, the
 * bytes the server would write on stdio. The bridge changes results in place
 * (the result rules), so it must never hold an object of the server.
 */
function toFrame(message: WireMessage): UpstreamFrame {
  let text: string | undefined;
  try {
    text = JSON.stringify(message);
    const value = JSON.parse(text) as Json;
    if (isObject(value)) {
      if (text.length > LARGE_MESSAGE_BYTES) markLarge(value.result);
      return { kind: "message", value };
    }
  } catch {
    // Nesting deeper than the serializer allows, a BigInt, a cycle.
  }
  const id = (message as { id?: unknown }).id;
  return { kind: "invalid", id: isRequestId(id) ? id : null };
}

/**
 * The serverInfo of an SDK server, as it gave it to its constructor. The SDK
 * has no public accessor; its own entries read the same field.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { serverInfoOf } from "./memory.ts";
 * const info = serverInfoOf(new McpServer({ name: "demo", version: "1.0.0" }));
 * if (info?.name !== "demo" || info.version !== "1.0.0") throw new Error();
 * ```
 */
export function serverInfoOf(product: ServerProduct): JsonObject | undefined {
  const server = "server" in product ? product.server : product;
  const info = (server as unknown as { _serverInfo?: unknown })._serverInfo;
  try {
    const copy = JSON.parse(JSON.stringify(info ?? null)) as Json;
    return isObject(copy) ? copy : undefined;
  } catch {
    return undefined;
  }
}

function nameOf(product: ServerProduct): string | undefined {
  const name = serverInfoOf(product)?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/**
 * The bridge's end of a memory link.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { MemoryLink } from "./memory.ts";
 * import type { UpstreamFrame } from "./link.ts";
 * import { ENVELOPE_KEYS, UPSTREAM_PROTOCOL_VERSION } from "./envelope.ts";
 * const link = new MemoryLink(() => new McpServer({ name: "demo", version: "1.0.0" }));
 * const answer = Promise.withResolvers<UpstreamFrame>();
 * const reading = link.read((frame) => answer.resolve(frame));
 * const _meta = {
 *   [ENVELOPE_KEYS.protocolVersion]: UPSTREAM_PROTOCOL_VERSION,
 *   [ENVELOPE_KEYS.clientInfo]: { name: "example", version: "1" },
 *   [ENVELOPE_KEYS.clientCapabilities]: {},
 * };
 * await link.send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } });
 * const frame = await answer.promise;
 * if (frame.kind !== "message" || !("result" in frame.value)) throw new Error();
 * if (link.serverName !== "demo" || link.isRemote) throw new Error();
 * await link.close();
 * await reading;
 * if ((await link.ended).kind !== "closed") throw new Error();
 * ```
 */
export class MemoryLink implements UpstreamLink {
  readonly isRemote = false;
  readonly untimed = true;
  readonly ended: Promise<LinkEnd>;
  #bridgeEnd: InMemoryTransport;
  #handle: StdioServerHandle | undefined;
  #onFrame: FrameSink | undefined;
  /** The frames that came before `read`. */
  #early: UpstreamFrame[] = [];
  /**
   * While the bridge holds the next frame (its output waits for the client):
   * settles when the bridge takes frames again. The sends of the server wait
   * for it, so the back pressure of the client reaches the server.
   */
  #room: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #readDone!: () => void;
  #readEnded = new Promise<void>((resolve) => this.#readDone = resolve);
  #serverName: string | undefined;

  constructor(factory: ServerFactory, options: MemoryLinkOptions = {}) {
    const [bridgeEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    this.#bridgeEnd = bridgeEnd;
    this.ended = new Promise<LinkEnd>((resolve) => {
      bridgeEnd.onclose = () => {
        this.#readDone();
        resolve({ kind: "closed" });
      };
    });
    bridgeEnd.onmessage = (message) => this.#receive(message);
    const deliver = serverEnd.send.bind(serverEnd);
    serverEnd.send = (message, sendOptions) => {
      const room = this.#room;
      return room ? room.then(() => deliver(message, sendOptions)) : deliver(message, sendOptions);
    };
    void bridgeEnd.start();
    const capture: ServerFactory = async (ctx) => {
      const product = await factory(ctx);
      this.#serverName ??= nameOf(product);
      return product;
    };
    this.#handle = serveStdio(capture, {
      transport: serverEnd,
      // The upstream client always speaks revision 2026-07-28.
      legacy: "reject",
      ...(options.onError && { onerror: options.onError }),
    });
  }

  /** The name of the server (its serverInfo), once the factory made it. */
  get serverName(): string | undefined {
    return this.#serverName;
  }

  /** Each message of the server, at once, on the task of its send. */
  #receive(message: WireMessage): void {
    const frame = toFrame(message);
    const onFrame = this.#onFrame;
    if (!onFrame) {
      this.#early.push(frame);
      return;
    }
    const hold = onFrame(frame);
    if (!hold || this.#closing || this.#room) return;
    const room: Promise<void> = hold.catch(() => {}).then(() => {
      if (this.#room === room) this.#room = undefined;
    });
    this.#room = room;
  }

  read(onFrame: FrameSink): Promise<void> {
    this.#onFrame = onFrame;
    const early = this.#early;
    this.#early = [];
    for (const frame of early) onFrame(frame);
    return this.#readEnded;
  }

  send(message: Message): Promise<void> {
    if (this.#closing) return Promise.reject(new UpstreamFailure("closed"));
    return this.#bridgeEnd.send(message as WireMessage).catch(() => {
      throw new UpstreamFailure("closed");
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    // The bridge no longer holds the server.
    this.#room = undefined;
    const handle = this.#handle;
    this.#handle = undefined;
    try {
      // Ends the listen streams of the server, closes the server, then the pair.
      await handle?.close();
    } finally {
      await this.#bridgeEnd.close();
      this.#readDone();
    }
  }
}

/**
 * Connects a fresh server of `factory` over a memory link. Never rejects.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { UpstreamClient } from "./client.ts";
 * import { connectMemoryLink } from "./memory.ts";
 *
 * const link = await connectMemoryLink(() => new McpServer({ name: "s", version: "1" }));
 * const client = new UpstreamClient(link, { clientInfo: { name: "c", version: "1" }, capabilities: {} });
 * const discover = await client.discover(1000);
 * if (link.isRemote || link.serverName !== "s" || !discover.supportedVersions) throw new Error();
 * await client.close();
 * ```
 */
export function connectMemoryLink(
  factory: ServerFactory,
  options?: MemoryLinkOptions,
): Promise<MemoryLink> {
  return Promise.resolve(new MemoryLink(factory, options));
}
