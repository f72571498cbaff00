/**
 * The token store of the sign-in: per server URL one file with the issuer of
 * its authorization server, the client registrations (keyed by issuer and
 * redirect URI) and the tokens. Files are 0600 in a 0700 directory and are
 * written atomically (a temporary file, then a rename). A lock file per
 * server makes parallel bridges of one server share one sign-in; a holder
 * that crashed stops holding it when its heartbeat gets old.
 *
 * @module
 */

import { join } from "node:path";

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

/** How long a lock lives without a heartbeat, and how often the holder beats. */
export interface LockTimes {
  readonly staleMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
}

/** The default lock times: a crashed holder blocks others for at most 10 s. */
export const DEFAULT_LOCK_TIMES: LockTimes = { staleMs: 10_000, heartbeatMs: 2_000, pollMs: 100 };

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
 * The store in one directory. `open` makes the directory (0700) and checks
 * that it can write there.
 *
 * @example
 * ```ts
 * import { TokenStore } from "./store.ts";
 * const dir = await Deno.makeTempDir();
 * const store = await TokenStore.open(dir);
 * await store.write("https://mcp.example/mcp", { clients: [], issuer: "https://as.example" });
 * const entry = await store.read("https://mcp.example/mcp");
 * if (entry.issuer !== "https://as.example") throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class TokenStore {
  readonly dir: string;
  readonly #lockTimes: LockTimes;

  private constructor(dir: string, lockTimes: LockTimes) {
    this.dir = dir;
    this.#lockTimes = lockTimes;
  }

  /** Opens (and makes) the store; rejects with a `StoreError` when it cannot. */
  static async open(dir: string, lockTimes: LockTimes = DEFAULT_LOCK_TIMES): Promise<TokenStore> {
    try {
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      if (Deno.build.os !== "windows") {
        const info = await Deno.stat(dir);
        if (!info.isDirectory) throw new Error("not a directory");
        // mkdir keeps the mode of a directory that exists, and the umask cuts it.
        if ((info.mode ?? 0) & 0o077) await Deno.chmod(dir, 0o700);
      }
      // One fixed name: a bridge killed between the two calls leaves one empty file, not many.
      const probe = join(dir, ".write-probe");
      await Deno.writeFile(probe, new Uint8Array(), { mode: 0o600 });
      await Deno.remove(probe).catch((error) => {
        if (!isNotFound(error)) throw error; // a parallel bridge removed it first
      });
    } catch {
      throw new StoreError(`the token store ${dir} does not open`);
    }
    return new TokenStore(dir, lockTimes);
  }

  async #file(serverUrl: string, suffix: string): Promise<string> {
    return join(this.dir, `${await serverKey(serverUrl)}${suffix}`);
  }

  /** The entry of a server (an empty one when the store has none or cannot read it). */
  async read(serverUrl: string): Promise<ServerEntry> {
    let text: string;
    try {
      text = await Deno.readTextFile(await this.#file(serverUrl, ".json"));
    } catch (error) {
      if (isNotFound(error)) return EMPTY_ENTRY;
      throw new StoreError(`the token store ${this.dir} cannot be read`);
    }
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
    try {
      await Deno.remove(await this.#file(serverUrl, ".json"));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw new StoreError(`the token store ${this.dir} cannot be written`);
    }
  }

  /**
   * Runs `work` while holding the lock of a server. It waits for another
   * holder (of this or another process) until that one is done or its
   * heartbeat is older than `staleMs`; `signal` stops the wait.
   */
  async withLock<T>(serverUrl: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const file = await this.#file(serverUrl, ".lock");
    const { staleMs, heartbeatMs, pollMs } = this.#lockTimes;
    const token = crypto.randomUUID();
    for (;;) {
      signal.throwIfAborted();
      try {
        await Deno.writeTextFile(file, `${Deno.pid} ${token}\n`, { createNew: true, mode: 0o600 });
        break;
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) {
          throw new StoreError(`the token store ${this.dir} cannot be written`);
        }
      }
      try {
        const info = await Deno.stat(file);
        const age = Date.now() - (info.mtime?.getTime() ?? 0);
        if (age > staleMs) {
          // The holder stopped beating: it crashed. Only one waiter wins the removal.
          const stale = `${file}.${token}.stale`;
          await Deno.rename(file, stale).then(() => Deno.remove(stale), () => {});
          continue;
        }
      } catch (error) {
        if (!isNotFound(error)) throw new StoreError(`the token store ${this.dir} cannot be read`);
        continue;
      }
      await abortableDelay(pollMs, signal);
    }
    const beat = setInterval(() => {
      const now = new Date();
      Deno.utime(file, now, now).catch(() => {});
    }, heartbeatMs);
    try {
      return await work();
    } finally {
      clearInterval(beat);
      try {
        // Remove only our own lock: a waiter may have taken it over as stale.
        if ((await Deno.readTextFile(file)).includes(token)) await Deno.remove(file);
      } catch {
        // Gone already.
      }
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
