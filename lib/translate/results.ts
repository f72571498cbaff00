/**
 * The result rules: what the bridge changes in each complete result before
 * the client of revision 2025-11-25 gets it.
 *
 * The functions take ownership of the result (a value that the bridge just
 * parsed), change it in place and return it: results can be 64 MiB, and a
 * copy of each would double the memory of the bridge.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import type { Logger } from "../log.ts";
import type { Quirks } from "../settings/profile.ts";
import { normalizeArrayItems } from "./items_rule.ts";
import { materializeJson, skeletonOf } from "../jsonrpc/skeleton.ts";
import { SERVER_INFO_KEY } from "../upstream/envelope.ts";
import { type IconRule, isDataIcon, LIST_METHODS } from "./translate.ts";
import type { ToolFilter } from "./tool_filter.ts";

/** Members of revision 2026-07-28 that a result of revision 2025-11-25 does not have. */
const MODERN_MEMBERS = ["resultType", "ttlMs", "cacheScope"] as const;

/**
 * What the result rules need to know besides the result.
 *
 * @example
 * ```ts
 * import { applyResultRules, type ResultContext } from "./results.ts";
 * import { VSCODE_PROFILE } from "../vscode/profile.ts";
 * import { SILENT_LOGGER } from "../log.ts";
 * const ctx: ResultContext = { quirks: VSCODE_PROFILE.quirks, icons: "all", log: SILENT_LOGGER };
 * const tool = { name: "t", inputSchema: { type: "object" }, outputSchema: { type: "string" } };
 * // VS Code's quirks drop an outputSchema that is not an object schema; a bad cursor goes too.
 * const out = applyResultRules("tools/list", { tools: [tool], nextCursor: null }, ctx);
 * if (JSON.stringify(out) !== '{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}') {
 *   throw new Error();
 * }
 * ```
 */
export interface ResultContext {
  readonly quirks: Quirks;
  readonly icons: IconRule;
  readonly log: Logger;
  /** `--tool` and `--ignore-tool`: the tools that tools/list leaves out. */
  readonly tools?: ToolFilter | undefined;
}

/** Removes resultType, ttlMs, cacheScope, the serverInfo key of `_meta`, and an empty `_meta`. */
export function removeModernMembers(result: JsonObject): void {
  for (const key of MODERN_MEMBERS) delete result[key];
  const meta = result._meta;
  if (isObject(meta)) {
    delete meta[SERVER_INFO_KEY];
    if (Object.keys(meta).length === 0) delete result._meta;
  }
}

/** Removes a nextCursor that is not a string: VS Code pages on while the member exists. */
export function dropInvalidCursor(result: JsonObject): void {
  if (Object.hasOwn(result, "nextCursor") && typeof result.nextCursor !== "string") {
    delete result.nextCursor;
  }
}

/** True for a schema whose root has `type: "object"`. */
function isObjectSchema(schema: Json | undefined): boolean {
  return isObject(schema) && schema.type === "object";
}

/** The tool rules of a tools/list result: outputSchema and R6. */
export function fixToolList(result: JsonObject, ctx: ResultContext): void {
  const tools = result.tools;
  if (!Array.isArray(tools)) return;
  const { quirks, log } = ctx;
  const info = log.enabled?.("info") ?? true;
  for (const tool of tools) {
    if (!isObject(tool)) continue;
    const name = typeof tool.name === "string" ? tool.name : "";
    if (
      (quirks.drop_non_object_output_schema || quirks.strict_legacy_results) &&
      Object.hasOwn(tool, "outputSchema") && !isObjectSchema(tool.outputSchema)
    ) {
      delete tool.outputSchema;
      log.info(`tool '${name}': removed an outputSchema whose root is not an object schema`);
    }
    if (quirks.normalize_array_items && isObject(tool.inputSchema)) {
      normalizeArrayItems(
        tool.inputSchema,
        info
          ? (event) => {
            const at = event.pointer === "" ? "/" : event.pointer;
            log.info(
              event.kind === "changed"
                ? `tool '${name}': gave the array schema at ${at} an items schema`
                : `tool '${name}': did not examine the schema at ${at}, it is deeper than the limit`,
            );
          }
          : undefined,
      );
    }
  }
}

/** The rules of a tools/call result: content, the text mirror, strict results. */
export function fixToolCall(result: JsonObject, quirks: Quirks): void {
  if (!Array.isArray(result.content)) result.content = [];
  const content = result.content;
  const structured = result.structuredContent;
  if (quirks.strict_legacy_results && structured !== undefined && !isObject(structured)) {
    delete result.structuredContent;
  } else if (
    structured !== undefined && structured !== null &&
    !content.some((block) => isObject(block) && block.type === "text")
  ) {
    const text = JSON.stringify(structured);
    // The long strings of a large result are placeholders: the mirror needs them whole.
    const sk = skeletonOf(result);
    content.push({ type: "text", text: sk ? materializeJson(text, sk) : text });
  }
}

/** Keeps only data: icons in a list of icons; an empty list loses its member. */
function keepDataIcons(item: Json): void {
  if (!isObject(item) || !Object.hasOwn(item, "icons")) return;
  const icons = Array.isArray(item.icons) ? item.icons.filter(isDataIcon) : [];
  if (icons.length > 0) item.icons = icons;
  else delete item.icons;
}

/** The icon rule of a remote upstream server: only data: icons reach the client. */
export function filterIcons(method: string, result: JsonObject): void {
  const itemsKey = LIST_METHODS.get(method);
  if (itemsKey !== undefined) {
    const items = result[itemsKey];
    if (Array.isArray(items)) items.forEach(keepDataIcons);
    return;
  }
  const linksIn = (blocks: Json | undefined) => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks) {
      if (isObject(block) && block.type === "resource_link") keepDataIcons(block);
    }
  };
  if (method === "tools/call") linksIn(result.content);
  if (method === "prompts/get" && Array.isArray(result.messages)) {
    for (const message of result.messages) {
      if (isObject(message)) {
        linksIn(Array.isArray(message.content) ? message.content : [message.content ?? null]);
      }
    }
  }
}

/**
 * Applies every result rule to the complete result of a forwarded request.
 * A result that is not an object is returned as it is.
 *
 * @example
 * ```ts
 * import { applyResultRules } from "./results.ts";
 * import { VSCODE_PROFILE } from "../vscode/profile.ts";
 * import { SILENT_LOGGER } from "../log.ts";
 * const ctx = { quirks: VSCODE_PROFILE.quirks, icons: "all" as const, log: SILENT_LOGGER };
 * const result = { resultType: "complete", content: [], structuredContent: { sum: 3 } };
 * // The members of 2026-07-28 go; structured content gets its text mirror.
 * const out = applyResultRules("tools/call", result, ctx);
 * const mirror = { type: "text", text: '{"sum":3}' };
 * const want = { content: [mirror], structuredContent: { sum: 3 } };
 * if (JSON.stringify(out) !== JSON.stringify(want)) throw new Error();
 * ```
 */
export function applyResultRules(method: string, result: Json, ctx: ResultContext): Json {
  if (!isObject(result)) return result;
  removeModernMembers(result);
  if (LIST_METHODS.has(method)) dropInvalidCursor(result);
  if (method === "tools/list") {
    const hidden = ctx.tools?.filterList(result) ?? [];
    if (hidden.length > 0) ctx.log.debug(`tools/list: left out ${hidden.length} hidden tools`);
    fixToolList(result, ctx);
  }
  if (method === "tools/call") fixToolCall(result, ctx.quirks);
  if (ctx.icons === "data_only") filterIcons(method, result);
  return result;
}
