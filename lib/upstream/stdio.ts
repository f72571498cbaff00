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
import { UpstreamFailure } from "./failure.ts";
import type { FrameSink, LinkEnd, UpstreamFrame, UpstreamLink } from "./link.ts";

/** Options of {@linkcode spawnStdioLink}. */
export interface StdioLinkOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The line limit of the child's stdout. */
  readonly maxLineBytes: number;
  /** The time the child gets after its stdin closes, and again after SIGTERM. */
  readonly stopGraceMs: number;
  /**
   * On Linux, the command that makes the child get SIGTERM when the bridge
   * dies (`setpriv --pdeathsig TERM`, util-linux). Null: start the command as
   * it is. Default: {@linkcode PDEATHSIG_WRAPPER} on Linux.
   */
  readonly deathSignalWrapper?: readonly string[] | null;
}

/**
 * `setpriv` of util-linux sets PR_SET_PDEATHSIG and then execs the command:
 * the child gets SIGTERM when the bridge dies, even by SIGKILL, and keeps
 * its pid, stdio and exit status. A process group would not help: nobody
 * signals the group of a bridge that was SIGKILLed.
 */
export const PDEATHSIG_WRAPPER: readonly string[] = ["setpriv", "--pdeathsig", "TERM", "--"];

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

/**
 * How long the stdout of a child that stopped may stay quiet before the link
 * stops reading it. The child's own end of the pipe closed with it, and what
 * it wrote is read at once; a process that it started can keep the pipe open
 * for ever.
 */
const EXIT_QUIET_MS = 250;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class StdioLink implements UpstreamLink {
  readonly isRemote = false;
  readonly #maxLineBytes: number;
  readonly ended: Promise<LinkEnd>;
  #child: Deno.ChildProcess;
  #writer: MessageWriter;
  #stopGraceMs: number;
  #closing: Promise<void> | undefined;

  #sawOutput = false;
  /** Stops the read of stdout when the child stopped and its output is quiet. */
  #stopReading = new AbortController();
  #lastFrameAt = 0;
  /** True while the sink of the frames holds the reader (back pressure). */
  #held = false;
  #readDone = false;

  /** `wrapped`: started through the wrapper, whose codes 126 and 127 mean "cannot execute". */
  constructor(child: Deno.ChildProcess, options: StdioLinkOptions, wrapped: boolean) {
    this.#child = child;
    this.#stopGraceMs = options.stopGraceMs;
    this.#maxLineBytes = options.maxLineBytes;
    this.#writer = new MessageWriter(child.stdin);
    this.ended = child.status.then((status): LinkEnd => {
      const code = status.signal ? null : status.code;
      if (wrapped && !this.#sawOutput && (code === 126 || code === 127)) {
        return { kind: "failed", failure: new UpstreamFailure("spawn_failed") };
      }
      return { kind: "exited", code };
    });
    child.status.then(() => this.#stopReadingWhenQuiet());
  }

  async #stopReadingWhenQuiet(): Promise<void> {
    for (;;) {
      if (this.#readDone) return;
      const quiet = Date.now() - this.#lastFrameAt;
      if (!this.#held && quiet >= EXIT_QUIET_MS) break;
      await delay(this.#held ? EXIT_QUIET_MS : EXIT_QUIET_MS - quiet);
    }
    this.#stopReading.abort();
  }

  async read(onFrame: FrameSink): Promise<void> {
    const sink = (frame: UpstreamFrame) => {
      this.#lastFrameAt = Date.now();
      const hold = onFrame(frame);
      if (!hold) return;
      this.#held = true;
      return hold.finally(() => {
        this.#held = false;
        this.#lastFrameAt = Date.now();
      });
    };
    try {
      await readFrames(this.#child.stdout, { maxLineBytes: this.#maxLineBytes }, (frame) => {
        this.#sawOutput = true;
        if (frame.kind === "line") return sink(toUpstreamFrame(frame.bytes));
        const head = scanIdFromHead(frame.head);
        const scan = head.found ? head : scanIdFromTail(frame.tail);
        return sink({ kind: "invalid", id: scan.found ? scan.id : null });
      }, this.#stopReading.signal);
    } finally {
      this.#readDone = true;
    }
  }

  send(message: Message): Promise<void> {
    if (this.#closing) return Promise.reject(new UpstreamFailure("closed"));
    // A child that stops reading its stdin holds the sender, not the memory.
    const hold = this.#writer.hold();
    const written = this.#writer.write(message);
    return hold ? hold.then(() => written) : written;
  }

  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    // A child that does not read its stdin never takes the last write: the
    // close of stdin has the same deadline as each later step.
    const closed = this.#writer.close();
    await settlesWithin(Promise.all([closed, this.#child.status]), this.#stopGraceMs);
    if (await settlesWithin(this.#child.status, 0)) return;
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
 * Starts the upstream command once. Rejects with the failure `spawn_failed`
 * when the command cannot start; the failure names no path and no output of
 * the child.
 */
export function spawnStdioLink(options: StdioLinkOptions): Promise<UpstreamLink> {
  const wrapper = options.deathSignalWrapper === undefined
    ? (Deno.build.os === "linux" ? PDEATHSIG_WRAPPER : null)
    : options.deathSignalWrapper;
  const spawn = (argv: readonly string[]) =>
    new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
  const argv = [options.command, ...options.args];
  try {
    if (wrapper) {
      try {
        return Promise.resolve(new StdioLink(spawn([...wrapper, ...argv]), options, true));
      } catch (error) {
        // No setpriv on this host: start the command without the wrapper.
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    return Promise.resolve(new StdioLink(spawn(argv), options, false));
  } catch {
    return Promise.reject(new UpstreamFailure("spawn_failed"));
  }
}
