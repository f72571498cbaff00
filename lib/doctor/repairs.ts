/**
 * What the bridge will repair in a result for VS Code, found by the real
 * result rules of `lib/translate/results.ts`: `doctor` runs a copy of each
 * result through them and names what changed (the log lines of the rules,
 * and a diff for what they change without a line).
 *
 * @module
 */

import { applyResultRules } from "../translate/results.ts";
import type { Logger } from "../log.ts";
import type { Quirks } from "../settings/profile.ts";
import { type IconRule, LIST_METHODS } from "../translate/translate.ts";
import { isObject, type Json } from "../jsonrpc/message.ts";

/** The icons of each item of a list result, by the item's name or index. */
function iconCounts(method: string, result: Json): Map<string, number> {
  const counts = new Map<string, number>();
  const key = LIST_METHODS.get(method);
  const items = key !== undefined && isObject(result) ? result[key] : undefined;
  if (!Array.isArray(items)) return counts;
  items.forEach((item, index) => {
    if (!isObject(item)) return;
    const name = typeof item.name === "string"
      ? item.name
      : typeof item.uriTemplate === "string"
      ? item.uriTemplate
      : `#${index}`;
    counts.set(name, Array.isArray(item.icons) ? item.icons.length : 0);
  });
  return counts;
}

/**
 * The repairs of the bridge in one result of `method`, in plain words. The
 * rules run on a copy: `result` is not changed.
 */
export function repairsOf(method: string, result: Json, quirks: Quirks, icons: IconRule): string[] {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  const log: Logger = {
    enabled: (level) => level !== "debug",
    error: keep,
    warn: keep,
    info: keep,
    debug() {},
  };
  const copy = structuredClone(result);
  const before = iconCounts(method, result);
  const hadNullCursor = isObject(result) && Object.hasOwn(result, "nextCursor") &&
    typeof result.nextCursor !== "string";
  const after = iconCounts(method, applyResultRules(method, copy, { quirks, icons, log }));
  if (hadNullCursor && isObject(copy) && !Object.hasOwn(copy, "nextCursor")) {
    lines.push(`${method}: removed a nextCursor that is not a string (VS Code would page on)`);
  }
  for (const [name, count] of before) {
    const kept = after.get(name) ?? 0;
    if (kept < count) {
      lines.push(
        `${method} '${name}': dropped ${
          count - kept
        } of ${count} icons (only data: icons of a remote server reach VS Code)`,
      );
    }
  }
  return lines;
}
