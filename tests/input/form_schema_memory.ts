/**
 * Compiles `count` forms, each with its own `$id`, and prints the growth of
 * the heap after a full garbage collection, in bytes. Run with
 * `--v8-flags=--expose-gc,--no-compilation-cache` by form_schema_test.ts.
 */

import { compileSchema } from "../../lib/input/form_schema.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const count = Number(Deno.args[0] ?? 5000);
const form = (i: number | string) => ({
  $id: `https://forms.example/${i}`,
  type: "object",
  properties: { name: { type: "string", minLength: 2, pattern: `^n${i}` } },
  required: ["name"],
});
// The shared meta-schema checkers and the first instance are made before the measure.
for (let i = 0; i < 50; i++) compileSchema(form(`warm-${i}`));
gc();
const before = Deno.memoryUsage().heapUsed;
for (let i = 0; i < count; i++) {
  const check = compileSchema(form(i));
  if (!check?.({ name: `n${i}x` })) throw new Error(`form ${i} does not compile`);
}
gc();
const after = Deno.memoryUsage().heapUsed;
Deno.stdout.writeSync(new TextEncoder().encode(`${after - before}\n`));
