/**
 * The first initialize of the front end, from the client's params to the
 * ready data and the initialize result: the start of the upstream with
 * server/discover (`start/start.ts`), and with `--protocol auto` the pass-through
 * of an older upstream server (`lib/legacy/`). The front end keeps the
 * state transitions; this module makes what the ready state holds.
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import type { Json, JsonObject } from "../jsonrpc/message.ts";
import type { SendToClient } from "./channel.ts";
import type { Connect } from "../upstream/link.ts";
import type { LegacyOptions } from "../legacy/auto.ts";
import type { PassThrough } from "../legacy/passthrough.ts";
import type { BridgeError } from "../errors/errors.ts";
import { mapUpstreamFailure } from "../errors/failures.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { declaredOf } from "../input/input_checks.ts";
import type { Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import { type LoggingLevel, logNotificationFor } from "./client_log_level.ts";
import type { PendingTable } from "../input/pending.ts";
import type { Profile } from "../settings/profile.ts";
import type { Ready } from "./ready.ts";
import { startUpstream } from "../start/start.ts";
import { type Fallback, initializeResult } from "../translate/translate.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/** What the first initialize needs of the front end. */
export interface InitializeContext {
  readonly profile: Profile;
  readonly limits: Limits;
  readonly log: Logger;
  readonly fallback: Fallback;
  readonly connect: Connect;
  /** `--protocol auto`: how an older upstream server is reached. */
  readonly legacy?: Pick<LegacyOptions, "connect" | "ownLink"> | undefined;
  /** The valid params of the client's initialize. */
  readonly params: JsonObject;
  readonly signal: AbortSignal;
  readonly pending: PendingTable;
  readonly write: SendToClient;
  readonly hold: () => Promise<void> | undefined;
  readonly nextElicitationId: () => string;
  /** The level of logging/setLevel (the log messages of a 2026-07-28 upstream server). */
  readonly logLevel: () => LoggingLevel | undefined;
  /** The clock of the listen stream; the real one by default. */
  readonly clock?: Clock | undefined;
  /** `--tool` and `--ignore-tool`: the tools that tools/list leaves out. */
  readonly tools?: ToolFilter | undefined;
}

/** How the first initialize ended. On a failure or a cancel, the upstream is already stopping. */
export type Initialized =
  /** The ready data (a pass-through for an older upstream) and the initialize result. */
  | { readonly kind: "ready"; readonly ready: Ready | PassThrough; readonly result: Json }
  | { readonly kind: "failed"; readonly error: BridgeError; readonly stopped: Promise<void> }
  | { readonly kind: "canceled"; readonly stopped: Promise<void> };

/** The modules of `--protocol auto`: the fallback, the pass-through, the older initialize result. */
async function loadLegacy() {
  const [auto, passthrough, initialize] = await Promise.all([
    import("../legacy/auto.ts"),
    import("../legacy/passthrough.ts"),
    import("../legacy/initialize.ts"),
  ]);
  return {
    legacyFallback: auto.legacyFallback,
    PassThrough: passthrough.PassThrough,
    legacyInitializeResult: initialize.legacyInitializeResult,
  };
}

/**
 * A part of the bridge that did not load (`import()`): this initialize fails
 * as a start that failed does, with one log line, never a crash.
 */
function cannotLoad(log: Logger, part: string, stopped: Promise<void>): Initialized {
  log.error(`cannot load ${part}`);
  const error = mapUpstreamFailure(new UpstreamFailure("spawn_failed"), "initialize", "");
  return { kind: "failed", error, stopped };
}

/** Starts the upstream for the first initialize. Never throws. */
export async function initializeUpstream(ctx: InitializeContext): Promise<Initialized> {
  const { log, limits, profile, fallback, legacy, params, pending, write } = ctx;
  const { tools } = ctx;
  // The pass-through loads only with --protocol auto (`legacy`).
  let older: Awaited<ReturnType<typeof loadLegacy>> | undefined;
  try {
    older = legacy && await loadLegacy();
  } catch {
    return cannotLoad(log, "the pass-through of --protocol auto", Promise.resolve());
  }
  const passthrough = older &&
    new older.PassThrough({ limits, log, profile, pending, write, tools });
  const starting = startUpstream({
    connect: ctx.connect,
    clientInfo: params.clientInfo as JsonObject,
    capabilities: params.capabilities as JsonObject,
    discoverTimeoutMs: limits.discover_timeout_ms,
    signal: ctx.signal,
    log,
    // A log message of no known request (stdio): the client's own stream.
    onLogMessage: (message) => {
      const out = logNotificationFor(message, ctx.logLevel());
      if (out) write(out);
    },
    hold: ctx.hold,
    ...(legacy && older && passthrough && {
      fallback: older.legacyFallback({ ...legacy, passthrough, params }),
    }),
  });
  // What the ready state runs (the input rounds, the listen stream, the result
  // rules) loads while the upstream starts: the command is spawned first.
  const readyModule = import("./ready.ts").catch(() => undefined);
  const started = await starting;
  switch (started.kind) {
    case "failed":
    case "canceled":
      return started;
    case "legacy": {
      // Only the fallback of a pass-through gives this kind.
      const ready = passthrough!;
      const result = older!.legacyInitializeResult(started.initialize, fallback, ready.icons);
      return { kind: "ready", ready, result };
    }
    case "ready": {
      const { ReadySession } = (await readyModule) ?? {};
      if (!ReadySession) {
        return cannotLoad(log, "the ready state of the bridge", started.session.close());
      }
      const ready = new ReadySession({
        session: started.session,
        discover: started.discover,
        declared: declaredOf(params.capabilities),
        limits,
        log,
        profile,
        pending,
        write,
        nextElicitationId: ctx.nextElicitationId,
        logLevel: ctx.logLevel,
        clock: ctx.clock,
        tools,
      });
      const result = initializeResult(profile, started.discover, fallback, ready.icons);
      return { kind: "ready", ready, result };
    }
  }
}
