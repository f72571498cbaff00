/**
 * The `Mcp-Session-Id` of a session of `serve`: 192 random bits, after the
 * name of the replica when `--replica` gives one (`r1.<random>`), so that a
 * reverse proxy in front of several replicas sends every request of a
 * session to the replica that holds it: nginx reads the prefix with a `map`
 * (README, "Several replicas behind nginx"). The id is a secret of its
 * client (knowing it is enough to use the session where no token is asked),
 * so it never reaches a log line: the log names a session by its short
 * number.
 *
 * @module
 */

import { randomToken } from "../random_token.ts";

/** What a replica name may be: it stands before the dot of the session id. */
const REPLICA = /^[A-Za-z0-9]{1,32}$/;

/**
 * True for a valid `--replica` name: 1 to 32 letters and digits.
 *
 * @example
 * ```ts
 * import { isReplicaName } from "./session_id.ts";
 * if (!isReplicaName("r1") || isReplicaName("r.1") || isReplicaName("")) throw new Error();
 * ```
 */
export function isReplicaName(name: string): boolean {
  return REPLICA.test(name);
}

/**
 * A new session id: `<replica>.<random>` or `<random>` (base64url of 24
 * random bytes: visible ASCII only, as the transport asks).
 *
 * @example
 * ```ts
 * import { newSessionId, replicaOf } from "./session_id.ts";
 * const id = newSessionId("r2");
 * if (!/^r2\.[A-Za-z0-9_-]{32}$/.test(id) || replicaOf(id) !== "r2") throw new Error(id);
 * if (replicaOf(newSessionId()) !== undefined) throw new Error();
 * ```
 */
export function newSessionId(replica?: string): string {
  const random = randomToken(24);
  return replica === undefined ? random : `${replica}.${random}`;
}

/** The replica name at the start of a session id, if it has one. */
export function replicaOf(sessionId: string): string | undefined {
  const dot = sessionId.indexOf(".");
  return dot === -1 ? undefined : sessionId.slice(0, dot);
}
