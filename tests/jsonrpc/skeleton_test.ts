/** The skeleton of a large line: long strings stay bytes, and come back byte for byte. */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  isPlaceholder,
  isUtf8,
  LONG_STRING_BYTES,
  materializeJson,
  nextSpecial,
  parseSkeleton,
  serializeSkeleton,
} from "../../lib/jsonrpc/skeleton.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Decodes each chunk as it comes, as the writer writes it: the line is given back after the last. */
const out = (chunks: Iterable<Uint8Array>) => {
  let text = "";
  for (const chunk of chunks) text += dec.decode(chunk);
  return text;
};
const long = (unit: string) => unit.repeat(Math.ceil((LONG_STRING_BYTES + 10) / unit.length));

Deno.test("skeleton: a line without a long string is left to the usual parse", () => {
  strictEqual(parseSkeleton(enc.encode('{"a":"short"}')), undefined);
});

Deno.test("skeleton: long strings with escapes, multi-byte text and keys come back byte for byte", () => {
  for (
    const content of [
      long("a"),
      long('\\"quoted\\" \\\\ \\n \\u00e9 '),
      long("é漢字🙂"),
      long("x") + "\\\\",
    ]
  ) {
    const text =
      `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"${content}"}],` +
      `"${content}":1,"short":"s\\"A"}}`;
    const sk = parseSkeleton(enc.encode(text));
    if (sk === undefined || sk === "invalid") throw new Error("expected a skeleton");
    strictEqual(sk.ranges.length, 2);
    const written = out(serializeSkeleton(sk.value, sk));
    strictEqual(written, text + "\n");
    deepStrictEqual(JSON.parse(written), JSON.parse(text));
  }
});

Deno.test("skeleton: a placeholder keeps the start of its string, so rules can read a scheme", () => {
  const src = "data:image/png;base64," + long("QUJD");
  const sk = parseSkeleton(enc.encode(JSON.stringify({ result: { icons: [{ src }] } })));
  if (sk === undefined || sk === "invalid") throw new Error("expected a skeleton");
  const value = (sk.value as { result: { icons: { src: string }[] } }).result.icons[0]!.src;
  strictEqual(value.startsWith("data:image/png;base64,QUJD"), true);
  strictEqual(isPlaceholder(value, sk), true);
  strictEqual(value.length < 400, true);
});

Deno.test("skeleton: the rules may change the skeleton; the long strings follow their values", () => {
  const a = long("a");
  const b = long("b");
  const sk = parseSkeleton(
    enc.encode(JSON.stringify({ result: { x: a, y: b, resultType: "complete" } })),
  );
  if (sk === undefined || sk === "invalid") throw new Error("expected a skeleton");
  const result = (sk.value as { result: Record<string, unknown> }).result;
  delete result.resultType;
  result.z = result.x;
  delete result.x;
  deepStrictEqual(JSON.parse(out(serializeSkeleton(sk.value, sk))), { result: { y: b, z: a } });
});

Deno.test("skeleton: a placeholder inside a serialized text is not replaced; materializeJson gives it whole", () => {
  const a = long("a");
  const sk = parseSkeleton(enc.encode(JSON.stringify({ result: { structuredContent: { a } } })));
  if (sk === undefined || sk === "invalid") throw new Error("expected a skeleton");
  const result = (sk.value as { result: Record<string, unknown> }).result;
  const mirror = materializeJson(JSON.stringify(result.structuredContent), sk);
  strictEqual(mirror, JSON.stringify({ a }));
  result.content = [{ type: "text", text: mirror }];
  deepStrictEqual(JSON.parse(out(serializeSkeleton(sk.value, sk))).result, {
    structuredContent: { a },
    content: [{ type: "text", text: JSON.stringify({ a }) }],
  });
});

Deno.test("skeleton: what JSON.parse refuses in a long string is refused", () => {
  const bad = [
    `{"a":"${long("a")}\u0001"}`, // a control character
    `{"a":"${long("a")}\\x"}`, // an escape that is not valid
    `{"a":"${long("a")}\\u12G4"}`,
    `{"a":"${long("a")}`, // no closing quote
    `{"a":"${long("a")}",}`, // the skeleton is not valid JSON
  ];
  for (const text of bad) strictEqual(parseSkeleton(enc.encode(text)), "invalid", text.slice(-12));
  const invalidUtf8 = enc.encode(`{"a":"${long("a")}"}`);
  invalidUtf8[10] = 0xff;
  strictEqual(parseSkeleton(invalidUtf8), "invalid");
});

Deno.test("skeleton: a control character is found at every alignment of a long string", () => {
  for (const at of [0, 1, 2, 3, 4, 5, 1000, LONG_STRING_BYTES + 5]) {
    const content = long("a").split("");
    content[at] = "\u0007";
    const bytes = enc.encode(`{"a":"${content.join("")}"}`);
    strictEqual(parseSkeleton(bytes), "invalid", `at ${at}`);
    strictEqual(parseSkeleton(bytes.subarray(0)), "invalid");
  }
  // Bytes of 0x80 and above (UTF-8) are not control characters.
  const sk = parseSkeleton(enc.encode(`{"a":"${long("\u00ff\u0080é")}"}`));
  strictEqual(typeof sk, "object");
});

Deno.test("nextSpecial finds the first quote, backslash or control byte, as a byte-by-byte search does", () => {
  // A fixed seed: the same bytes on every run.
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  // Mostly plain bytes (with every byte of 0x80 and above, and the neighbours
  // of the three kinds), rarely a special one: long runs for the word loop.
  const plain = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x41, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 0xe2];
  const special = [0x22, 0x5c, 0x00, 0x01, 0x1f, 0x0a];
  const reference = (bytes: Uint8Array, from: number) => {
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (c === 0x22 || c === 0x5c || c < 0x20) return i;
    }
    return -1;
  };
  for (let round = 0; round < 400; round++) {
    const buffer = new Uint8Array(300);
    for (let i = 0; i < buffer.length; i++) {
      const pool = random() < 0.01 ? special : plain;
      buffer[i] = pool[Math.floor(random() * pool.length)]!;
    }
    // Every alignment of the view and of the start.
    const view = buffer.subarray(round % 4);
    const from = Math.floor(random() * 80);
    strictEqual(nextSpecial(view, from), reference(view, from), `round ${round}`);
  }
});

Deno.test("nextSpecial finds a special byte on each side of the 256 KiB blocks of its scan", () => {
  const block = 256 * 1024;
  const bytes = new Uint8Array(4 * block + 64).fill(0x41);
  for (const at of [block - 1, block, block + 1, 2 * block + 3, 3 * block - 2, 4 * block + 63]) {
    for (const special of [0x22, 0x5c, 0x1f]) {
      bytes[at] = special;
      for (const from of [0, 1, 5]) {
        strictEqual(nextSpecial(bytes, from), at, `${special} at ${at}`);
      }
      bytes[at] = 0x41;
    }
  }
  strictEqual(nextSpecial(bytes, 0), -1);
});

Deno.test("skeleton: the line that is the whole of its buffer is given back after its last chunk, not before", () => {
  const text = JSON.stringify({ result: { a: long("a") } });
  const line = enc.encode(text);
  strictEqual(line.byteLength, line.buffer.byteLength);
  const sk = parseSkeleton(line);
  if (sk === undefined || sk === "invalid") throw new Error("expected a skeleton");
  const chunks = serializeSkeleton(sk.value, sk);
  let written = "";
  for (const chunk of chunks) {
    strictEqual(line.buffer.detached, false, "released before a chunk was written");
    written += dec.decode(chunk);
  }
  strictEqual(written, text + "\n");
  strictEqual(line.buffer.detached, true);
  // A line that is a view of a larger buffer (someone else's bytes around it) is left alone.
  const outer = enc.encode(" " + text + " ");
  const view = outer.subarray(1, outer.length - 1);
  const sk2 = parseSkeleton(view);
  if (sk2 === undefined || sk2 === "invalid") throw new Error("expected a skeleton");
  strictEqual(out(serializeSkeleton(sk2.value, sk2)), text + "\n");
  strictEqual(outer.buffer.detached, false);
});

Deno.test("isUtf8: checked a piece at a time, a sequence cut by a piece's end is whole, a cut one at the end is not", () => {
  const text = "é€𝄞".repeat(300_000); // 2, 3 and 4 bytes; 2.7 MB, so pieces end inside sequences
  const bytes = new TextEncoder().encode(text);
  strictEqual(isUtf8(bytes), true);
  strictEqual(isUtf8(bytes.subarray(0, bytes.length - 1)), false);
  const broken = bytes.slice();
  broken[1024 * 1024 + 1] = 0xff;
  strictEqual(isUtf8(broken), false);
  strictEqual(isUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), true); // a BOM is UTF-8
  strictEqual(isUtf8(new Uint8Array([0xed, 0xa0, 0x80])), false); // a surrogate is not
  strictEqual(isUtf8(new Uint8Array()), true);
});
