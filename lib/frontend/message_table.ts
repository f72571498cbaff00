/**
 * The spec's message table as data: what the front end does with each kind
 * of message of the client in each of its four states. The front end looks
 * an action up here and carries it out; no rule of the table lives in a
 * condition elsewhere.
 *
 * @module
 */

import { FORWARDED_METHODS } from "../translate/translate.ts";

/** The states of the front end. */
export const STATES = [
  "awaiting_initialize",
  "initializing",
  "ready",
  "passthrough",
  "closing",
] as const;

/**
 * A state of the front end. `passthrough` is the ready state of an upstream
 * server of revision 2025-11-25 (`--protocol auto`, LEGACY.md).
 */
export type StateName = typeof STATES[number];

/** The kinds of requests of the client that the table knows. */
export type RequestKind =
  | "ping"
  | "logging/setLevel"
  | "server/discover"
  | "initialize"
  | "forwarded"
  | "subscription"
  | "unknown";

/** What the front end does with a request. */
export type RequestAction =
  /** Answer `{}`. */
  | "pong"
  /** Keep the level and answer `{}`; params that are not valid give -32602. */
  | "set_level"
  /** -32601 method_not_found. */
  | "method_not_found"
  /** Start the upstream server (the first initialize). */
  | "initialize"
  /** -32600 already_initialized. */
  | "already_initialized"
  /** -32601 with the modern `_meta` (the protocolVersion key), else -32600 not_initialized. */
  | "not_ready"
  /** Send the request to the upstream server. */
  | "forward"
  /** Change the listen stream (resources/subscribe and resources/unsubscribe). */
  | "subscription"
  /** After the loss of the upstream: its error; after the end of the input: no response. */
  | "closing"
  /** Send the request as it is to the upstream server of revision 2025-11-25. */
  | "pass";

/** The kinds of notifications of the client that the table knows. */
export type NotificationKind =
  | "notifications/initialized"
  | "notifications/cancelled"
  | "notifications/roots/list_changed"
  | "notifications/progress"
  | "other";

/** What the front end does with a notification. */
export type NotificationAction =
  /** Open the listen stream one time, and let a later sign-in ask the client for a URL. */
  | "initialized"
  /** Cancel the request in flight with the requestId of the notification. */
  | "cancel"
  /** Nothing. */
  | "ignore"
  /** Nothing but a debug line. */
  | "debug"
  /** Send the notification to the upstream server of revision 2025-11-25. */
  | "pass";

type Row<A> = Readonly<Record<StateName, A>>;

const ALWAYS = <A>(action: A, passthrough: A = action): Row<A> => ({
  awaiting_initialize: action,
  initializing: action,
  ready: action,
  passthrough,
  closing: action,
});

/**
 * A forwarded request, or a method that the bridge does not know, before
 * ready: not_ready. The pass-through sends each of them upstream.
 */
const AFTER_READY = <A extends RequestAction>(ready: A): Row<RequestAction> => ({
  awaiting_initialize: "not_ready",
  initializing: "not_ready",
  ready,
  passthrough: "pass",
  closing: "closing",
});

/**
 * The rows of the message table for requests.
 */
export const REQUEST_TABLE: Readonly<Record<RequestKind, Row<RequestAction>>> = {
  "ping": ALWAYS("pong"),
  // The upstream server of the pass-through keeps the level and sends the log messages.
  "logging/setLevel": ALWAYS<RequestAction>("set_level", "pass"),
  "server/discover": ALWAYS("method_not_found"),
  "initialize": {
    awaiting_initialize: "initialize",
    initializing: "already_initialized",
    ready: "already_initialized",
    passthrough: "already_initialized",
    closing: "closing",
  },
  "forwarded": AFTER_READY("forward"),
  "subscription": AFTER_READY("subscription"),
  "unknown": AFTER_READY("method_not_found"),
};

/** The rows of the message table for notifications. */
export const NOTIFICATION_TABLE: Readonly<Record<NotificationKind, Row<NotificationAction>>> = {
  "notifications/initialized": {
    awaiting_initialize: "ignore",
    initializing: "ignore",
    ready: "initialized",
    passthrough: "pass",
    closing: "ignore",
  },
  // The pass-through cancels the request upstream under its upstream id.
  "notifications/cancelled": ALWAYS("cancel"),
  "notifications/roots/list_changed": ALWAYS<NotificationAction>("ignore", "pass"),
  // Progress of the client for a request of the upstream server (its own token).
  "notifications/progress": ALWAYS<NotificationAction>("debug", "pass"),
  "other": ALWAYS("debug"),
};

const NAMED_REQUESTS: ReadonlySet<string> = new Set([
  "ping",
  "logging/setLevel",
  "server/discover",
  "initialize",
]);

/** The row of a request method. */
export function requestKind(method: string): RequestKind {
  if (NAMED_REQUESTS.has(method)) return method as RequestKind;
  if (FORWARDED_METHODS.has(method)) return "forwarded";
  if (method === "resources/subscribe" || method === "resources/unsubscribe") {
    return "subscription";
  }
  return "unknown";
}

/** The row of a notification method. */
export function notificationKind(method: string): NotificationKind {
  return method === "notifications/initialized" || method === "notifications/cancelled" ||
      method === "notifications/roots/list_changed" || method === "notifications/progress"
    ? method
    : "other";
}
