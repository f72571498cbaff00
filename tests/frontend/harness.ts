/** The front end in process, with small limits and a real upstream child. */

import { Frontend } from "../../lib/frontend/frontend.ts";
import type { Clock } from "../../lib/clock.ts";
import { DEFAULT_LIMITS, type Limits } from "../../lib/settings/limits.ts";
import { createLogger } from "../../lib/log.ts";
import { spawnStdioLink } from "../../lib/upstream/stdio.ts";
import { connectMemoryLink, type ServerFactory } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { LineSplitter } from "../process/helpers.ts";
import { within } from "../wait.ts";

type Obj = Record<string, unknown>;

/** How long `next` waits for a message: a message that never comes fails the test. */
const NEXT_TIMEOUT_MS = 5_000;

export const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

/** A running front end: write messages, read messages, end the input. */
export interface Harness {
  readonly frontend: Frontend;
  /** The log lines, at the debug level. */
  readonly logs: string[];
  send(message: unknown): Promise<void>;
  /** The next message; fails after `ms` (5 s by default) or at the end of the output. */
  next(ms?: number): Promise<Obj>;
  /** Messages until the response of `id`, which is the last. */
  untilId(id: unknown): Promise<Obj[]>;
  initialize(capabilities?: Obj): Promise<Obj>;
  call(id: string, name: string, args?: Obj): Promise<Obj[]>;
  /** Ends the input and gives the exit code. */
  close(): Promise<number>;
}

/**
 * Starts a front end with `limits` in front of the upstream `command`, or of
 * a fresh SDK v2 server of a factory over the memory link (no child process).
 * `clock` (the real one by default) times the listen stream.
 */
export function startFrontend(
  limits: Partial<Limits>,
  command: string[] | ServerFactory,
  clock?: Clock,
): Harness {
  const all = { ...DEFAULT_LIMITS, ...limits };
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const [program, ...args] = typeof command === "function" ? [] : command;
  const logs: string[] = [];
  const frontend = new Frontend({
    profile: VSCODE_PROFILE,
    limits: all,
    log: createLogger("t", "debug", (line) => logs.push(line)),
    fallback: { name: "t", version: "0" },
    connect: () =>
      typeof command === "function" ? connectMemoryLink(command) : spawnStdioLink({
        command: program!,
        args,
        maxLineBytes: all.max_line_bytes,
        stopGraceMs: 500,
      }),
    output: output.writable,
    ...(clock && { clock }),
  });
  const exit = frontend.run(input.readable);
  const writer = input.writable.getWriter();
  const lines = output.readable.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
    [
      Symbol.asyncIterator
    ]();
  const encoder = new TextEncoder();
  const harness: Harness = {
    frontend,
    logs,
    send: (message) => writer.write(encoder.encode(JSON.stringify(message) + "\n")),
    async next(ms = NEXT_TIMEOUT_MS) {
      const line = await within(lines.next(), ms, "message from the front end").catch((e) => {
        throw new Error(`${e.message}; the log:\n${logs.join("")}`);
      });
      if (line.done) throw new Error(`the output ended; the log:\n${logs.join("")}`);
      return JSON.parse(line.value);
    },
    async untilId(id) {
      const out: Obj[] = [];
      for (;;) {
        const message = await harness.next();
        out.push(message);
        if (message.id === id && !("method" in message)) return out;
      }
    },
    async initialize(capabilities = {}) {
      await harness.send({
        jsonrpc: "2.0",
        id: "i",
        method: "initialize",
        params: { ...INIT, capabilities },
      });
      return (await harness.untilId("i")).at(-1)!;
    },
    async call(id, name, args = {}) {
      await harness.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: args },
      });
      return await harness.untilId(id);
    },
    async close() {
      await writer.close();
      return await exit;
    },
  };
  return harness;
}
