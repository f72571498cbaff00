import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createLogger, isLogLevel, LOG_LEVELS, SILENT_LOGGER } from "../lib/log.ts";

Deno.test("createLogger: one tagged line per event, at or above its level", () => {
  const lines: string[] = [];
  const log = createLogger("profile", "warn", (line) => lines.push(line));
  log.error("e");
  log.warn("w");
  log.info("i");
  log.debug("d");
  deepStrictEqual(lines, ["[profile] error: e\n", "[profile] warn: w\n"]);
  deepStrictEqual(LOG_LEVELS.map((level) => log.enabled!(level)), [true, true, false, false]);
});

Deno.test("createLogger: a newline inside a message does not split the line", () => {
  const lines: string[] = [];
  createLogger("p", "debug", (line) => lines.push(line)).debug("a\nb\r\nc");
  deepStrictEqual(lines, ["[p] debug: a b c\n"]);
});

Deno.test("isLogLevel and SILENT_LOGGER", () => {
  deepStrictEqual(["error", "debug", "trace", "ERROR", 1].map(isLogLevel), [
    true,
    true,
    false,
    false,
    false,
  ]);
  strictEqual(LOG_LEVELS.some((level) => SILENT_LOGGER.enabled!(level)), false);
});
