/**
 * Asserts that print what they saw: `strictEqual(x.includes(y), true)` only
 * says "false !== true"; these show the text and the part it lacks.
 */

import { AssertionError } from "node:assert";

function fail(message: string, actual: unknown, expected: unknown, operator: string): never {
  throw new AssertionError({ message, actual, expected, operator });
}

/** Fails unless `text` contains `part`; the message shows both. */
export function assertIncludes(text: string, part: string): void {
  if (text.includes(part)) return;
  fail(`expected ${JSON.stringify(part)} in:\n${text}`, text, part, "includes");
}

/** Fails if `text` contains `part`; the message shows both. */
export function assertExcludes(text: string, part: string): void {
  if (!text.includes(part)) return;
  fail(`expected no ${JSON.stringify(part)} in:\n${text}`, text, part, "excludes");
}

/** Fails unless some line contains `part`; the message shows every line. */
export function assertSomeIncludes(lines: readonly string[], part: string): void {
  if (lines.some((line) => line.includes(part))) return;
  fail(
    `expected ${JSON.stringify(part)} in a line of:\n${
      lines.map((line) => line.trimEnd()).join("\n")
    }`,
    lines,
    part,
    "some",
  );
}

/** Fails unless `items` has `item`; the message shows the items. */
export function assertHas<T>(items: readonly T[], item: T): void {
  if (items.includes(item)) return;
  fail(`expected ${JSON.stringify(item)} in ${JSON.stringify(items)}`, items, item, "has");
}
