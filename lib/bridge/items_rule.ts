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
  // An explicit stack: a hostile schema cannot overflow the call stack. The
  // pointer of a node is built only when the node is reported.
  const stack: Frame[] = [{ node: schema, parent: undefined, token: "", depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { node, depth } = frame;
    if (!isObject(node)) continue;
    if (depth > MAX_SCHEMA_DEPTH) {
      report({ kind: "too_deep", pointer: pointerOf(frame) });
      continue;
    }
    if (fixArraySchema(node)) report({ kind: "changed", pointer: pointerOf(frame) });
    for (const key of SCHEMA_MAPS) {
      const map = node[key];
      if (!isObject(map)) continue;
      const keyFrame: Frame = { node: null, parent: frame, token: key, depth };
      for (const name in map) {
        const child = map[name];
        if (isObject(child)) {
          stack.push({ node: child, parent: keyFrame, token: name, depth: depth + 1 });
        }
      }
    }
    for (const key of SCHEMA_ONE) {
      const child = node[key];
      if (isObject(child)) stack.push({ node: child, parent: frame, token: key, depth: depth + 1 });
    }
    for (const key of SCHEMA_LISTS) {
      const list = node[key];
      if (!Array.isArray(list)) continue;
      const keyFrame: Frame = { node: null, parent: frame, token: key, depth };
      for (let i = 0; i < list.length; i++) {
        const child = list[i];
        if (isObject(child)) {
          stack.push({ node: child, parent: keyFrame, token: String(i), depth: depth + 1 });
        }
      }
    }
  }
}

/** A node of the walk and the way to it. */
interface Frame {
  readonly node: Json;
  readonly parent: Frame | undefined;
  readonly token: string;
  readonly depth: number;
}

/** The RFC 6901 pointer of a frame, from the tokens of its ancestors. */
function pointerOf(frame: Frame): string {
  const tokens: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) {
    tokens.push(escapePointerToken(f.token));
  }
  return tokens.length === 0 ? "" : "/" + tokens.reverse().join("/");
}
