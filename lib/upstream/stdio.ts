/**
 * The stdio link: the upstream server is a child process that speaks
 * newline-delimited JSON-RPC on its stdin and stdout. The child starts once;
 * its stderr goes to the stderr of the bridge and never into an error.
 *
 * @module
 */

import { untilAborted } from "../jsonrpc/abortable.ts";
import { readFrames } from "../jsonrpc/framer.ts";
import { scanIdFromHead, scanIdFromTail } from "../jsonrpc/id_scan.ts";
import type { JsonObject, Message } from "../jsonrpc/message.ts";
import { decodeUpstream } from "./decode.ts";
import { MessageWriter, UnwrittenMessage } from "../jsonrpc/writer.ts";
import { UpstreamFailure } from "./failure.ts";
import { settlesWithin, stopChild } from "./child_stop.ts";
import {
  failureOfEnd,
  type FrameSink,
  type LinkEnd,
  type UpstreamFrame,
  type UpstreamLink,
} from "./link.ts";

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
  /**
   * How long the stdout of a child that stopped may stay quiet before the
   * link stops reading it: {@linkcode EXIT_QUIET_MS} by default (shorter in tests).
   */
  readonly exitQuietMs?: number;
  /**
   * The bytes that may wait for the child's stdin: a request that comes while
   * this many wait fails at once with `transport_failed` (the one that
   * crosses the bound still goes). Default: {@linkcode MAX_BACKLOG_BYTES}.
   */
  readonly maxBacklogBytes?: number;
  /** A warning line: the requests fail for the backlog, and when they stop failing. */
  readonly warn?: (message: string) => void;
}

/** What `send` gives for a message that nobody waits for. */
const SENT: Promise<void> = Promise.resolve();

/** The default of {@linkcode StdioLinkOptions.maxBacklogBytes}: 16 MiB. */
export const MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * `setpriv` of util-linux sets PR_SET_PDEATHSIG and then execs the command:
 * the child gets SIGTERM when the bridge dies, even by SIGKILL, and keeps
 * its pid, stdio and exit status. The processes that the child started get
 * no such signal (only the close of the link stops them, `child_stop.ts`).
 */
export const PDEATHSIG_WRAPPER: readonly string[] = ["setpriv", "--pdeathsig", "TERM", "--"];

/**
 * Parses one upstream line ({@linkcode decodeUpstream}: the nesting limit and
 * the skeleton of a large line); an invalid line keeps the id that a scan
 * finds in it, so it fails only its own request.
 */
export function toUpstreamFrame(bytes: Uint8Array): UpstreamFrame {
  const value = decodeUpstream(bytes);
  if (value) return { kind: "message", value };
  const head = scanIdFromHead(bytes);
  const scan = head.found ? head : scanIdFromTail(bytes);
  return { kind: "invalid", id: scan.found ? scan.id : null };
}

/** True for a request of the upstream server (it has a method and an id). */
function isRequest(frame: UpstreamFrame): boolean {
  return frame.kind === "message" && isRequestMessage(frame.value);
}

/** True for a request (a method and an id), not a notification or a response. */
function isRequestMessage(message: Message | JsonObject): boolean {
  return "method" in message && typeof message.method === "string" && Object.hasOwn(message, "id");
}

/**
 * How long the stdout of a child that stopped may stay quiet before the link
 * stops reading it. The child's own end of the pipe closed with it, and what
 * it wrote is read at once; a process that it started can keep the pipe open
 * for ever.
 */
export const EXIT_QUIET_MS = 250;

/**
 * The longest time the reader handles frames without a turn of the event
 * loop: reads of a full pipe complete at once, and a flood of the child
 * would otherwise starve the timers (the time limits) and the other reader.
 */
const YIELD_MS = 20;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

class StdioLink implements UpstreamLink {
  readonly isRemote = false;
  readonly #maxLineBytes: number;
  readonly ended: Promise<LinkEnd>;
  #child: Deno.ChildProcess;
  #writer: MessageWriter;
  #stopGraceMs: number;
  readonly #exitQuietMs: number;
  #closing: Promise<void> | undefined;

  #sawOutput = false;
  /** Stops the read of stdout when the child stopped and its output is quiet. */
  #stopReading = new AbortController();
  #lastFrameAt = 0;
  /** True while the sink of the frames holds the reader (back pressure). */
  #held = false;
  #readDone = false;
  /** Settles when `read` has given its last frame. */
  readonly #readEnd = Promise.withResolvers<void>();
  readonly #maxBacklogBytes: number;
  readonly #warn: ((message: string) => void) | undefined;
  /** Requests fail for the backlog (see {@linkcode #backlogRefusal}). */
  #refusing = false;
  /**
   * Set at the first write that the child's stdin refused: the failure of
   * that write and of every later one (see {@linkcode #whyUnwritable}).
   */
  #unwritable: Promise<UpstreamFailure> | undefined;
  readonly #sendEnded = Promise.withResolvers<UpstreamFailure>();
  /** Resolves when the child closed its stdin and runs on (see {@linkcode UpstreamLink.sendEnded}). */
  readonly sendEnded: Promise<UpstreamFailure> = this.#sendEnded.promise;
  /** The failure of each send after the close (see {@linkcode #closed}). */
  #closedFailure: UpstreamFailure | undefined;

  /** `wrapped`: started through the wrapper, whose codes 126 and 127 mean "cannot execute". */
  constructor(child: Deno.ChildProcess, options: StdioLinkOptions, wrapped: boolean) {
    this.#child = child;
    this.#stopGraceMs = options.stopGraceMs;
    this.#exitQuietMs = options.exitQuietMs ?? EXIT_QUIET_MS;
    this.#maxLineBytes = options.maxLineBytes;
    this.#maxBacklogBytes = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
    this.#warn = options.warn;
    // The child's stdin is a Deno resource: done with each chunk when its write resolves.
    this.#writer = new MessageWriter(child.stdin, { reuseBuffer: true });
    this.ended = child.status.then(async (status): Promise<LinkEnd> => {
      const code = status.signal ? null : status.code;
      if (wrapped && (code === 126 || code === 127)) {
        // What the command wrote can still be in the pipe: a line of it means it ran.
        await settlesWithin(this.#readEnd.promise, this.#exitQuietMs * 2);
        if (!this.#sawOutput) {
          return { kind: "failed", failure: new UpstreamFailure("spawn_failed") };
        }
      }
      return { kind: "exited", code };
    });
    child.status.then(() => this.#stopReadingWhenQuiet());
  }

  async #stopReadingWhenQuiet(): Promise<void> {
    // Quiet since the exit too: the last lines of a child can still be in the pipe.
    const exitedAt = Date.now();
    for (;;) {
      if (this.#readDone) return;
      const quiet = Date.now() - Math.max(this.#lastFrameAt, exitedAt);
      if (!this.#held && quiet >= this.#exitQuietMs) break;
      await delay(this.#held ? this.#exitQuietMs : this.#exitQuietMs - quiet);
    }
    this.#stopReading.abort();
  }

  async read(onFrame: FrameSink): Promise<void> {
    let turn = Date.now();
    const sink = (frame: UpstreamFrame) => {
      const now = this.#lastFrameAt = Date.now();
      // A request of the child (a ping) gets its answer on stdin: while the
      // writer is above its high water, a child that floods requests without
      // reading its stdin waits for the reader, instead of filling the memory
      // with answers. Responses are never held this way: a child that blocks
      // on a full stdout before it reads its stdin would never be read again.
      let hold = onFrame(frame) ?? (isRequest(frame) ? this.#writer.hold() : undefined);
      if (!hold && now - turn >= YIELD_MS) hold = delay(0);
      if (hold) turn = now;
      if (!hold) return;
      this.#held = true;
      // A hold ends with the read: a client that stopped reading cannot hold the close.
      return untilAborted(hold, this.#stopReading.signal, undefined).finally(() => {
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
      this.#readEnd.resolve();
    }
  }

  /**
   * Queues one message for the child's stdin, in the order of the calls. A
   * request fails at once while {@linkcode StdioLinkOptions.maxBacklogBytes}
   * wait for a child that does not read them: it cannot be written now, and
   * the bridge does not hold it (and the parameters that its caller keeps
   * for it) for a child that may never read again.
   */
  send(message: Message): Promise<void> {
    if (this.#closing) return Promise.reject(this.#closed());
    // Each failure is thrown in a callback, never returned from it as a
    // rejected promise: Deno tracks a rejection until its handler comes, and
    // thousands of them at once (the queue of a child that stopped reading)
    // cost it seconds.
    if (this.#unwritable) {
      return this.#unwritable.then((failure) => {
        throw failure;
      });
    }
    if (!isRequestMessage(message)) {
      // A notification or an answer: nobody waits for its write, and a flood
      // of the child's pings costs no promise per answer.
      this.#writer.send(message);
      return SENT;
    }
    const refusal = this.#backlogRefusal();
    if (refusal) return Promise.reject(refusal);
    return this.#writer.write(message).catch((error) => this.#writeFailed(error));
  }

  /**
   * The failure of a request above the backlog, or undefined under it. A
   * warning line says when the refusals start, and another when the child
   * reads again.
   */
  #backlogRefusal(): UpstreamFailure | undefined {
    const waiting = this.#writer.backlog;
    if (waiting < this.#maxBacklogBytes) {
      if (this.#refusing) {
        this.#refusing = false;
        this.#warn?.("the upstream server reads its stdin again: requests go out again");
      }
      return undefined;
    }
    if (!this.#refusing) {
      this.#refusing = true;
      this.#warn?.(
        `the upstream server does not read its stdin: ${waiting} bytes wait for it, ` +
          `each request fails until it reads (limit: ${this.#maxBacklogBytes} bytes)`,
      );
    }
    return new UpstreamFailure("transport_failed", {
      detail: `the upstream server does not read its stdin, limit: ${this.#maxBacklogBytes} bytes`,
    });
  }

  /**
   * The failure of a send after the close: one for the link, which each of
   * the requests that still wait for a stopping child gets.
   */
  #closed(): UpstreamFailure {
    return this.#closedFailure ??= new UpstreamFailure("closed");
  }

  /** The failure of a write that the writer refused, for the sender (thrown, see `send`). */
  #writeFailed(error: unknown): Promise<never> {
    if (error instanceof UpstreamFailure) throw error;
    if (!(error instanceof UnwrittenMessage) || error.reason === "unserializable") {
      // This message alone: the link goes on.
      throw new UpstreamFailure("transport_failed", { detail: "the message cannot be written" });
    }
    if (this.#closing || error.reason === "closed") throw this.#closed();
    this.#unwritable ??= this.#whyUnwritable(error);
    return this.#unwritable.then((failure) => {
      throw failure;
    });
  }

  /**
   * The child's stdin refused a write: its reader is gone, and nothing more
   * can be sent. A child that exits closes its stdin with it, and the
   * requests sent after its exit get the failure of its end; a child that
   * still runs after the quiet time closed its stdin (its reader died), and
   * the link can no longer send (`closed`, or `transport_failed` for a write
   * that failed otherwise). What was sent before may still be answered: the
   * read goes on.
   */
  async #whyUnwritable(error: UnwrittenMessage): Promise<UpstreamFailure> {
    if (await settlesWithin(this.#child.status, this.#exitQuietMs)) {
      // As its end says: exited, or spawn_failed for a command that setpriv could not run.
      return failureOfEnd(await this.ended);
    }
    const failure = error.cause instanceof Deno.errors.BrokenPipe
      ? new UpstreamFailure("closed")
      : new UpstreamFailure("transport_failed");
    this.#sendEnded.resolve(failure);
    return failure;
  }

  close(): Promise<void> {
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    // What the child still writes belongs to no request: a flood of it must
    // not hold the close (or starve the timers of its deadlines), and a
    // process that the child started must not keep the read open.
    this.#stopReading.abort();
    await stopChild({
      child: this.#child,
      stdinClosed: this.#writer.close(),
      graceMs: this.#stopGraceMs,
    });
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
