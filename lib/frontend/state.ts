/**
 * The state of the front end as one typed value: the name, which is a
 * column of the message table (`message_table.ts`), and what that state
 * holds. Only the ready states (`ready`, `passthrough`) and `closing` hold
 * the upstream connection.
 *
 * @module
 */

import type { BridgeError } from "../errors/errors.ts";
import type { PassThrough } from "../legacy/passthrough.ts";
import type { Ready } from "./ready.ts";

/**
 * The state of the front end. `closing` keeps the ready data for the
 * shutdown, and after the loss of the upstream the error of each later
 * request (none after the end of the input).
 */
export type State =
  | { readonly name: "awaiting_initialize" }
  | { readonly name: "initializing" }
  | { readonly name: "ready"; readonly ready: Ready }
  | { readonly name: "passthrough"; readonly ready: PassThrough }
  | {
    readonly name: "closing";
    readonly ready: Ready | PassThrough | undefined;
    readonly lost: BridgeError | undefined;
  };

/**
 * The state after the first initialize: `passthrough` for an upstream server
 * of revision 2025-11-25 (`--protocol auto`), else `ready`.
 */
export function readyState(ready: Ready | PassThrough): State {
  return isPassThrough(ready) ? { name: "passthrough", ready } : { name: "ready", ready };
}

/**
 * Whether the connection is the pass-through of an older upstream (its
 * module loads only with `--protocol auto`, so no `instanceof` here).
 */
export function isPassThrough(ready: Ready | PassThrough): ready is PassThrough {
  return "kind" in ready && ready.kind === "passthrough";
}

/** The upstream connection that a state holds, if any: none before the ready state. */
export function connectionOf(state: State): Ready | PassThrough | undefined {
  return state.name === "ready" || state.name === "passthrough" || state.name === "closing"
    ? state.ready
    : undefined;
}
