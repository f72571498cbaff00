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

/**
 * The keywords of the walk: the value is an object of schemas (`map`), one
 * schema (`one`), or an array of schemas (`list`). `items` is one schema, or
 * an array of schemas in draft-07.
 */
const WALK: Readonly<Record<string, "map" | "one" | "list">> = Object.assign(Object.create(null), {
  properties: "map",
  patternProperties: "map",
  dependencies: "map",
  dependentSchemas: "map",
  $defs: "map",
  definitions: "map",
  additionalProperties: "one",
  not: "one",
  if: "one",
  then: "one",
  else: "one",
  contains: "one",
  items: "one",
  anyOf: "list",
  allOf: "list",
  oneOf: "list",
  prefixItems: "list",
});

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
    // The own keys of a schema are few; the walk list is long.
    for (const key in node) {
      const kind = WALK[key];
      if (kind === undefined) continue;
      const value = node[key];
      if (Array.isArray(value)) {
        if (kind === "map") continue;
        const keyFrame: Frame = { node: null, parent: frame, token: key, depth };
        for (let i = 0; i < value.length; i++) {
          const child = value[i];
          if (isObject(child)) {
            stack.push({ node: child, parent: keyFrame, token: String(i), depth: depth + 1 });
          }
        }
      } else if (isObject(value)) {
        if (kind === "one") {
          stack.push({ node: value, parent: frame, token: key, depth: depth + 1 });
        } else if (kind === "map") {
          const keyFrame: Frame = { node: null, parent: frame, token: key, depth };
          for (const name in value) {
            const child = value[name];
            if (isObject(child)) {
              stack.push({ node: child, parent: keyFrame, token: name, depth: depth + 1 });
            }
          }
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
