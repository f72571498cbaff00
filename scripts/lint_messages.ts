/**
 * Checks the messages of the error table (and of the refusals of the HTTP
 * face of `serve`) against the rules of the project's
 * writing profile: short sentences, no contractions, present tense words, no
 * secret placeholders, and the approved terms.
 *
 * Run: `deno task lint-messages`
 *
 * @module
 */

import { ERROR_TABLE } from "../lib/errors/error_table.ts";
import { HTTP_ERRORS } from "../lib/serve/http_errors.ts";

const MAX_WORDS = 26;
const CONTRACTION = /\b\w+'(t|s|re|ve|ll|d|m)\b/i;
const FORBIDDEN = [
  [/\b(will|would|should|could|might)\b/i, "use the present tense"],
  [/\b(please|sorry|oops)\b/i, "no courtesy words"],
  [/\{(token|secret|url|stderr)\}/i, "a message never holds a secret or the upstream URL"],
] as const;
const APPROVED_PLACEHOLDERS = new Set(["seconds", "name", "port", "redirect_uri"]);

const problems: string[] = [];
const rows = [...Object.entries(ERROR_TABLE), ...Object.entries(HTTP_ERRORS)];
for (const [cause, row] of rows) {
  const sentences = row.message.split(/(?<=\.)\s+/);
  for (const sentence of sentences) {
    const words = sentence.split(/\s+/).length;
    if (words > MAX_WORDS) {
      problems.push(`${cause}: a sentence has ${words} words (at most ${MAX_WORDS})`);
    }
  }
  if (CONTRACTION.test(row.message)) problems.push(`${cause}: no contractions`);
  for (const [pattern, rule] of FORBIDDEN) {
    if (pattern.test(row.message)) problems.push(`${cause}: ${rule}`);
  }
  for (const [, name] of row.message.matchAll(/\{(\w+)\}/g)) {
    if (!APPROVED_PLACEHOLDERS.has(name!)) {
      problems.push(`${cause}: the placeholder {${name}} is not approved`);
    }
  }
  if (!/^[A-Z]/.test(row.message)) {
    problems.push(`${cause}: a message starts with a capital letter`);
  }
}
const out = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
for (const problem of problems) out(problem);
out(`${rows.length} messages checked, ${problems.length} problems`);
Deno.exit(problems.length === 0 ? 0 : 1);
