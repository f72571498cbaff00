/**
 * A plain relay for the benchmark: a Deno process that copies bytes between
 * the client and the upstream command without reading them. It shows what
 * one more process costs on this machine, before any work of the bridge.
 *
 * @module
 */

const [command, ...args] = Deno.args;
if (command === undefined) Deno.exit(2);
const child = new Deno.Command(command, {
  args,
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
Deno.stdin.readable.pipeTo(child.stdin).catch(() => {});
await child.stdout.pipeTo(Deno.stdout.writable).catch(() => {});
