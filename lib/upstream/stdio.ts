/**
 * The stdio link: the upstream server is a child process that speaks
 * newline-delimited JSON-RPC on its stdin and stdout. The child starts once;
 * its stderr goes to the stderr of the bridge and never into an error.
 *
 * @module
 */

import { readFrames } from "../jsonrpc/framer.ts";
import { LARGE_MESSAGE_BYTES, markLarge } from "../jsonrpc/large.ts";
import { scanIdFromHead, scanIdFromTail } from "../jsonrpc/id_scan.ts";
import { isObject, type Json, type Message } from "../jsonrpc/message.ts";
import { MessageWriter } from "../jsonrpc/writer.ts";
import type { LinkEnd, UpstreamFrame, UpstreamLink } from "./link.ts";

/** Options of {@linkcode spawnStdioLink}. */
export interface StdioLinkOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The line limit of the child's stdout. */
  readonly maxLineBytes: number;
  /** The time the child gets after its stdin closes, and again after SIGTERM. */
  readonly stopGraceMs: number;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Parses one upstream line; an invalid line keeps the id that a scan finds in it. */
function toUpstreamFrame(bytes: Uint8Array): UpstreamFrame {
  try {
    const value = JSON.parse(decoder.decode(bytes)) as Json;
    if (isObject(value)) {
      // A large result is written to the client in slices.
      if (bytes.length > LARGE_MESSAGE_BYTES) markLarge(value.result);
      return { kind: "message", value };
    }
  } catch {
    // Invalid UTF-8 or JSON, or nesting deeper than the parser allows.
  }
  const scan = scanIdFromHead(bytes);
  return { kind: "invalid", id: scan.found ? scan.id : null };
}

/** True when the promise settles within `ms`; the timer never outlives the race. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class StdioLink implements UpstreamLink {
  readonly isRemote = false;
  readonly #maxLineBytes: number;
  readonly ended: Promise<LinkEnd>;
  #child: Deno.ChildProcess;
  #writer: MessageWriter;
  #stopGraceMs: number;
  #closing: Promise<void> | undefined;

  constructor(child: Deno.ChildProcess, options: StdioLinkOptions) {
    this.#child = child;
    this.#stopGraceMs = options.stopGraceMs;
    this.#maxLineBytes = options.maxLineBytes;
    this.#writer = new MessageWriter(child.stdin);
    this.ended = child.status.then((status) => ({
      kind: "exited",
      code: status.signal ? null : status.code,
    }));
  }

  read(onFrame: (frame: UpstreamFrame) => void): Promise<void> {
    return readFrames(this.#child.stdout, { maxLineBytes: this.#maxLineBytes }, (frame) => {
      if (frame.kind === "line") {
        onFrame(toUpstreamFrame(frame.bytes));
        return;
      }
      const head = scanIdFromHead(frame.head);
      const scan = head.found ? head : scanIdFromTail(frame.tail);
      onFrame({ kind: "invalid", id: scan.found ? scan.id : null });
    });
  }

  send(message: Message): Promise<void> {
    if (this.#closing) return Promise.reject(new Error("the upstream link is closed"));
    return this.#writer.write(message);
  }

  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    await this.#writer.close();
    if (await settlesWithin(this.#child.status, this.#stopGraceMs)) return;
    try {
      this.#child.kill("SIGTERM");
    } catch {
      return; // it stopped in the meantime
    }
    if (await settlesWithin(this.#child.status, this.#stopGraceMs)) return;
    try {
      this.#child.kill("SIGKILL");
    } catch {
      return;
    }
    await this.#child.status;
  }
}

/**
 * Starts the upstream command once. Throws when the command cannot start;
 * the error names no path and no output of the child.
 */
export function spawnStdioLink(options: StdioLinkOptions): UpstreamLink {
  const child = new Deno.Command(options.command, {
    args: [...options.args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  return new StdioLink(child, options);
}
