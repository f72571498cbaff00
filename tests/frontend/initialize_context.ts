/**
 * The context of the first initialize (`initializeUpstream`) that the
 * front end builds, for the tests of the initialize step and of the ready
 * state: the VS Code profile, the default limits, a client with no
 * capabilities, and a writer that drops what it gets unless `extra` says.
 *
 * @module
 */

import type { InitializeContext } from "../../lib/frontend/initialize_step.ts";
import { PendingTable } from "../../lib/input/pending.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";

/** The context of the first initialize over `connect`, with `extra` on top. */
export function initializeContext(
  connect: Connect,
  extra: Partial<InitializeContext> = {},
): InitializeContext {
  return {
    profile: VSCODE_PROFILE,
    limits: DEFAULT_LIMITS,
    log: SILENT_LOGGER,
    fallback: { name: "fallback", version: "0.0.0" },
    connect,
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
    signal: new AbortController().signal,
    pending: new PendingTable(VSCODE_PROFILE.request_id_prefix),
    write: () => {},
    hold: () => undefined,
    nextElicitationId: () => "e-1",
    logLevel: () => undefined,
    ...extra,
  };
}
