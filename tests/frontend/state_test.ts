/**
 * The state of the front end: the first initialize gives `passthrough` for
 * an older upstream server (a PassThrough) and `ready` otherwise, and only
 * the ready states and `closing` hold the upstream connection.
 */

import { strictEqual } from "node:assert/strict";
import { PassThrough } from "../../lib/legacy/passthrough.ts";
import { PendingTable } from "../../lib/input/pending.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import type { Ready } from "../../lib/frontend/ready.ts";
import { connectionOf, readyState, type State } from "../../lib/frontend/state.ts";

const passThrough = () =>
  new PassThrough({
    limits: DEFAULT_LIMITS,
    log: SILENT_LOGGER,
    profile: VSCODE_PROFILE,
    pending: new PendingTable(VSCODE_PROFILE.request_id_prefix),
    write: () => {},
  });
/** The ready data of a 2026-07-28 upstream: anything that is not a PassThrough. */
const ready = () => ({ icons: "all" }) as unknown as Ready;

Deno.test("readyState: a PassThrough is the passthrough state, other ready data the ready state", () => {
  const legacy = passThrough();
  const modern = ready();
  const a = readyState(legacy);
  const b = readyState(modern);
  strictEqual(a.name, "passthrough");
  strictEqual(connectionOf(a), legacy);
  strictEqual(b.name, "ready");
  strictEqual(connectionOf(b), modern);
});

Deno.test("connectionOf: none before ready; closing keeps the connection it had, if any", () => {
  const modern = ready();
  const legacy = passThrough();
  const cases: [State, Ready | PassThrough | undefined][] = [
    [{ name: "awaiting_initialize" }, undefined],
    [{ name: "initializing" }, undefined],
    [{ name: "closing", ready: modern, lost: undefined }, modern],
    [{ name: "closing", ready: legacy, lost: undefined }, legacy],
    [{ name: "closing", ready: undefined, lost: undefined }, undefined],
  ];
  for (const [state, expected] of cases) strictEqual(connectionOf(state), expected, state.name);
});
