/**
 * What a `Frontend` takes: its settings (the profile, the limits,
 * the upstream, the rules) and its face, the stdio lines or another channel
 * (a session of `serve` over HTTP).
 *
 * @module
 */

import type { Clock } from "../clock.ts";
import type { ByteOutput } from "../jsonrpc/byte_io.ts";
import type { Connect } from "../upstream/link.ts";
import type { Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import type { Profile } from "../settings/profile.ts";
import type { LegacyOptions } from "../legacy/auto.ts";
import type { Fallback } from "../translate/translate.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";
import type { ClientChannel } from "./channel.ts";

/**
 * Options of a `Frontend`: the upstream, the rules, and its face:
 * `output` (the stdio face: one line per message) or `channel` (another face,
 * such as a session of `serve` over HTTP).
 */
export type FrontendOptions =
  & FrontendSettings
  & ({ readonly output: ByteOutput } | { readonly channel: ClientChannel });

/** What a `Frontend` takes besides its face. */
export interface FrontendSettings {
  readonly profile: Profile;
  readonly limits: Limits;
  readonly log: Logger;
  /** serverInfo when the upstream server gives none. */
  readonly fallback: Fallback;
  /** Makes the upstream link; a rejection is spawn_failed or connect_failed. */
  readonly connect: Connect;
  /**
   * `--protocol auto` (LEGACY.md): how an upstream server of revision
   * 2025-11-25 is reached. Without it, only revision 2026-07-28.
   */
  readonly legacy?: Pick<LegacyOptions, "connect" | "ownLink">;
  /** The clock of the listen stream; the real one by default (a fake one in tests). */
  readonly clock?: Clock;
  /**
   * `--tool` and `--ignore-tool`: tools/list leaves out the hidden tools, and
   * a tools/call of one gets the bridge's error without going upstream.
   */
  readonly tools?: ToolFilter | undefined;
}
