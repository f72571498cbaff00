/**
 * The wiring of `--protocol auto`: for a command, the fallback starts the
 * command again (the same connect); for a URL, the link of revision
 * 2025-11-25 to that URL with the headers of `--header-env` and the token
 * of the sign-in.
 */

import { ok, strictEqual } from "node:assert/strict";
import { legacyConnect } from "../../lib/legacy/wiring.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import type { TokenSource } from "../../lib/http/token_source.ts";
import { waitFor } from "../wait.ts";
import { serveLegacy } from "../fixtures/legacy_http_server.ts";
import { INITIALIZE_REQUEST } from "../process/helpers.ts";

const spawn: Connect = () => Promise.reject(new Error("the command is not started here"));

Deno.test("legacyConnect: for a command, the command again", () => {
  strictEqual(legacyConnect(undefined, spawn).connect, spawn);
});

Deno.test("legacyConnect: for a URL, the 2025-11-25 link with the headers and the token of the source", async () => {
  await using server = serveLegacy();
  const source: TokenSource = {
    authorization: () => Promise.resolve("Bearer t0k3n"),
    challenge: () => Promise.resolve("refused"),
    setUrlPrompt: () => {},
    nextSignIn: () => Promise.resolve(),
  };
  const { connect } = legacyConnect(
    { url: new URL(server.url), headers: [["x-key", "k"]], maxResponseBytes: 1 << 20 },
    spawn,
    { tokenSource: source },
  );
  ok(connect !== spawn);
  const link = await connect();
  const frames: unknown[] = [];
  void link.read((frame) => void frames.push(frame));
  strictEqual(link.isRemote, true);
  // The link of the sign-in waits for the next sign-in of the source.
  ok(link.nextSignIn !== undefined);
  await link.send(INITIALIZE_REQUEST);
  await waitFor("the initialize result", () => frames.length === 1);
  const [post] = server.requests;
  strictEqual(post!.headers.get("x-key"), "k");
  strictEqual(post!.headers.get("authorization"), "Bearer t0k3n");
  await link.close();
});
