import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { EMPTY_ENTRY, serverKey, StoreError, TokenStore } from "../../lib/auth/store.ts";
import { FAST_LOCK } from "./harness.ts";

const URL_A = "https://mcp.example/mcp?key=secret-key";

async function tempStore(): Promise<{ dir: string; store: TokenStore }> {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  return { dir, store: await TokenStore.open(`${dir}/store`, FAST_LOCK) };
}

Deno.test("the store directory is 0700 and its files 0600, even from a loose umask", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  try {
    await Deno.mkdir(`${dir}/store`, { mode: 0o755 });
    await Deno.chmod(`${dir}/store`, 0o755);
    const store = await TokenStore.open(`${dir}/store`);
    strictEqual((await Deno.stat(store.dir)).mode! & 0o777, 0o700);
    await store.write(URL_A, { clients: [], issuer: "https://as.example" });
    for await (const file of Deno.readDir(store.dir)) {
      strictEqual((await Deno.stat(`${store.dir}/${file.name}`)).mode! & 0o777, 0o600);
      ok(!file.name.includes("mcp.example"), "the file name is a hash, not the URL");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a store that does not open is a StoreError that names the directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    await rejects(TokenStore.open(`${dir}/file/store`), (error) => {
      ok(error instanceof StoreError);
      ok(error.message.includes(`${dir}/file/store`));
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writes are atomic and a damaged file reads as an empty entry", async () => {
  const { dir, store } = await tempStore();
  try {
    await store.write(URL_A, { clients: [], issuer: "one" });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.write(URL_A, { clients: [], issuer: `w${i}` })),
    );
    ok((await store.read(URL_A)).issuer?.startsWith("w"));
    const names = [...Deno.readDirSync(store.dir)].map((f) => f.name);
    deepStrictEqual(names.filter((n) => n.endsWith(".tmp")), [], "no temporary file is left");
    await Deno.writeTextFile(`${store.dir}/${await serverKey(URL_A)}.json`, "{not json");
    deepStrictEqual(await store.read(URL_A), EMPTY_ENTRY);
    ok(await store.remove(URL_A));
    ok(!await store.remove(URL_A));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the lock lets one holder in at a time", async () => {
  const { dir, store } = await tempStore();
  try {
    const order: string[] = [];
    const signal = AbortSignal.timeout(5_000);
    await Promise.all([1, 2, 3].map((n) =>
      store.withLock(URL_A, signal, async () => {
        order.push(`in${n}`);
        await new Promise((r) => setTimeout(r, 30));
        order.push(`out${n}`);
      })
    ));
    for (let i = 0; i < order.length; i += 2) {
      strictEqual(order[i]!.slice(2), order[i + 1]!.slice(3), order.join(" "));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a waiter stops waiting when its signal aborts", async () => {
  const { dir, store } = await tempStore();
  try {
    let release!: () => void;
    const held = store.withLock(
      URL_A,
      AbortSignal.timeout(5_000),
      () => new Promise<void>((r) => release = r),
    );
    await new Promise((r) => setTimeout(r, 20));
    await rejects(store.withLock(URL_A, AbortSignal.timeout(100), () => Promise.resolve()));
    release();
    await held;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a holder that crashed (SIGKILL) blocks the next one only until its heartbeat is stale", async () => {
  const { dir, store } = await tempStore();
  try {
    const holder = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-q",
        "--allow-read",
        "--allow-write",
        new URL("../fixtures/auth/lock_holder.ts", import.meta.url).pathname,
        store.dir,
        URL_A,
        String(FAST_LOCK.staleMs),
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    strictEqual((await reader.read()).value?.trim(), "locked");
    holder.kill("SIGKILL");
    await holder.status;
    reader.releaseLock();
    await holder.stdout.cancel().catch(() => {});
    const start = Date.now();
    await store.withLock(URL_A, AbortSignal.timeout(5_000), () => Promise.resolve());
    const waited = Date.now() - start;
    ok(waited >= FAST_LOCK.staleMs / 2, `waited ${waited} ms: the lock was held`);
    ok(waited < FAST_LOCK.staleMs * 4, `waited ${waited} ms`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
