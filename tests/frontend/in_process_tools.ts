/**
 * What the tests of the in-process bridge (`in_process.ts`) need besides it:
 * the stderr of an upstream child (the bridge's child inherits the stderr of
 * the test, so it is not in the bridge's log), the console of an upstream
 * server in this process. The v1 SDK client's transport to it is in
 * `v1_client.ts`.
 *
 * @module
 */

/**
 * An upstream command whose stderr goes to a file that the test reads: the
 * command runs under `sh -c 'exec ... 2>>file'`, so it is the same process
 * (`exec`), with the same arguments, signals and exit code.
 */
export class ChildStderr implements Disposable {
  readonly command: string[];
  readonly #file: string;

  constructor(command: string[]) {
    this.#file = Deno.makeTempFileSync({ prefix: "upstream-stderr-" });
    this.command = ["sh", "-c", 'f=$1; shift; exec "$@" 2>>"$f"', "sh", this.#file, ...command];
  }

  /** What the child wrote to its stderr so far. */
  get text(): string {
    try {
      return Deno.readTextFileSync(this.#file);
    } catch {
      return "";
    }
  }

  [Symbol.dispose](): void {
    try {
      Deno.removeSync(this.#file);
    } catch {
      // removed
    }
  }
}

/**
 * The lines of `console.error` while it is held: what an upstream server in
 * this process (the memory link) writes where a child would write its stderr.
 */
export class ConsoleErrors implements Disposable {
  // deno-lint-ignore no-console
  readonly #original = console.error;
  readonly #lines: string[] = [];

  constructor() {
    // deno-lint-ignore no-console
    console.error = (...args: unknown[]) => {
      this.#lines.push(args.map(String).join(" ") + "\n");
    };
  }

  /** The lines so far. */
  get text(): string {
    return this.#lines.join("");
  }

  [Symbol.dispose](): void {
    // deno-lint-ignore no-console
    console.error = this.#original;
  }
}
