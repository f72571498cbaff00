/**
 * `mcp-bridge-vscode serve`: the bridge with its face of revision 2025-11-25
 * on Streamable HTTP instead of stdin and stdout, for every window of VS Code
 * (and every client) at once. Each upstream server of the command line is an
 * MCP endpoint; each client session a front end of its own; the upstream of
 * revision 2026-07-28 of an endpoint is shared by all its sessions
 * (`upstream/shared_upstream.ts`), an older one (`--protocol auto`) gets a
 * link of its own per session.
 *
 * SIGTERM (or SIGINT) stops it: new sessions, requests and streams get 503,
 * the requests in flight get `--shutdown-grace` to finish (the answers and
 * cancellations of their clients still come in), then every session ends as
 * a stdio bridge ends at the end of stdin, and the upstream servers stop as
 * today.
 *
 * @module
 */

import { bridgeOptions } from "../cli/bridge.ts";
import type { CliIo } from "../cli/run.ts";
import { createLogger, labeledLogger } from "../log.ts";
import type { TokenSource } from "../http/token_source.ts";
import { SharedUpstream } from "../upstream/shared_upstream.ts";
import { VSCODE_PROFILE } from "../vscode/profile.ts";
import { type Endpoint, HttpFace } from "./face.ts";
import { tokenDigest } from "./guard.ts";
import { Listener } from "./listener.ts";
import type { ServeCommand, ServedUpstream } from "./serve_command.ts";

const PROFILE = VSCODE_PROFILE;

/** What `serve` takes besides its command line. */
export interface ServeIo extends Pick<CliIo, "stderr"> {
  /** The sign-in of each URL upstream that signs in, by its path. */
  readonly tokenSources?: ReadonlyMap<string, TokenSource>;
  /** Stops `serve` as SIGTERM does (tests); the signals of the process do too. */
  readonly signal?: AbortSignal;
  /** Called once it listens, with its port (tests). */
  readonly onListen?: (port: number) => void;
}

/** The endpoint of one upstream, and its shared link. */
function endpointOf(
  upstream: ServedUpstream,
  command: ServeCommand,
  io: ServeIo,
): { endpoint: Endpoint; shared: SharedUpstream } {
  const { cli } = upstream;
  const base = createLogger(PROFILE.name, cli.logLevel, io.stderr);
  const log = upstream.name === undefined ? base : labeledLogger(base, upstream.name);
  const tokenSource = io.tokenSources?.get(upstream.path);
  const own = bridgeOptions(cli, { log, ...(tokenSource && { tokenSource }) });
  const shared = new SharedUpstream({
    connect: own.connect,
    graceMs: command.upstreamGraceMs,
    log,
  });
  const endpoint: Endpoint = {
    path: upstream.path,
    name: upstream.name ?? "",
    limits: cli.limits,
    log,
    settings: (sessionLog) => {
      const settings = bridgeOptions(cli, { log: sessionLog, ...(tokenSource && { tokenSource }) });
      return {
        ...settings,
        // A 2026-07-28 upstream: one link for every session of this endpoint.
        connect: shared.connect,
        // An older one (--protocol auto): a link of its own per session.
        ...(settings.legacy && { legacy: { ...settings.legacy, ownLink: true } }),
      };
    },
  };
  return { endpoint, shared };
}

/** The address of a URL: an IPv6 address in brackets. */
function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Runs `serve` until SIGTERM or SIGINT; resolves with the exit code. */
export async function runServe(command: ServeCommand, io: ServeIo): Promise<number> {
  const log = createLogger(PROFILE.name, command.logLevel, io.stderr);
  const built = command.upstreams.map((upstream) => endpointOf(upstream, command, io));
  const digest = command.token ? await tokenDigest(command.token.value) : undefined;
  let port = command.port;
  const face = new HttpFace({
    endpoints: built.map((b) => b.endpoint),
    profile: PROFILE,
    guard: () => ({
      host: command.host,
      port,
      allowedOrigins: command.allowedOrigins,
      ...(digest && { tokenDigest: digest }),
    }),
    maxSessions: command.maxSessions,
    sessionIdleMs: command.sessionIdleMs,
    replica: command.replica,
    log,
  });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGTERM", "SIGINT"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  io.signal?.addEventListener("abort", onSignal, { once: true });
  let server: Listener;
  try {
    server = new Listener({
      hostname: command.host,
      port: command.port,
      handler: face.handle,
      onError: face.onError,
      log,
    });
  } catch (error) {
    for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
    const why = error instanceof Deno.errors.AddrInUse
      ? "the address is in use"
      : error instanceof Error
      ? error.name
      : "error";
    log.error(`cannot listen on ${urlHost(command.host)}:${command.port}: ${why}`);
    return 1;
  }
  port = server.port;
  const paths = command.upstreams.map((upstream) => upstream.path).join(", ");
  log.info(`listening on http://${urlHost(command.host)}:${port} (${paths})`);
  io.onListen?.(port);
  if (!stop.signal.aborted) {
    // An end of the accept loop for another reason than descriptors is not hidden: it throws.
    await Promise.race([
      server.failed,
      new Promise<void>((resolve) =>
        stop.signal.addEventListener("abort", () => resolve(), { once: true })
      ),
    ]);
  }
  log.info(`stopping: the requests in flight get ${command.shutdownGraceMs / 1000} s`);
  face.stop();
  // Connections are taken during the drain: the answers of the clients to the input
  // requests of the requests in flight must come in (new work gets 503).
  await face.drain(command.shutdownGraceMs);
  const closed = server.shutdown();
  await face.endAll();
  await Promise.allSettled(built.map((b) => b.shared.close()));
  // A client that reads nothing cannot hold the end for ever.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    closed,
    new Promise<void>((resolve) => timer = setTimeout(resolve, command.shutdownGraceMs)),
  ]);
  clearTimeout(timer);
  // A second signal during the stop changes nothing: the listeners go only now.
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  return 0;
}
