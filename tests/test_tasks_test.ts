/**
 * The two test tasks of deno.json: `test:unit` (everything but the tests
 * that start the real program) and `test:process` (those) together hold
 * every test file under tests/ exactly once, and `test` runs both in one
 * `deno test` (one type check, one pool of workers: the long process tests
 * overlap the unit tests instead of waiting for the last of them).
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { relative } from "node:path";

const ROOT = new URL("../", import.meta.url);

/** The test files under `dir`, relative to the root, with `/`. */
async function testFiles(dir: URL): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) out.push(...await testFiles(url));
    else if (/_test\.(ts|mts|js|mjs|tsx|jsx)$/.test(entry.name)) {
      out.push(relative(ROOT.pathname, url.pathname));
    }
  }
  return out;
}

/** The path arguments and the `--ignore=` list of a `deno test` task. */
function testPaths(task: string): { paths: string[]; ignore: string[] } {
  const words = task.split(/\s+/).filter((w) => w !== "");
  ok(words[0] === "deno" && words[1] === "test", task);
  const paths = words.slice(2).filter((w) => !w.startsWith("-"));
  const ignore = words.flatMap((w) =>
    w.startsWith("--ignore=") ? w.slice("--ignore=".length).split(",") : []
  );
  return { paths, ignore };
}

const under = (file: string, prefix: string) =>
  prefix.endsWith("/") ? file.startsWith(prefix) : file === prefix || file.startsWith(prefix + "/");

/** Whether `deno test` with these paths and ignores (none: the whole project) runs `file`. */
function runs(file: string, { paths, ignore }: { paths: string[]; ignore: string[] }): boolean {
  if (ignore.some((prefix) => under(file, prefix))) return false;
  return paths.length === 0 || paths.some((prefix) => under(file, prefix));
}

/** The flags of a `deno test` task. */
const flags = (task: string) => task.split(/\s+/).filter((w) => w.startsWith("-")).sort();

Deno.test("test:unit and test:process hold every test file under tests/ exactly once; test runs both", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const tasks = config.tasks as Record<string, string>;
  const unit = testPaths(tasks["test:unit"]!);
  const process = testPaths(tasks["test:process"]!);
  const all = testPaths(tasks.test!);
  // The doc tests (the @example blocks of lib/) run in one set, and in test.
  ok(tasks["test:unit"]!.includes("--doc") !== tasks["test:process"]!.includes("--doc"));
  ok(tasks.test!.includes("--doc"));
  // test has the permissions and the parallel runs of both sets.
  deepStrictEqual(
    flags(tasks.test!),
    flags(tasks["test:process"]!).concat("--doc").sort(),
  );
  const files = await testFiles(new URL("tests/", ROOT));
  ok(files.length > 50, `only ${files.length} test files found`);
  const wrong = files.filter((file) => runs(file, unit) === runs(file, process));
  deepStrictEqual(wrong, [], "in neither set or in both");
  deepStrictEqual(files.filter((file) => !runs(file, all)), [], "not run by test");
  // The process set is the tests that start programs: every file of it is in one of its folders.
  ok(files.some((file) => runs(file, process) && file.startsWith("tests/process/")));
  ok(files.some((file) => runs(file, unit) && file.startsWith("tests/upstream/")));
});
