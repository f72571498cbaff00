/**
 * The wiring of the bridge, loaded by `run.ts` only when a command line starts
 * it: the link to the upstream (a child on stdio, or the HTTP link of a URL,
 * and with `--protocol auto` the link of revision 2025-11-25), the front end
 * on stdin and stdout, and the signals.
 *
 * @module
 */

import { Frontend } from "../frontend/frontend.ts";
import type { FrontendSettings } from "../frontend/frontend_options.ts";
import { createLogger, type Logger } from "../log.ts";
import { legacyConnect } from "../legacy/wiring.ts";
import { connectRemote } from "../upstream/http_options.ts";
import { spawnStdioLink } from "../upstream/stdio.ts";
import type { TokenSource } from "../http/token_source.ts";
import { VERSION } from "../version.ts";
import { VSCODE_PROFILE } from "../vscode/profile.ts";
import type { RunCommand } from "./command_line.ts";
import type { CliIo } from "./run.ts";

const PROFILE = VSCODE_PROFILE;

/**
 * Runs the bridge of the command line `cli` on the pipes of `io` until the
 * end of stdin or a signal; resolves with the exit code.
 */
export async function runBridge(
  cli: RunCommand,
  io: CliIo,
  tokenSource: TokenSource | undefined,
): Promise<number> {
  const log = createLogger(PROFILE.name, cli.logLevel, io.stderr);
  const stdio = await io.stdio();
  const frontend = new Frontend({
    ...bridgeOptions(cli, { log, ...(tokenSource && { tokenSource }) }),
    // Plain reads and writes: no web stream stage (jsonrpc/byte_io.ts).
    output: stdio.output,
  });
  // SIGTERM and SIGINT end the session as the end of stdin does: the child stops too.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGTERM", "SIGINT"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  try {
    return await frontend.run(stdio.input, stop.signal);
  } finally {
    for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  }
}

/** What the wiring of {@linkcode bridgeOptions} takes besides the command line. */
export interface BridgeIo {
  readonly log: Logger;
  /** The sign-in of a URL upstream. */
  readonly tokenSource?: TokenSource;
}

/**
 * The settings of the front end for the command line `cli`, without its
 * face: the profile, the limits, the link to the upstream (a child on
 * stdio, or the HTTP link of a URL) and, with `--protocol auto`, the link of
 * revision 2025-11-25.
 */
export function bridgeOptions(cli: RunCommand, io: BridgeIo): FrontendSettings {
  const { command, args, limits, remote } = cli;
  const { log, tokenSource } = io;
  const warn = (message: string) => log.warn(message);
  const spawn = () =>
    spawnStdioLink({
      command,
      args,
      maxLineBytes: limits.max_line_bytes,
      stopGraceMs: limits.child_stop_grace_ms,
      maxBacklogBytes: limits.max_upstream_backlog_bytes,
      warn,
    });
  const debug = (message: string) => log.debug(message);
  const poolIdleMs = limits.http_pool_idle_ms;
  return {
    profile: PROFILE,
    limits,
    log,
    fallback: { name: cli.name, version: VERSION },
    connect: remote
      ? connectRemote(remote, { debug, warn, poolIdleMs, ...(tokenSource && { tokenSource }) })
      : spawn,
    ...(cli.protocol === "auto" && {
      legacy: legacyConnect(remote, spawn, {
        debug,
        warn,
        poolIdleMs,
        info: (message) => log.info(message),
        renew: {
          firstMs: limits.listen_backoff_ms,
          maxMs: limits.listen_max_backoff_ms,
          healthyMs: limits.listen_healthy_ms,
          initializeTimeoutMs: limits.discover_timeout_ms,
        },
        ...(tokenSource && { tokenSource }),
      }),
    }),
    ...(cli.tools && { tools: cli.tools }),
  };
}
