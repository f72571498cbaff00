/**
 * What the `--protocol auto` tests share: the raw server of revision
 * 2025-11-25 (tests/fixtures/legacy_raw_server.ts) as a child, and the
 * capabilities of a client that declares every kind of input, tasks too.
 *
 * @module
 */

import { DENO, ROOT } from "../process/helpers.ts";

/** The command of the raw server of revision 2025-11-25 in `mode`. */
export const LEGACY_RAW = (mode = "method_not_found"): string[] => [
  DENO,
  "run",
  "-A",
  `${ROOT}tests/fixtures/legacy_raw_server.ts`,
  mode,
];

/** A client that declares sampling, forms, roots and tasks. */
export const CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {} },
  roots: { listChanged: true },
  tasks: { requests: { tools: { call: {} } } },
};
