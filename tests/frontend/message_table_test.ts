/** The spec's message table as data: a row for every kind of message, a column for every state. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  NOTIFICATION_TABLE,
  notificationKind,
  REQUEST_TABLE,
  requestKind,
  STATES,
} from "../../lib/frontend/message_table.ts";

Deno.test("message table: every state has a row for every kind, as the spec's table says", () => {
  for (const state of STATES) {
    strictEqual(REQUEST_TABLE.ping[state], "pong");
    strictEqual(REQUEST_TABLE["server/discover"][state], "method_not_found");
    strictEqual(NOTIFICATION_TABLE["notifications/cancelled"][state], "cancel");
    strictEqual(NOTIFICATION_TABLE.other[state], "debug");
    if (state === "passthrough") continue;
    strictEqual(REQUEST_TABLE["logging/setLevel"][state], "set_level");
    strictEqual(NOTIFICATION_TABLE["notifications/roots/list_changed"][state], "ignore");
    strictEqual(NOTIFICATION_TABLE["notifications/progress"][state], "debug");
  }
  deepStrictEqual(REQUEST_TABLE.initialize, {
    awaiting_initialize: "initialize",
    initializing: "already_initialized",
    ready: "already_initialized",
    passthrough: "already_initialized",
    closing: "closing",
  });
  for (const kind of ["forwarded", "subscription", "unknown"] as const) {
    strictEqual(REQUEST_TABLE[kind].awaiting_initialize, "not_ready");
    strictEqual(REQUEST_TABLE[kind].initializing, "not_ready");
    strictEqual(REQUEST_TABLE[kind].closing, "closing");
  }
  strictEqual(REQUEST_TABLE.forwarded.ready, "forward");
  strictEqual(REQUEST_TABLE.subscription.ready, "subscription");
  strictEqual(REQUEST_TABLE.unknown.ready, "method_not_found");
  strictEqual(NOTIFICATION_TABLE["notifications/initialized"].ready, "initialized");
  strictEqual(NOTIFICATION_TABLE["notifications/initialized"].initializing, "ignore");
});

Deno.test("message table: the pass-through (LEGACY.md) sends the client's messages upstream", () => {
  // setLevel, subscriptions and unknown methods go to the upstream server of 2025-11-25.
  for (const kind of ["logging/setLevel", "forwarded", "subscription", "unknown"] as const) {
    strictEqual(REQUEST_TABLE[kind].passthrough, "pass");
  }
  strictEqual(REQUEST_TABLE.ping.passthrough, "pong");
  // initialized, roots/list_changed and progress go upstream; a cancel cancels the flight.
  for (
    const kind of [
      "notifications/initialized",
      "notifications/roots/list_changed",
      "notifications/progress",
    ] as const
  ) {
    strictEqual(NOTIFICATION_TABLE[kind].passthrough, "pass");
  }
  strictEqual(NOTIFICATION_TABLE["notifications/cancelled"].passthrough, "cancel");
});

Deno.test("message table: methods find their rows", () => {
  deepStrictEqual(
    ["tools/call", "completion/complete", "resources/subscribe", "resources/unsubscribe", "x/y"]
      .map(requestKind),
    ["forwarded", "forwarded", "subscription", "subscription", "unknown"],
  );
  strictEqual(requestKind("initialize"), "initialize");
  strictEqual(notificationKind("notifications/initialized"), "notifications/initialized");
  strictEqual(notificationKind("notifications/progress"), "notifications/progress");
  strictEqual(notificationKind("notifications/message"), "other");
});
