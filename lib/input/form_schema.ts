/**
 * The validator of a form's requestedSchema: ajv 8 (draft 2020-12, or
 * draft-07 when the schema says so) with ajv-formats.
 *
 * The schema comes from the upstream server, so nothing it holds may outlive
 * its form or stall the process:
 * - each form compiles in its own ajv instance, which is dropped with the
 *   form, so an `$id` compiles again in the next round and memory does not
 *   grow with the forms; the meta-schema check uses one shared instance that
 *   never holds a schema of a form;
 * - `pattern`, `patternProperties` and the format regexes match with RE2
 *   (linear_regexp.ts), in time linear in the answer;
 * - an asynchronous schema, or one whose check throws (a `$ref` loop), is
 *   refused before the client gets a question, and a check that throws later
 *   reports an answer that is not valid.
 *
 * @module
 */

import { Ajv2020 } from "ajv/dist/2020.js";
import { Ajv, type Options } from "ajv";
import addFormatsModule from "ajv-formats";
import type { Json, JsonObject } from "../jsonrpc/message.ts";
import { LINEAR_FORMATS, LINEAR_REGEXP } from "./linear_regexp.ts";
import { SchemaGraph } from "./schema_cost.ts";

/** Checks one answer against a compiled requestedSchema; never throws. */
export type FormCheck = (value: Json) => boolean;

// deno-lint-ignore no-explicit-any
const addFormats = addFormatsModule as unknown as (ajv: any) => void;

type Draft = "2020-12" | "draft-07";

const OPTIONS: Options = {
  strict: false,
  allErrors: false,
  // ajv writes warnings (an unknown format) with console; stdout is the protocol.
  logger: false,
  code: { regExp: LINEAR_REGEXP },
};

function newAjv(draft: Draft, options: Options): Ajv | Ajv2020 {
  const ajv = draft === "draft-07" ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  for (const [name, check] of LINEAR_FORMATS) ajv.addFormat(name, check);
  return ajv;
}

/** One ajv per draft that checks schemas against the meta-schema; it compiles no form. */
const metaCheckers = new Map<Draft, Ajv | Ajv2020>();

function metaChecker(draft: Draft): Ajv | Ajv2020 {
  let ajv = metaCheckers.get(draft);
  if (!ajv) {
    ajv = newAjv(draft, OPTIONS);
    metaCheckers.set(draft, ajv);
  }
  return ajv;
}

/**
 * The most applications of subschemas that one check may take (schema_cost.ts):
 * about 10 ms of ajv. A form answer of VS Code takes a few dozen.
 */
export const MAX_CHECK_COST = 100_000;
/** The nesting of a value that the cost of a schema is counted for before the question. */
const FORM_DEPTH = 3;

/**
 * Compiles a requestedSchema; undefined when it does not compile, is
 * asynchronous, has subschemas that refer to each other in a loop, could
 * take more than {@linkcode MAX_CHECK_COST} for a value of a few levels, or
 * its check throws on the empty object. An answer whose check would cost
 * more than the limit is not valid.
 */
export function compileSchema(schema: JsonObject): FormCheck | undefined {
  const draft: Draft = typeof schema.$schema === "string" && schema.$schema.includes("draft-07")
    ? "draft-07"
    : "2020-12";
  try {
    if (metaChecker(draft).validateSchema(schema) !== true) return undefined;
    // validateSchema: the meta-schema check is done above, by the shared instance.
    const validate = newAjv(draft, { ...OPTIONS, validateSchema: false }).compile(schema);
    if ((validate as { $async?: unknown }).$async === true) return undefined;
    const graph = SchemaGraph.of(schema, MAX_CHECK_COST);
    if (!graph || graph.staticCost(FORM_DEPTH) > MAX_CHECK_COST) return undefined;
    validate({});
    return (value) => {
      try {
        return graph.answerCost(value) <= MAX_CHECK_COST && validate(value) === true;
      } catch {
        return false;
      }
    };
  } catch {
    return undefined;
  }
}
