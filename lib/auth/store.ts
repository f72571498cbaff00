/**
 * The token store of the sign-in: per server URL one file with the issuer of
 * its authorization server, the client registrations (keyed by issuer and
 * redirect URI) and the tokens. Files are 0600 in a 0700 directory and are
 * written atomically (a temporary file, then a rename). No file is opened
 * through a symbolic link: new files are made exclusively, and a file that
 * is read is checked with lstat. The directory must belong to the user and
 * be closed to group and others (as ssh's StrictModes). The store opens only
 * when it is needed: reads write nothing, and only a write, a remove or a
 * lock makes the directory. An OS lock per
 * server (`Deno.FsFile.tryLock`) makes parallel bridges of one server share
 * one sign-in; the OS frees it when its holder dies.
 *
 * @module
 */

import { join } from "node:path";
import type { Clock } from "../clock.ts";
import { abortableDelay } from "../jsonrpc/abortable.ts";

/** A client registration of the bridge at one authorization server. */
export interface StoredClient {
  readonly issuer: string;
  readonly redirectUri: string;
  /** The client information as the authorization server gave it (client_id, secret...). */
  readonly client: Readonly<Record<string, unknown>> & { readonly client_id: string };
}

/** The tokens of one server. */
export interface StoredTokens {
  readonly accessToken: string;
  readonly tokenType: string;
  readonly refreshToken?: string;
  /** Milliseconds since the epoch; absent when the server gave no lifetime. */
  readonly expiresAt?: number;
  /** The scope that was granted (or asked for, when the server did not say). */
  readonly scope?: string;
  /** The scope the bridge asked for: a step-up asks for it and more. */
  readonly requestedScope?: string;
}

/** What the store keeps for one server URL. */
export interface ServerEntry {
  /** The issuer of the authorization server of the tokens. */
  readonly issuer?: string;
  /** The client ID the tokens were issued to (for a revocation at logout). */
  readonly clientId?: string;
  /** The resource indicator (RFC 8707) the tokens are for. */
  readonly resource?: string;
  readonly clients: readonly StoredClient[];
  readonly tokens?: StoredTokens;
}

/** The entry of a server that the store does not know yet. */
export const EMPTY_ENTRY: ServerEntry = { clients: [] };

/** The store cannot be used; the message names the directory, never a value. */
export class StoreError extends Error {
  override name = "StoreError";
}

/** The store directory is not safe: another user owns it, or group or others can write it. */
export class UnsafeStoreError extends StoreError {
  override name = "UnsafeStoreError";
}

/** How often a waiter tries the lock again. */
export interface LockTimes {
  readonly pollMs: number;
  /** The clock of the polls; the real one by default (a fake one in tests). */
  readonly clock?: Clock;
}

/** The default lock times: a waiter sees a freed lock (a holder done or killed) within 100 ms. */
export const DEFAULT_LOCK_TIMES: LockTimes = { pollMs: 100 };

/** The default directory: the user's config directory, then `mcp-bridge-vscode/`. */
export function defaultStoreDir(env: (name: string) => string | undefined): string {
  const home = env("HOME") ?? env("USERPROFILE") ?? ".";
  switch (Deno.build.os) {
    case "windows":
      return join(env("APPDATA") ?? join(home, "AppData", "Roaming"), "mcp-bridge-vscode");
    case "darwin":
      return join(home, "Library", "Application Support", "mcp-bridge-vscode");
    default:
      return join(env("XDG_CONFIG_HOME") ?? join(home, ".config"), "mcp-bridge-vscode");
  }
}

/** The file name of a server: a hash, because the URL may hold a key. */
export async function serverKey(serverUrl: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(serverUrl));
  return Array.from(new Uint8Array(digest).slice(0, 16), (b) => b.toString(16).padStart(2, "0"))
    .join("");
}

function isNotFound(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound;
}

/**
 * The user ID of this process without the sys permission: the owner of
 * `/proc/self` (Linux); null where there is none.
 */
function ownUid(): number | null {
  try {
    return Deno.statSync("/proc/self").uid;
  } catch {
    return null;
  }
}

/**
 * The store in one directory. It opens only when it is needed: a read never
 * writes (no directory is made, nothing is probed or changed), and the first
 * write, remove or lock makes the directory (0700) and checks that it can
 * write there. So a bridge that never signs in, or only reads a stored
 * token, runs with a store it cannot write (VS Code's sandbox).
 *
 * @example
 * ```ts
 * import { TokenStore } from "./store.ts";
 * const dir = await Deno.makeTempDir();
 * const store = TokenStore.at(`${dir}/store`);
 * if ((await store.read("https://mcp.example/mcp")).tokens !== undefined) throw new Error();
 * await store.write("https://mcp.example/mcp", { clients: [], issuer: "https://as.example" });
 * const entry = await store.read("https://mcp.example/mcp");
 * if (entry.issuer !== "https://as.example") throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class TokenStore {
  readonly dir: string;
  readonly #lockTimes: LockTimes;
  /** The open for writes, once it succeeded. */
  #opened: Promise<void> | undefined;

  private constructor(dir: string, lockTimes: LockTimes) {
    this.dir = dir;
    this.#lockTimes = lockTimes;
  }

  /** The store in `dir`, not opened: nothing is read or written until it is used. */
  static at(dir: string, lockTimes: LockTimes = DEFAULT_LOCK_TIMES): TokenStore {
    return new TokenStore(dir, lockTimes);
  }

  /**
   * Opens (and makes) the store for writes now; rejects with a `StoreError`
   * when it cannot, and with an `UnsafeStoreError` (its message names the
   * fix) when another user owns the directory or group or others can write
   * it.
   */
  static async open(dir: string, lockTimes: LockTimes = DEFAULT_LOCK_TIMES): Promise<TokenStore> {
    const store = new TokenStore(dir, lockTimes);
    await store.#openForWrites();
    return store;
  }

  /** Makes the directory and checks that it can write there, once; a failure is tried again. */
  #openForWrites(): Promise<void> {
    this.#opened ??= openDir(this.dir).catch((error: unknown) => {
      this.#opened = undefined;
      throw error;
    });
    return this.#opened;
  }

  async #file(serverUrl: string, suffix: string): Promise<string> {
    return join(this.dir, `${await serverKey(serverUrl)}${suffix}`);
  }

  /** The entry of a server (an empty one when the store has none or cannot read it). */
  async read(serverUrl: string): Promise<ServerEntry> {
    if (this.#opened === undefined && !await checkForReads(this.dir)) return EMPTY_ENTRY;
    let text: string | undefined;
    try {
      text = await readRegularFile(await this.#file(serverUrl, ".json"));
    } catch (error) {
      if (isNotFound(error)) return EMPTY_ENTRY;
      throw new StoreError(`the token store ${this.dir} cannot be read`);
    }
    // A link (or anything but a file) is not read: the next write replaces it.
    if (text === undefined) return EMPTY_ENTRY;
    try {
      const value = JSON.parse(text) as { server?: unknown; entry?: ServerEntry };
      // Two URLs with one hash would be a bug of the hash, not a reason to mix their tokens.
      if (value.server !== serverUrl || typeof value.entry !== "object") return EMPTY_ENTRY;
      return {
        ...value.entry,
        clients: Array.isArray(value.entry.clients) ? value.entry.clients : [],
      };
    } catch {
      // A damaged file is a store without an entry: the next sign-in writes a good one.
      return EMPTY_ENTRY;
    }
  }

  /** Writes the entry of a server atomically, mode 0600. */
  async write(serverUrl: string, entry: ServerEntry): Promise<void> {
    await this.#openForWrites();
    const file = await this.#file(serverUrl, ".json");
    const temporary = `${file}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.writeTextFile(temporary, JSON.stringify({ server: serverUrl, entry }), {
        mode: 0o600,
        createNew: true,
      });
      await Deno.rename(temporary, file);
    } catch {
      await Deno.remove(temporary).catch(() => {});
      throw new StoreError(`the token store ${this.dir} cannot be written`);
    }
  }

  /** Removes the entry of a server; true when there was one. */
  async remove(serverUrl: string): Promise<boolean> {
    await this.#openForWrites();
    try {
      await Deno.remove(await this.#file(serverUrl, ".json"));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw new StoreError(`the token store ${this.dir} cannot be written`);
    }
  }

  /**
   * Runs `work` while holding the lock of a server: an OS lock on the file
   * `<key>.lock`, which the OS frees when its holder exits or is killed. It
   * waits for another holder (of this or another process); `signal` stops
   * the wait. The lock file stays: removing it would let two holders lock
   * two files of one name.
   */
  async withLock<T>(serverUrl: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    await this.#openForWrites();
    const file = await this.#file(serverUrl, ".lock");
    const handle = await this.#openLock(file);
    try {
      for (;;) {
        let locked: boolean;
        try {
          locked = await handle.tryLock(true);
        } catch {
          throw new StoreError(`the token store ${this.dir} cannot be locked`);
        }
        if (locked) break;
        await abortableDelay(this.#lockTimes.pollMs, signal, this.#lockTimes.clock);
      }
      return await work();
    } finally {
      // Closing the file frees the lock.
      handle.close();
    }
  }

  /** Opens the lock file without following a link: made exclusively, or checked with lstat. */
  async #openLock(file: string): Promise<Deno.FsFile> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await Deno.open(file, { read: true, write: true, createNew: true, mode: 0o600 });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) break;
      }
      try {
        const handle = await openRegularFile(file);
        if (handle !== undefined) return handle;
        // A link or another kind of file: removed (not its target), then made anew.
        await Deno.remove(file);
      } catch (error) {
        if (!isNotFound(error)) break;
      }
    }
    throw new StoreError(`the token store ${this.dir} cannot be locked`);
  }
}

/** Makes the directory (0700) and checks that this process can write there and owns it. */
async function openDir(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    info = await Deno.stat(dir);
  } catch {
    throw new StoreError(`the token store ${dir} does not open`);
  }
  if (!info.isDirectory) throw new StoreError(`the token store ${dir} does not open`);
  let uid: number | null;
  try {
    // Made exclusively: a link planted at the name is never followed. Its owner is
    // this process's user (Deno.uid would need the sys permission).
    const probe = join(dir, `.write-probe.${crypto.randomUUID()}`);
    await Deno.writeFile(probe, new Uint8Array(), { mode: 0o600, createNew: true });
    uid = (await Deno.lstat(probe)).uid;
    await Deno.remove(probe);
  } catch {
    throw new StoreError(`the token store ${dir} does not open`);
  }
  if (Deno.build.os !== "windows") await checkOwner(dir, info, uid);
}

/**
 * The checks of a read, which change nothing: false when the directory does
 * not exist (the store is empty). A directory that another user owns, or
 * that group or others can write, is refused as at an open.
 */
async function checkForReads(dir: string): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw new StoreError(`the token store ${dir} cannot be read`);
  }
  if (!info.isDirectory) throw new StoreError(`the token store ${dir} cannot be read`);
  if (Deno.build.os === "windows") return true;
  const uid = ownUid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new UnsafeStoreError(
      `the token store ${dir} belongs to another user: give a directory of your own with --token-store`,
    );
  }
  if ((info.mode ?? 0) & 0o022) {
    throw new UnsafeStoreError(
      `the token store ${dir} can be written by group or others: run chmod 700 ${dir}`,
    );
  }
  return true;
}

/**
 * Refuses a store directory that another user owns or that group or others
 * can write (as ssh's StrictModes), and closes one that others can read.
 */
async function checkOwner(dir: string, info: Deno.FileInfo, uid: number | null): Promise<void> {
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new UnsafeStoreError(
      `the token store ${dir} belongs to another user: give a directory of your own with --token-store`,
    );
  }
  const mode = info.mode ?? 0;
  if (mode & 0o022) {
    throw new UnsafeStoreError(
      `the token store ${dir} can be written by group or others: run chmod 700 ${dir}`,
    );
  }
  // mkdir keeps the mode of a directory that exists, and the umask cuts it.
  if (mode & 0o077) {
    try {
      await Deno.chmod(dir, 0o700);
    } catch {
      throw new StoreError(`the token store ${dir} does not open`);
    }
  }
}

/**
 * Opens a regular file for reading and writing without following a link:
 * undefined when the name is a link or not a regular file. The lstat before
 * and the fstat after the open must name one file, so a link put there in
 * between is caught too.
 */
async function openRegularFile(path: string): Promise<Deno.FsFile | undefined> {
  const before = await Deno.lstat(path);
  if (!before.isFile) return undefined;
  const handle = await Deno.open(path, { read: true });
  try {
    const after = await handle.stat();
    if (after.isFile && after.ino === before.ino && after.dev === before.dev) return handle;
  } catch {
    // Checked below.
  }
  handle.close();
  return undefined;
}

/** The text of a regular file, read without following a link; undefined for a link. */
async function readRegularFile(path: string): Promise<string | undefined> {
  const handle = await openRegularFile(path);
  if (handle === undefined) return undefined;
  // The response reads the file to its end and closes it.
  return await new Response(handle.readable).text();
}
