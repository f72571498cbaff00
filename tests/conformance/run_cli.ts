/**
 * Runs the CLI of `@modelcontextprotocol/conformance` under Deno with its
 * servers on 127.0.0.1 (`loopback_cli.ts`), and gives its whole output.
 */

/** The root of the checkout, with its trailing slash. */
export const ROOT = new URL("../../", import.meta.url).pathname;
const CLI = `${ROOT}tests/conformance/loopback_cli.ts`;
const CLI_PERMISSIONS = [
  "--allow-net=127.0.0.1,localhost",
  "--allow-run",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-sys",
];

/** The stdout and stderr of the conformance CLI run with `args`. */
export async function conformance(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", ...CLI_PERMISSIONS, CLI, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return dec.decode(out.stdout) + dec.decode(out.stderr);
}
