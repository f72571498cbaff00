/**
 * The `_meta` keys that the upstream client writes and reads are those of
 * the SDK v2, the real peer of revision 2026-07-28: a key of ours that
 * differs from the SDK's would never be read by an upstream server.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/server";
import {
  ENVELOPE_KEYS,
  SERVER_INFO_KEY,
  SUBSCRIPTION_ID_KEY,
  UPSTREAM_PROTOCOL_VERSION,
} from "../../lib/upstream/envelope.ts";

Deno.test("envelope: the keys of the request envelope are the SDK v2's", () => {
  deepStrictEqual(ENVELOPE_KEYS, {
    protocolVersion: PROTOCOL_VERSION_META_KEY,
    clientInfo: CLIENT_INFO_META_KEY,
    clientCapabilities: CLIENT_CAPABILITIES_META_KEY,
    logLevel: LOG_LEVEL_META_KEY,
  });
});

Deno.test("envelope: the subscription id of a listen stream and the server information are the SDK v2's keys", () => {
  strictEqual(SUBSCRIPTION_ID_KEY, SUBSCRIPTION_ID_META_KEY);
  strictEqual(SERVER_INFO_KEY, SERVER_INFO_META_KEY);
});

Deno.test("envelope: the bridge speaks revision 2026-07-28 upstream (the spec's upstream revision)", () => {
  strictEqual(UPSTREAM_PROTOCOL_VERSION, "2026-07-28");
});
