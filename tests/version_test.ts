/**
 * The version of the program (`--version`, the fallback server version) is
 * the version of deno.json, which the release publishes.
 */

import { ok, strictEqual } from "node:assert/strict";
import { VERSION } from "../lib/version.ts";

Deno.test("version: lib/version.ts has the version of deno.json, a semantic version", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  strictEqual(VERSION, config.version);
  ok(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(VERSION), VERSION);
});
