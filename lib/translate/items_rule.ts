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
function walkKind(key: string): "map" | "one" | "list" | undefined {
  switch (key) {
    case "properties":
    case "patternProperties":
    case "dependencies":
    case "dependentSchemas":
    case "$defs":
    case "definitions":
      return "map";
    case "additionalProperties":
    case "not":
    case "if":
    case "then":
    case "else":
    case "contains":
    case "items":
      return "one";
    case "anyOf":
    case "allOf":
    case "oneOf":
    case "prefixItems":
      return "list";
  }
  return undefined;
}

/** RFC 6901: `~` becomes `~0` and `/` becomes `~1`. */
export function escapePointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** One event of the walk, for the info lines of the log. */
export interface ItemsEvent {
  readonly kind: "changed" | "too_deep";
  /** The RFC 6901 pointer of the schema, built when it is read. */
  readonly pointer: string;
}

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

/** The walk of one schema tree; `path` holds the tokens of the current pointer. */
class Walk {
  readonly #report: ((event: ItemsEvent) => void) | undefined;
  readonly #path: string[] = [];

  constructor(report: ((event: ItemsEvent) => void) | undefined) {
    this.#report = report;
  }

  #event(kind: ItemsEvent["kind"]): void {
    if (!this.#report) return;
    const tokens = [...this.#path];
    this.#report({
      kind,
      get pointer() {
        return tokens.length === 0 ? "" : "/" + tokens.map(escapePointerToken).join("/");
      },
    });
  }

  /**
   * Visits a schema at `depth` (the root has 0). The recursion is at most
   * {@linkcode MAX_SCHEMA_DEPTH} deep, so a hostile schema cannot overflow
   * the call stack.
   */
  visit(node: Json, depth: number): void {
    if (!isObject(node)) return;
    if (depth > MAX_SCHEMA_DEPTH) {
      this.#event("too_deep");
      return;
    }
    if (fixArraySchema(node)) this.#event("changed");
    const path = this.#path;
    for (const key in node) {
      const kind = walkKind(key);
      if (kind === undefined) continue;
      const value = node[key];
      path.push(key);
      if (Array.isArray(value)) {
        if (kind !== "map") {
          for (let i = 0; i < value.length; i++) {
            path.push(String(i));
            this.visit(value[i]!, depth + 1);
            path.pop();
          }
        }
      } else if (kind === "one") {
        this.visit(value!, depth + 1);
      } else if (kind === "map" && isObject(value)) {
        for (const name in value) {
          path.push(name);
          this.visit(value[name]!, depth + 1);
          path.pop();
        }
      }
      path.pop();
    }
  }
}

/**
 * Walks a schema and applies R6 to each array schema in it, in place.
 * Reports each change and each subtree below {@linkcode MAX_SCHEMA_DEPTH}
 * to `report`, when given.
 */
export function normalizeArrayItems(schema: Json, report?: (event: ItemsEvent) => void): void {
  new Walk(report).visit(schema, 0);
}
