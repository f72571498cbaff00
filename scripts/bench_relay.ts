/**
 * A plain relay for the benchmark: a Deno process that copies bytes between
 * the client and the upstream command without reading them. It shows what
 * one more process costs on this machine, before any work of the bridge.
 *
 * With `--store` first, it is a store-and-forward relay: a line of the
 * upstream goes to the client only once it is whole. That is the least any
 * bridge must do to follow the spec: its rules apply to each complete result
 * before the client gets it, and a line that is not valid UTF-8 or JSON must
 * become one error response, so no byte of a line can leave before its last
 * byte is in. It does nothing else (no parse, no check), so the time of a
 * large result through it is the floor of the bridge, where the plain
 * relay's is the floor of a byte stream.
 *
 * @module
 */

const store = Deno.args[0] === "--store";
const [command, ...args] = store ? Deno.args.slice(1) : Deno.args;
if (command === undefined) Deno.exit(2);
const child = new Deno.Command(command, {
  args,
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
Deno.stdin.readable.pipeTo(child.stdin).catch(() => {});
if (!store) {
  await child.stdout.pipeTo(Deno.stdout.writable).catch(() => {});
} else {
  /** Writes all of `bytes` to stdout. */
  const writeAll = async (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length;) at += await Deno.stdout.write(bytes.subarray(at));
  };
  // The chunks of the line that is not whole yet; each read gets a buffer of its own.
  let held: Uint8Array[] = [];
  const reader = child.stdout.getReader({ mode: "byob" });
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(256 * 1024));
    if (done || !value) break;
    const end = value.lastIndexOf(0x0a);
    if (end === -1) {
      held.push(value);
      continue;
    }
    for (const chunk of held) await writeAll(chunk);
    held = [];
    await writeAll(value.subarray(0, end + 1));
    if (end + 1 < value.length) held.push(value.subarray(end + 1));
  }
  for (const chunk of held) await writeAll(chunk);
}
