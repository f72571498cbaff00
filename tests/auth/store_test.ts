import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import {
  EMPTY_ENTRY,
  serverKey,
  StoreError,
  TokenStore,
  UnsafeStoreError,
} from "../../lib/auth/store.ts";
import { FakeTime } from "../fake_time.ts";
import { waitFor } from "../wait.ts";
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

Deno.test("a waiter polls the lock every 100 ms: a lock freed between two polls is taken at the next one (fake time)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  const time = new FakeTime();
  const store = await TokenStore.open(`${dir}/store`, { pollMs: 100, clock: time });
  try {
    let release!: () => void;
    const held = store.withLock(
      URL_A,
      AbortSignal.timeout(5_000),
      () => new Promise<void>((r) => release = r),
    );
    await waitFor("the holder", () => release !== undefined);
    let entered = false;
    const waiter = store.withLock(URL_A, AbortSignal.timeout(5_000), () => {
      entered = true;
      return Promise.resolve();
    });
    // The waiter found the lock held and waits for its next poll.
    await waitFor("the first poll", () => time.pending.length === 1);
    deepStrictEqual(time.pending, [100]);
    await time.tick(60);
    release();
    await held;
    await time.tick(39);
    ok(!entered, "the waiter tried again before its 100 ms");
    await time.tick(1);
    await waiter;
    ok(entered);
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
    await rejects(store.withLock(URL_A, AbortSignal.timeout(50), () => Promise.resolve()));
    release();
    await held;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a holder that crashed (SIGKILL) frees the lock at once", async () => {
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
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    strictEqual((await reader.read()).value?.trim(), "locked");
    // The lock is held: a waiter with a short limit gives up.
    await rejects(store.withLock(URL_A, AbortSignal.timeout(50), () => Promise.resolve()));
    holder.kill("SIGKILL");
    await holder.status;
    reader.releaseLock();
    await holder.stdout.cancel().catch(() => {});
    const start = Date.now();
    await store.withLock(URL_A, AbortSignal.timeout(5_000), () => Promise.resolve());
    const waited = Date.now() - start;
    ok(waited < 500, `waited ${waited} ms for the lock of a killed holder`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a link planted at a file name of the store is never followed: its target stays intact", async () => {
  const { dir, store } = await tempStore();
  try {
    const key = await serverKey(URL_A);
    const planted = JSON.stringify({
      server: URL_A,
      entry: { issuer: "https://planted.example", clients: [] },
    });
    const targets: string[] = [];
    for (const name of [".write-probe", `${key}.json`, `${key}.lock`]) {
      const target = `${dir}/target-${name}`;
      await Deno.writeTextFile(target, planted);
      await Deno.symlink(target, `${store.dir}/${name}`);
      targets.push(target);
    }
    await TokenStore.open(store.dir, FAST_LOCK);
    deepStrictEqual(await store.read(URL_A), EMPTY_ENTRY, "the token file's link is not read");
    await store.withLock(URL_A, AbortSignal.timeout(5_000), async () => {
      await store.write(URL_A, { clients: [], issuer: "https://as.example" });
    });
    strictEqual((await store.read(URL_A)).issuer, "https://as.example");
    for (const target of targets) strictEqual(await Deno.readTextFile(target), planted, target);
    ok((await Deno.lstat(`${store.dir}/${key}.json`)).isFile, "the write replaced the link");
    ok((await Deno.lstat(`${store.dir}/${key}.lock`)).isFile, "the lock replaced the link");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a store directory that group or others can write is refused with the fix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  try {
    for (const mode of [0o770, 0o707, 0o777]) {
      await Deno.mkdir(`${dir}/store`, { recursive: true });
      await Deno.chmod(`${dir}/store`, mode);
      await rejects(TokenStore.open(`${dir}/store`), (error) => {
        ok(error instanceof UnsafeStoreError, String(error));
        strictEqual(
          error.message,
          `the token store ${dir}/store can be written by group or others: run chmod 700 ${dir}/store`,
        );
        return true;
      });
      strictEqual((await Deno.stat(`${dir}/store`)).mode! & 0o777, mode, "left as it was");
    }
    await Deno.chmod(`${dir}/store`, 0o700);
    await TokenStore.open(`${dir}/store`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the store opens only when needed: a read makes nothing and writes nothing; the first write makes the directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  try {
    const store = TokenStore.at(`${dir}/store`);
    deepStrictEqual(await store.read(URL_A), EMPTY_ENTRY);
    deepStrictEqual([...Deno.readDirSync(dir)], [], "no directory made by a read");
    await store.write(URL_A, { clients: [], issuer: "https://as.example" });
    strictEqual((await Deno.stat(`${dir}/store`)).mode! & 0o777, 0o700);
    // A new store on the directory (a restart): its reads change nothing, not even the mode.
    await Deno.chmod(`${dir}/store`, 0o750);
    const names = () => [...Deno.readDirSync(`${dir}/store`)].map((f) => f.name).sort();
    const before = names();
    const mtime = (await Deno.stat(`${dir}/store`)).mtime?.getTime();
    const again = TokenStore.at(`${dir}/store`);
    strictEqual((await again.read(URL_A)).issuer, "https://as.example");
    deepStrictEqual(names(), before, "no probe, no lock file");
    strictEqual((await Deno.stat(`${dir}/store`)).mtime?.getTime(), mtime);
    strictEqual((await Deno.stat(`${dir}/store`)).mode! & 0o777, 0o750, "no chmod by a read");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a read refuses a store directory that group or others can write, without changing it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "auth-store-" });
  try {
    await Deno.mkdir(`${dir}/store`);
    await Deno.chmod(`${dir}/store`, 0o777);
    await rejects(TokenStore.at(`${dir}/store`).read(URL_A), (error) => {
      ok(error instanceof UnsafeStoreError);
      ok(error.message.includes("chmod 700"), error.message);
      return true;
    });
    strictEqual((await Deno.stat(`${dir}/store`)).mode! & 0o777, 0o777);
    // A path under a file cannot be read as a store: a StoreError, not a crash.
    await Deno.writeTextFile(`${dir}/file`, "");
    await rejects(TokenStore.at(`${dir}/file`).read(URL_A), StoreError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
