/**
 * Regular expressions of schemas from the upstream server, matched with RE2
 * (re2js, pure JavaScript) in time linear in the text: a pattern such as
 * `^(a+)+$` cannot stall the process, as it does in a backtracking engine
 * (28 characters took 7 s).
 *
 * RE2 has no lookaround and no backreference. A pattern that starts with
 * lookaheads, `^(?=A)(?!B)C` (the usual password rules), is checked as its
 * parts: `^A` matches, `^B` does not, `^C` matches. Any other pattern RE2
 * cannot read does not compile.
 *
 * @module
 */

import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";

/** Compiles a pattern of a schema for RE2; throws when RE2 cannot read it (a lookahead). */
function re2(source: string, flags: string): RE2JS {
  const inline = flags.includes("i") ? "(?i)" : "";
  return RE2JS.compile(inline + RE2JS.translateRegExp(source));
}

/** The index of the "]" that closes the class that opens at `start`. */
function classEnd(source: string, start: number): number {
  let i = start + 1;
  for (; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
  return i;
}

/** The index after the group that opens at `start`, or undefined when it does not close. */
function groupEnd(source: string, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") i = classEnd(source, i);
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return undefined;
}

/** True when `source` has a "|" outside every group and class. */
function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") i = classEnd(source, i);
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return true;
  }
  return false;
}

/** One part of a pattern: `^(?:body)` must match, or must not. */
interface Part {
  readonly negative: boolean;
  readonly body: string;
}

/** The parts of `^(?=A)(?!B)C`; undefined for a pattern of another form. */
function lookaheadParts(source: string): Part[] | undefined {
  if (!source.startsWith("^")) return undefined;
  const parts: Part[] = [];
  let i = 1;
  while (source.startsWith("(?=", i) || source.startsWith("(?!", i)) {
    const end = groupEnd(source, i);
    if (end === undefined) return undefined;
    parts.push({ negative: source[i + 2] === "!", body: source.slice(i + 3, end - 1) });
    i = end;
  }
  const rest = source.slice(i);
  if (parts.length === 0 || hasTopLevelAlternation(rest)) return undefined;
  parts.push({ negative: false, body: rest });
  return parts;
}

/**
 * A test of `pattern` (JavaScript syntax, ajv's flags) in linear time.
 * Throws when RE2 cannot read it.
 */
export function linearTest(pattern: string, flags: string): (s: string) => boolean {
  try {
    const compiled = re2(pattern, flags);
    return (s) => compiled.test(s);
  } catch (error) {
    const parts = lookaheadParts(pattern);
    if (!parts) throw error;
    const tests = parts.map(({ negative, body }) => ({ negative, re: re2(`^(?:${body})`, flags) }));
    return (s) => tests.every(({ negative, re }) => re.test(s) !== negative);
  }
}

/**
 * The regular expression engine of ajv (its option `code.regExp`). The
 * string form is the key of ajv's cache of patterns in one schema, so it must
 * differ for each pattern.
 */
export const LINEAR_REGEXP: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const test = linearTest(pattern, flags);
    const like = { test, toString: () => `/${pattern}/${flags}` };
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
 * `duration` and `hostname` (lookaheads inside) keep their own regexes, which
 * are linear (one anchored lookahead each); `url` gets the form above. Each is
 * compiled at its first use: RE2 takes tens of ms for some (uri-reference).
 */
export const LINEAR_FORMATS: ReadonlyMap<string, (s: string) => boolean> = (() => {
  const formats = new Map<string, (s: string) => boolean>();
  for (const [name, format] of Object.entries(fullFormats)) {
    const native = format instanceof RegExp
      ? format
      : typeof format === "object" && format.validate instanceof RegExp
      ? format.validate
      : undefined;
    if (!native) continue;
    let check: ((s: string) => boolean) | undefined;
    const compile = (): (s: string) => boolean => {
      if (name === "url") return linearUrl(native);
      try {
        return linearTest(native.source, native.flags);
      } catch {
        // A lookahead: the native regex stays (see above).
        return (s) => native.test(s);
      }
    };
    formats.set(name, (s) => (check ??= compile())(s));
  }
  return formats;
})();
