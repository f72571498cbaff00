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
 *   (re2js), in time linear in the answer;
 * - an asynchronous schema, or one whose check throws (a `$ref` loop), is
 *   refused before the client gets a question, and a check that throws later
 *   reports an answer that is not valid.
 *
 * @module
 */

import { Ajv2020 } from "ajv/dist/2020.js";
import { Ajv, type Options } from "ajv";
import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import addFormatsModule from "ajv-formats";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";
import type { Json, JsonObject } from "../jsonrpc/message.ts";

/** Checks one answer against a compiled requestedSchema; never throws. */
export type FormCheck = (value: Json) => boolean;

/** Compiles a pattern of a schema for RE2; throws when RE2 cannot read it (a lookahead). */
function re2(source: string, flags: string): RE2JS {
  const inline = flags.includes("i") ? "(?i)" : "";
  return RE2JS.compile(inline + RE2JS.translateRegExp(source));
}

/**
 * The regular expression engine of ajv: RE2. The string form is the key of
 * ajv's cache of patterns in one schema, so it must differ for each pattern.
 */
const LINEAR_REGEXP: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const compiled = re2(pattern, flags);
    const like = { test: (s: string) => compiled.test(s), toString: () => `/${pattern}/${flags}` };
    return like;
  },
  { code: "re2" },
);

// The three private-address lookaheads of the url format of ajv-formats:
// RE2 has no lookahead, so a url is valid when it matches without them and
// does not match as a URL whose host is a private IPv4 address.
const PRIVATE_PREFIXES = [
  String.raw`(?:10|127)(?:\.\d{1,3}){3}`,
  String.raw`(?:169\.254|192\.168)(?:\.\d{1,3}){2}`,
  String.raw`172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2}`,
];
const OCTET_MID = String.raw`(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5]))`;
const OCTET_END = String.raw`(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))`;
const PRIVATE_URL = String.raw`^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?` +
  String.raw`(?:(?:10|127)${OCTET_MID}{2}${OCTET_END}` +
  String.raw`|(?:169\.254|192\.168)${OCTET_MID}${OCTET_END}` +
  String.raw`|172\.(?:1[6-9]|2\d|3[0-1])${OCTET_MID}${OCTET_END})` +
  String.raw`(?::\d{2,5})?(?:\/[^\s]*)?$`;

function linearUrl(native: RegExp): (s: string) => boolean {
  let source = native.source;
  for (const prefix of PRIVATE_PREFIXES) source = source.replace(`(?!${prefix})`, "");
  const url = re2(source, native.flags);
  const privateUrl = re2(PRIVATE_URL, native.flags);
  return (s) => url.test(s) && !privateUrl.test(s);
}

/**
 * The formats of ajv-formats whose check is a regular expression, with RE2.
 * The regexes RE2 cannot read keep their own: `duration` and `hostname` are
 * linear (one anchored lookahead each), `url` gets the form above.
 */
const LINEAR_FORMATS: ReadonlyMap<string, (s: string) => boolean> = (() => {
  const formats = new Map<string, (s: string) => boolean>();
  for (const [name, format] of Object.entries(fullFormats)) {
    const native = format instanceof RegExp
      ? format
      : typeof format === "object" && format.validate instanceof RegExp
      ? format.validate
      : undefined;
    if (!native) continue;
    if (name === "url") {
      formats.set(name, linearUrl(native));
      continue;
    }
    try {
      const compiled = re2(native.source, native.flags);
      formats.set(name, (s) => compiled.test(s));
    } catch {
      // A lookahead: the native regex stays (see above).
    }
  }
  return formats;
})();

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
 * Compiles a requestedSchema; undefined when it does not compile, is
 * asynchronous, or its check throws on the empty object (a `$ref` loop).
 *
 * @example
 * ```ts
 * import { compileSchema } from "./form_schema.ts";
 * const schema = { $id: "https://example.com/form", type: "object", properties: { a: { pattern: "^(a+)+$" } } };
 * const check = compileSchema(schema);
 * if (!check?.({ a: "aaa" }) || check({ a: "a".repeat(40) + "!" })) throw new Error();
 * if (!compileSchema(schema)) throw new Error("the same $id compiles again");
 * ```
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
    validate({});
    return (value) => {
      try {
        return validate(value) === true;
      } catch {
        return false;
      }
    };
  } catch {
    return undefined;
  }
}
