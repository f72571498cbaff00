/**
 * The items rule for array schemas (R6).
 *
 * The Copilot extension of VS Code stops each chat request when a schema has
 * `type: "array"` and no `items` value that is true in JavaScript. The rule
 * gives such schemas `items: {}` while keeping the set of arrays that the
 * schema accepts.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";

/** The walk stops below this depth; the root schema has the depth 0. */
export const MAX_SCHEMA_DEPTH = 64;

/** Keywords whose value is an object of schemas. */
const SCHEMA_MAPS = [
  "properties",
  "patternProperties",
  "dependencies",
  "dependentSchemas",
  "$defs",
  "definitions",
];
/** Keywords whose value is one schema. */
const SCHEMA_ONE = ["additionalProperties", "not", "if", "then", "else", "contains", "items"];
/** Keywords whose value is an array of schemas. */
const SCHEMA_LISTS = ["anyOf", "allOf", "oneOf", "prefixItems", "items"];

/** RFC 6901: `~` becomes `~0` and `/` becomes `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** One event of the walk, for the info lines of the log. */
export type ItemsEvent =
  | { readonly kind: "changed"; readonly pointer: string }
  | { readonly kind: "too_deep"; readonly pointer: string };

/** Changes one array schema when its items value is falsy. Returns true on a change. */
function fixArraySchema(schema: JsonObject): boolean {
  if (schema.type !== "array") return false;
  const items = schema.items;
  if (items === false) {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.length : 0;
    schema.items = {};
    // items: false allowed no element after prefixItems: keep that bound.
    const max = schema.maxItems;
    if (typeof max !== "number" || max > prefix) schema.maxItems = prefix;
    return true;
  }
  if (items === undefined || items === null || items === 0 || items === "") {
    schema.items = {};
    return true;
  }
  return false;
}

/**
 * Walks a schema and applies R6 to each array schema in it, in place.
 * Reports each change and each subtree below {@linkcode MAX_SCHEMA_DEPTH}.
 *
 * @example
 * ```ts
 * import { normalizeArrayItems } from "./items_rule.ts";
 * const schema = { type: "object", properties: { tags: { type: "array" } } };
 * const events: unknown[] = [];
 * normalizeArrayItems(schema, (e) => events.push(e));
 * if (JSON.stringify(schema.properties.tags) !== '{"type":"array","items":{}}') throw new Error();
 * ```
 */
export function normalizeArrayItems(schema: Json, report: (event: ItemsEvent) => void): void {
  // An explicit stack: a hostile schema cannot overflow the call stack.
  const stack: { node: Json; pointer: string; depth: number }[] = [{
    node: schema,
    pointer: "",
    depth: 0,
  }];
  while (stack.length > 0) {
    const { node, pointer, depth } = stack.pop()!;
    if (!isObject(node)) continue;
    if (depth > MAX_SCHEMA_DEPTH) {
      report({ kind: "too_deep", pointer });
      continue;
    }
    if (fixArraySchema(node)) report({ kind: "changed", pointer });
    const push = (child: Json | undefined, path: string) => {
      if (isObject(child)) stack.push({ node: child, pointer: path, depth: depth + 1 });
    };
    for (const key of SCHEMA_MAPS) {
      const map = node[key];
      if (!isObject(map)) continue;
      for (const [name, child] of Object.entries(map)) {
        push(child, `${pointer}/${escapePointerToken(key)}/${escapePointerToken(name)}`);
      }
    }
    for (const key of SCHEMA_ONE) push(node[key], `${pointer}/${escapePointerToken(key)}`);
    for (const key of SCHEMA_LISTS) {
      const list = node[key];
      if (!Array.isArray(list)) continue;
      list.forEach((child, i) => push(child, `${pointer}/${escapePointerToken(key)}/${i}`));
    }
  }
}
