/**
 * The embedded bridge (spec M5): one stdio connection in the process of an
 * SDK v2 server. The first request of the client selects the path:
 *
 * | First message                                 | Path                                           |
 * | --------------------------------------------- | ---------------------------------------------- |
 * | a request `initialize`                        | legacy: the front end over the memory link     |
 * | a request `server/discover`                   | none: the discover rule; the next line selects |
 * | another request, a notification, a response   | modern: the SDK v2 stdio transport             |
 * | invalid JSON or UTF-8, too deep, not JSON-RPC | modern, with an error for the line             |
 * | a blank line; a line above the line limit     | none: skipped; dropped without a response      |
 * | the end of the input before a request         | none: nothing is written                       |
 *
 * One reader frames the input; the path gets the first line and every later
 * frame from it, so two messages in one chunk both arrive.
 *
 * @module
 */

import type { ByteInput } from "../jsonrpc/byte_io.ts";
import { type Frame, readFrames } from "../jsonrpc/framer.ts";
import { type Json, type RequestId } from "../jsonrpc/message.ts";
import { classify, parseLine } from "../jsonrpc/parse.ts";
import { MessageWriter } from "../jsonrpc/writer.ts";
import { connectMemoryLink, type MemoryLink, type ServerFactory } from "../upstream/memory.ts";
import { VERSION } from "../version.ts";
import { ModernPath } from "./embed_modern.ts";
import { BridgeError } from "../errors/errors.ts";
import { Frontend } from "../frontend/frontend.ts";
import type { Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import type { Profile } from "../settings/profile.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/**
 * What the embedded bridge does with a server/discover before the first other request.
 */
export type Discover = "answer" | "refuse";

/** Options of {@linkcode serveStdioAuto}. */
export interface EmbedOptions {
  readonly profile: Profile;
  /** `answer`: the server answers it; `refuse`: -32601, so a client of both revisions sends initialize. */
  readonly discover: Discover;
  /** The fallback server name; undefined: the name of the server. */
  readonly name?: string | undefined;
  readonly limits: Limits;
  readonly log: Logger;
  readonly input: ByteInput;
  readonly output: WritableStream<Uint8Array>;
  /** Close the output at the end (a stream of the caller); else release it (stdout). */
  readonly closeOutput: boolean;
  /** The tools that the client neither sees nor calls, on both paths. */
  readonly tools?: ToolFilter | undefined;
}

/**
 * One writer on the output, shared in turn: the answers before a path, then
 * the path. Each part gets a stream of its own that writes through.
 */
class SharedOutput {
  readonly #sink: WritableStreamDefaultWriter<Uint8Array>;
  #last: Promise<void> = Promise.resolve();

  constructor(output: WritableStream<Uint8Array>) {
    this.#sink = output.getWriter();
  }

  /** A stream for one part; its close leaves the output open. */
  part(): WritableStream<Uint8Array> {
    return new WritableStream<Uint8Array>({
      write: (chunk) => this.#last = this.#sink.write(chunk),
    });
  }

  async finish(close: boolean): Promise<void> {
    try {
      await this.#last;
      if (close) await this.#sink.close();
    } catch {
      // The client closed its end: nothing more can reach it.
    } finally {
      this.#sink.releaseLock();
    }
  }
}

/** A UTF-8 byte order mark at the start of the input is skipped, as JSON parsers do. */
function withoutBom(frame: Frame): Frame {
  if (frame.kind !== "line") return frame;
  const b = frame.bytes;
  const bom = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
  return bom ? { kind: "line", bytes: b.subarray(3) } : frame;
}

/** What reads the frames after the first line selected a path. */
interface Path {
  accept(frame: Frame): Promise<void> | undefined;
  shutdown(): Promise<void>;
}

/**
 * Serves one stdio connection with a fresh server of `factory`, and resolves
 * after the end of the input, when the path has stopped.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * import { serveStdioAuto } from "./embed.ts";
 * import { VSCODE_PROFILE } from "../vscode/profile.ts";
 * import { DEFAULT_LIMITS } from "../settings/limits.ts";
 * import { SILENT_LOGGER } from "../log.ts";
 * const client = new TransformStream<Uint8Array, Uint8Array>();
 * const answered = Promise.withResolvers<void>();
 * let text = "";
 * const output = new WritableStream<Uint8Array>({
 *   write: (chunk) => {
 *     text += new TextDecoder().decode(chunk);
 *     if (text.includes('"id":2')) answered.resolve();
 *   },
 * });
 * const serving = serveStdioAuto(() => new McpServer({ name: "demo", version: "1.0.0" }), {
 *   profile: VSCODE_PROFILE,
 *   discover: "refuse",
 *   limits: DEFAULT_LIMITS,
 *   log: SILENT_LOGGER,
 *   input: client.readable,
 *   output,
 *   closeOutput: true,
 * });
 * // A client of both revisions: server/discover is refused, then initialize
 * // selects the legacy path.
 * const params = {
 *   protocolVersion: "2025-11-25",
 *   capabilities: {},
 *   clientInfo: { name: "example", version: "1" },
 * };
 * const lines = [
 *   { jsonrpc: "2.0", id: 1, method: "server/discover" },
 *   { jsonrpc: "2.0", id: 2, method: "initialize", params },
 * ];
 * const send = client.writable.getWriter();
 * await send.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l) + "\n").join("")));
 * await answered.promise;
 * await send.close(); // the end of the input ends the connection
 * await serving;
 * const [refused, initialized] = text.trim().split("\n").map((line) => JSON.parse(line));
 * if (refused.error.code !== -32601 || initialized.result.serverInfo.name !== "demo") {
 *   throw new Error();
 * }
 * ```
 */
export async function serveStdioAuto(factory: ServerFactory, options: EmbedOptions): Promise<void> {
  const { limits, log, tools } = options;
  const shared = new SharedOutput(options.output);
  /** The answers of the discover rule before a path (refuse). */
  let early: MessageWriter | undefined;
  /** The modern path that answered a server/discover (answer), while no path is selected. */
  let probe: ModernPath | undefined;
  let path: Path | undefined;

  const closeEarly = async () => {
    await early?.close();
    early = undefined;
  };

  const modern = (): ModernPath =>
    probe ?? new ModernPath(factory, { limits, log, output: shared.part(), tools });

  const legacy = (): Frontend => {
    let link: MemoryLink | undefined;
    const fallback = {
      get name(): string {
        return options.name ?? link?.serverName ?? options.profile.name;
      },
      version: VERSION,
    };
    return new Frontend({
      profile: options.profile,
      limits,
      log,
      fallback,
      connect: async () => {
        link = await connectMemoryLink(factory, {
          onError: (error) => log.debug(`the server reported: ${error.message}`),
        });
        return link;
      },
      output: shared.part(),
      tools,
    });
  };

  const select = async (selected: Path, frame: Frame): Promise<void> => {
    await closeEarly();
    path = selected;
    await selected.accept(frame);
  };

  const refuse = (id: RequestId) => {
    early ??= new MessageWriter(shared.part());
    const error = BridgeError.of("method_not_found").toJSON();
    early.send({ jsonrpc: "2.0", id, error });
  };

  let atStart = true;
  const first = (frame: Frame): Promise<void> | undefined => {
    if (atStart) {
      atStart = false;
      frame = withoutBom(frame);
    }
    if (frame.kind === "too_long") {
      log.debug(`dropped a first line of ${frame.length} bytes, above the line limit`);
      return undefined;
    }
    const parsed = parseLine(frame.bytes, limits.max_depth);
    const message = parsed.ok ? classify(parsed.value as Json) : undefined;
    if (message?.kind === "request" && message.method === "initialize") {
      const stopProbe = probe?.shutdown();
      probe = undefined;
      return (stopProbe ?? Promise.resolve()).then(() => select(legacy(), frame));
    }
    if (message?.kind === "request" && message.method === "server/discover") {
      if (options.discover === "refuse") {
        refuse(message.id);
        return early?.hold();
      }
      probe = modern();
      return probe.accept(frame);
    }
    const selected = modern();
    probe = undefined;
    return select(selected, frame);
  };

  try {
    await readFrames(
      options.input,
      { maxLineBytes: limits.max_line_bytes },
      (frame) => path ? path.accept(frame) : first(frame),
    );
  } catch (error) {
    log.error(`the input failed: ${error instanceof Error ? error.name : "error"}`);
  }
  await (path ?? probe)?.shutdown();
  await closeEarly();
  await shared.finish(options.closeOutput);
}
