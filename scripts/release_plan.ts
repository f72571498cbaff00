/**
 * The first job of the release workflow: checks that the tag is the version
 * of deno.json and of lib/version.ts, and gives the later jobs the targets
 * of `scripts/release_targets.json` (their matrix) and the version, as
 * `name=value` lines for `$GITHUB_OUTPUT` (stdout when it is not set).
 *
 * Run: `GITHUB_REF_NAME=v1.2.3 deno run -P=test scripts/release_plan.ts`
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { VERSION } from "../lib/version.ts";
import { assetName, npmPackageName, TARGETS } from "./release_targets.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

/** The outputs of the plan for a tag, or a reason why the tag cannot be released. */
export async function plan(tag: string): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`)) as { version?: string };
  const version = tag.replace(/^v/, "");
  if (version !== config.version || version !== VERSION) {
    throw new Error(
      `the tag ${tag} is not the version of deno.json (${config.version}) and lib/version.ts (${VERSION})`,
    );
  }
  const matrix = TARGETS.map((t) => ({
    ...t,
    asset: assetName(t),
    npm: npmPackageName(t),
  }));
  return { version, targets: JSON.stringify(matrix) };
}

if (import.meta.main) {
  try {
    const outputs = await plan(Deno.env.get("GITHUB_REF_NAME") ?? "");
    const text = Object.entries(outputs).map(([k, v]) => `${k}=${v}\n`).join("");
    const file = Deno.env.get("GITHUB_OUTPUT");
    if (file) await Deno.writeTextFile(file, text, { append: true });
    else Deno.stdout.writeSync(new TextEncoder().encode(text));
  } catch (error) {
    Deno.stderr.writeSync(new TextEncoder().encode(`release plan: ${(error as Error).message}\n`));
    Deno.exit(1);
  }
}
