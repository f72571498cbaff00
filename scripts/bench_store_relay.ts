/**
 * A store-and-forward relay for the benchmark: like `bench_relay.ts` it
 * copies bytes between the client and the upstream command without reading
 * them, but a line of the upstream goes to the client only once it is whole.
 * That is the least any bridge must do to follow the spec: its rules apply to
 * each complete result before the client gets it, and a line that is not
 * valid UTF-8 or JSON must become one error response, so no byte of a line
 * can leave before its last byte is in. This relay does nothing else (no
 * parse, no check), so the time of a large result through it is the floor
 * of the bridge, where the plain relay's is the floor of a byte stream.
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

/** Writes all of `bytes` to stdout. */
async function writeAll(bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await Deno.stdout.write(bytes.subarray(at));
}

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
