/**
 * How much work the check of a value against a schema can take, counted in
 * applications of a subschema to a part of the value, before ajv runs.
 *
 * ajv applies each subschema where the schema says, without memory of what
 * it already checked: subschemas that refer to each other in place (`allOf`,
 * `anyOf`, `$ref`, ...) form a graph whose paths grow exponentially with its
 * size (a 2 KB schema of 24 `anyOf`s took the bridge to 4 GB and a crash),
 * and a loop of them never ends. This module builds that graph once, refuses
 * a loop, and counts the paths with memory (saturating at a limit), so the
 * count itself stays polynomial.
 *
 * The count over-approximates: each `patternProperties` pattern and
 * `additionalProperties` is taken to apply to each member, `if`, `then` and
 * `else` all apply, and a `$ref` that points outside the schema (a
 * meta-schema) counts as one application.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";

/** Subschemas that apply to the same value. */
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"] as const;
const IN_PLACE_ONE = ["not", "if", "then", "else"] as const;
const IN_PLACE_MAPS = ["dependentSchemas", "dependencies"] as const;
const REFS = ["$ref", "$dynamicRef", "$recursiveRef"] as const;
/** Subschemas that apply to each member of an object. */
const EACH_MEMBER = ["additionalProperties", "unevaluatedProperties"] as const;
/** Subschemas that apply to each item of an array (with `items` as a list in draft-07). */
const EACH_ITEM = ["items", "additionalItems", "contains", "unevaluatedItems"] as const;
/** Members whose values hold subschemas by name, for the walk of the resources. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", ...IN_PLACE_MAPS];
const SCHEMA_LISTS = [...IN_PLACE_LISTS, "prefixItems", "items"];
const SCHEMA_ONE = [...IN_PLACE_ONE, ...EACH_MEMBER, ...EACH_ITEM, "propertyNames"];

type Schema = JsonObject | boolean;

const BASE = "schema:///form";

function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

function withoutFragment(uri: string): string {
  const hash = uri.indexOf("#");
  return hash === -1 ? uri : uri.slice(0, hash);
}

/** The subschemas of a schema. */
function* children(schema: JsonObject): Generator<Schema> {
  const isSchema = (v: Json | undefined): v is Schema => isObject(v) || typeof v === "boolean";
  for (const key of SCHEMA_ONE) if (isSchema(schema[key])) yield schema[key];
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) { for (const item of list) if (isSchema(item)) yield item; }
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (isObject(map)) { for (const value of Object.values(map)) if (isSchema(value)) yield value; }
  }
}

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);

/**
 * `uniqueItems` compares each pair of items, unless the items are declared
 * scalars (ajv then uses a table): one application per pair.
 */
function uniqueItemsCost(schema: JsonObject, part: Json): number {
  if (schema.uniqueItems !== true || !Array.isArray(part)) return 0;
  const items = schema.items;
  const type = isObject(items) ? items.type : undefined;
  const scalar = typeof type === "string" ? SCALAR_TYPES.has(type) : Array.isArray(type) &&
    type.every((t) => typeof t === "string" && SCALAR_TYPES.has(t));
  return scalar ? part.length : part.length * (part.length - 1) / 2;
}

/** The graph of a requestedSchema: where each `$ref` points, and the costs. */
export class SchemaGraph {
  readonly #root: JsonObject;
  readonly #limit: number;
  /** Base URI of each schema object, for its `$ref`s. */
  readonly #bases = new Map<JsonObject, string>();
  /** Schema resources and anchors by absolute URI. */
  readonly #targets = new Map<string, JsonObject>();
  readonly #dynamic = new Map<string, JsonObject[]>();
  readonly #inPlace = new Map<JsonObject, JsonObject[]>();
  readonly #staticCosts = new Map<JsonObject, number[]>();

  private constructor(root: JsonObject, limit: number) {
    this.#root = root;
    this.#limit = limit;
    this.#walk(root, BASE);
  }

  /**
   * The graph, or undefined when subschemas refer to each other in a loop in
   * place. Each cost counts up to `limit + 1`.
   *
   * @example
   * ```ts
   * import { SchemaGraph } from "./schema_cost.ts";
   * if (SchemaGraph.of({ allOf: [{ $ref: "#" }] }, 100)) throw new Error("a loop");
   * const tree = SchemaGraph.of({ properties: { kids: { items: { $ref: "#" } } } }, 100)!;
   * if (tree.answerCost({ kids: [{}, { kids: [{}] }] }) !== 9) throw new Error();
   * ```
   */
  static of(root: JsonObject, limit: number): SchemaGraph | undefined {
    const graph = new SchemaGraph(root, limit);
    return graph.#hasLoop() ? undefined : graph;
  }

  #walk(schema: JsonObject, parentBase: string): void {
    let base = parentBase;
    if (typeof schema.$id === "string") {
      const id = resolveUri(schema.$id, parentBase);
      if (id !== undefined) {
        if (schema.$id.startsWith("#")) this.#targets.set(id, schema); // a draft-07 anchor
        else {
          base = withoutFragment(id);
          this.#targets.set(base, schema);
        }
      }
    }
    this.#bases.set(schema, base);
    if (schema === this.#root) this.#targets.set(BASE, schema);
    for (const key of ["$anchor", "$dynamicAnchor"] as const) {
      const name = schema[key];
      if (typeof name !== "string") continue;
      this.#targets.set(`${base}#${name}`, schema);
      if (key === "$dynamicAnchor") {
        this.#dynamic.set(name, [...(this.#dynamic.get(name) ?? []), schema]);
      }
    }
    for (const child of children(schema)) if (isObject(child)) this.#walk(child, base);
  }

  #resolve(schema: JsonObject, key: (typeof REFS)[number], ref: string): JsonObject[] {
    const base = this.#bases.get(schema) ?? BASE;
    // A dynamic reference may land on each dynamic anchor of its name.
    if (key === "$recursiveRef") return [this.#root];
    const uri = resolveUri(ref, base);
    if (uri === undefined) return [];
    const found: JsonObject[] = [];
    if (key === "$dynamicRef" && uri.includes("#")) {
      found.push(...this.#dynamic.get(uri.slice(uri.indexOf("#") + 1)) ?? []);
    }
    const target = this.#lookup(uri);
    if (target) found.push(target);
    return found;
  }

  #lookup(uri: string): JsonObject | undefined {
    const exact = this.#targets.get(uri);
    if (exact) return exact;
    const hash = uri.indexOf("#");
    const resource = this.#targets.get(hash === -1 ? uri : uri.slice(0, hash));
    if (!resource) return undefined;
    const fragment = hash === -1 ? "" : decodeURIComponent(uri.slice(hash + 1));
    if (fragment === "") return resource;
    if (!fragment.startsWith("/")) return undefined;
    let node: Json | undefined = resource;
    for (const raw of fragment.slice(1).split("/")) {
      const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
      node = Array.isArray(node) ? node[Number(token)] : isObject(node) ? node[token] : undefined;
    }
    return isObject(node) ? node : undefined;
  }

  /** The subschemas that apply to the same value as `schema`. */
  #edges(schema: JsonObject): JsonObject[] {
    let edges = this.#inPlace.get(schema);
    if (edges) return edges;
    edges = [];
    const add = (v: Json | undefined) => isObject(v) && edges!.push(v);
    for (const key of IN_PLACE_LISTS) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach(add);
    }
    for (const key of IN_PLACE_ONE) add(schema[key]);
    for (const key of IN_PLACE_MAPS) {
      const map = schema[key];
      if (isObject(map)) Object.values(map).forEach(add);
    }
    for (const key of REFS) {
      const ref = schema[key];
      if (typeof ref === "string") edges.push(...this.#resolve(schema, key, ref));
    }
    this.#inPlace.set(schema, edges);
    return edges;
  }

  #hasLoop(): boolean {
    const state = new Map<JsonObject, "open" | "done">();
    const visit = (schema: JsonObject): boolean => {
      const seen = state.get(schema);
      if (seen) return seen === "open";
      state.set(schema, "open");
      for (const next of this.#edges(schema)) if (visit(next)) return true;
      state.set(schema, "done");
      return false;
    };
    for (const schema of this.#bases.keys()) if (visit(schema)) return true;
    return false;
  }

  /** The subschemas of `schema` that apply to a part of an object or array, with that part. */
  *#descents(schema: JsonObject, value: Json): Generator<[Json, Json]> {
    if (isObject(value)) {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const patterns = isObject(schema.patternProperties)
        ? Object.values(schema.patternProperties)
        : [];
      for (const [key, member] of Object.entries(value)) {
        if (Object.hasOwn(properties, key)) yield [properties[key]!, member];
        for (const pattern of patterns) yield [pattern, member];
        for (const each of EACH_MEMBER) {
          if (schema[each] !== undefined) yield [schema[each], member];
        }
        if (schema.propertyNames !== undefined) yield [schema.propertyNames, key];
      }
    } else if (Array.isArray(value)) {
      const prefix = Array.isArray(schema.prefixItems)
        ? schema.prefixItems
        : Array.isArray(schema.items)
        ? schema.items
        : [];
      for (const [i, item] of value.entries()) {
        if (i < prefix.length) yield [prefix[i]!, item];
        for (const each of EACH_ITEM) {
          const sub = schema[each];
          if (sub !== undefined && !Array.isArray(sub)) yield [sub, item];
        }
      }
    }
  }

  /**
   * The applications of subschemas when a value of nesting at most `depth`
   * (0 for a string) is checked against `schema`, as if each member had each
   * name of the schema; at most `limit + 1`.
   */
  staticCost(depth: number, schema: Json = this.#root): number {
    const limit = this.#limit;
    if (!isObject(schema)) return 1;
    const memo = this.#staticCosts.get(schema) ?? [];
    this.#staticCosts.set(schema, memo);
    const known = memo[depth];
    if (known !== undefined) return known;
    let cost = 1;
    // Past the limit the exact count does not matter: stop counting.
    for (const next of this.#edges(schema)) {
      if (cost > limit) break;
      cost = Math.min(limit + 1, cost + this.staticCost(depth, next));
    }
    if (depth > 0 && cost <= limit) {
      const parts: Json[] = [];
      for (const key of ["properties", "patternProperties"]) {
        const map = schema[key];
        if (isObject(map)) parts.push(...Object.values(map));
      }
      for (const key of [...EACH_MEMBER, ...EACH_ITEM, "propertyNames", "prefixItems"]) {
        const sub = schema[key];
        if (Array.isArray(sub)) parts.push(...sub);
        else if (sub !== undefined) parts.push(sub);
      }
      for (const part of parts) {
        if (cost > limit) break;
        cost = Math.min(limit + 1, cost + this.staticCost(depth - 1, part));
      }
    }
    memo[depth] = cost;
    return cost;
  }

  /** The applications of subschemas when ajv checks `value`; at most `limit + 1`. */
  answerCost(value: Json): number {
    const limit = this.#limit;
    const memo = new Map<JsonObject, Map<Json, number>>();
    const cost = (schema: Json, part: Json): number => {
      if (!isObject(schema)) return 1;
      if (!isObject(part) && !Array.isArray(part)) return this.staticCost(0, schema);
      let byPart = memo.get(schema);
      if (!byPart) memo.set(schema, byPart = new Map());
      const known = byPart.get(part);
      if (known !== undefined) return known;
      let total = Math.min(limit + 1, 1 + uniqueItemsCost(schema, part));
      for (const next of this.#edges(schema)) {
        if (total > limit) break;
        total = Math.min(limit + 1, total + cost(next, part));
      }
      for (const [sub, inner] of this.#descents(schema, part)) {
        if (total > limit) break;
        total = Math.min(limit + 1, total + cost(sub, inner));
      }
      byPart.set(part, total);
      return total;
    };
    return cost(this.#root, value);
  }
}
