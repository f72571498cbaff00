/**
 * The sign-in part of `doctor` (an upstream at a URL without an
 * `Authorization` header of `--header-env`): the token store and its
 * permissions, the stored token and when it expires, and whether the
 * redirect port is free. It reads the store through `lib/auth/store.ts`,
 * only when the directory exists, and prints no token.
 *
 * @module
 */

import { join } from "node:path";
import { type AuthSettings, defaultRedirectPort } from "../auth/options.ts";
import { defaultStoreDir, type ServerEntry, serverKey, TokenStore } from "../auth/store.ts";
import type { Report } from "./report.ts";
import { portIsFree } from "../net/loopback.ts";

/** What the sign-in check found, for the checks after it. */
export interface SignInState {
  readonly storeDir: string;
  /** The stored entry of the server (empty when none). */
  readonly entry: ServerEntry;
  /** True when a stored access token is valid for more than a minute. */
  readonly usableToken: boolean;
}

/** A minute: a token that expires sooner is refreshed before use. */
const MARGIN_MS = 60_000;

/** `in 42 min`, `in 3 h`, `5 min ago`. */
function relative(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  const text = minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

/** The mode bits as `0755`. */
const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * The user's id. The `default` permission set has no `sys` (and a query
 * never prompts, which would stop doctor in a terminal): without it, the
 * owner of a new temporary file tells. Null when neither works.
 */
async function ownUid(): Promise<number | null> {
  try {
    if (Deno.permissions.querySync({ name: "sys", kind: "uid" }).state === "granted") {
      return Deno.uid();
    }
    const probe = await Deno.makeTempFile({ prefix: "mcp-bridge-doctor-" });
    try {
      return (await Deno.lstat(probe)).uid;
    } finally {
      await Deno.remove(probe);
    }
  } catch {
    return null;
  }
}

/** Checks the store directory and the server's file: who owns them, who can read and write. */
async function checkPermissions(dir: string, file: string, report: Report): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(dir);
  } catch {
    report.add("note", `The token store ${dir} does not exist yet: the first sign-in makes it.`);
    return false;
  }
  if (!info.isDirectory) {
    report.add("break", `The token store ${dir} is not a directory: the bridge exits at start.`);
    return false;
  }
  if (Deno.build.os === "windows") return true;
  const uid = await ownUid();
  const mode = info.mode ?? 0;
  if (uid !== null && info.uid !== uid) {
    report.add(
      "break",
      `The token store ${dir} belongs to another user: give --token-store a directory of yours.`,
    );
    return false;
  } else if (mode & 0o022) {
    // The bridge refuses such a store at start (exit 2), as ssh's StrictModes.
    report.add(
      "break",
      `The token store ${dir} can be written by other users (mode ${
        octal(mode)
      }): run chmod 700 on it.`,
    );
    return false;
  } else if (mode & 0o077) {
    report.add(
      "repair",
      `The token store ${dir} has the mode ${octal(mode)}: the bridge sets 0700 at start.`,
    );
  } else {
    report.add("ok", `The token store ${dir} has the mode 0700.`);
  }
  try {
    const fileInfo = await Deno.lstat(file);
    if (fileInfo.isSymlink) {
      report.add(
        "break",
        "The server's file in the token store is a symbolic link: remove it and sign in again.",
      );
    } else if ((fileInfo.mode ?? 0) & 0o077) {
      report.add(
        "break",
        `The server's file in the token store has the mode ${
          octal(fileInfo.mode ?? 0)
        }: other users can read the tokens. Run chmod 600 on it.`,
      );
    }
  } catch {
    // No file: no sign-in stored, said below.
  }
  return true;
}

/** The stored token of the server, in words: present, when it expires, a refresh token. */
function checkTokens(entry: ServerEntry, report: Report): boolean {
  const tokens = entry.tokens;
  if (tokens === undefined) {
    report.add("note", "No token is stored for this server.");
    return false;
  }
  const refresh = tokens.refreshToken !== undefined && tokens.refreshToken !== "";
  if (tokens.expiresAt === undefined) {
    report.add("ok", "A token is stored for this server (the server gave no lifetime).");
    return true;
  }
  const left = tokens.expiresAt - Date.now();
  const at = new Date(tokens.expiresAt).toISOString();
  if (left > MARGIN_MS) {
    report.add("ok", `A token is stored for this server; it expires at ${at} (${relative(left)}).`);
    return true;
  }
  report.add(
    "note",
    `The stored token expires at ${at} (${relative(left)}). ${
      refresh
        ? "A refresh token is stored: the bridge refreshes it at start."
        : "No refresh token is stored: the next start needs a new sign-in."
    }`,
  );
  return false;
}

/**
 * Reports the sign-in state of the server at `serverUrl`. `env` reads the
 * variables (XDG_CONFIG_HOME, HOME...).
 */
export async function checkSignIn(
  settings: AuthSettings,
  serverUrl: string,
  env: (name: string) => string | undefined,
  report: Report,
): Promise<SignInState> {
  const storeDir = settings.tokenStore ?? defaultStoreDir(env);
  const file = join(storeDir, `${await serverKey(serverUrl)}.json`);
  let entry: ServerEntry = { clients: [] };
  if (await checkPermissions(storeDir, file, report)) {
    try {
      // Read only: doctor never writes the store (nor makes its directory).
      entry = await TokenStore.at(storeDir).read(serverUrl);
    } catch {
      report.add("break", `The token store ${storeDir} cannot be read.`);
    }
  }
  const usableToken = checkTokens(entry, report);
  const port = settings.redirectPort ?? await defaultRedirectPort(serverUrl);
  if (portIsFree(port)) {
    report.add("ok", `The redirect port ${port} (http://127.0.0.1:${port}/callback) is free.`);
  } else {
    report.add(
      usableToken ? "note" : "break",
      `The redirect port ${port} is in use by another program: a sign-in cannot listen there. Give --redirect-port another port.`,
    );
  }
  return { storeDir, entry, usableToken };
}

/**
 * The token source of `doctor`: the stored access token while it is valid,
 * never a refresh or a sign-in (no browser, no change to the store). A
 * challenge is recorded and refused.
 */
export class StoredToken {
  /** The status of the first challenge of the server (401 or 403), if one came. */
  challenged: number | undefined;
  readonly #token: string | undefined;

  constructor(state: SignInState | undefined) {
    const tokens = state?.usableToken ? state.entry.tokens : undefined;
    this.#token = tokens && `${tokens.tokenType || "Bearer"} ${tokens.accessToken}`;
  }

  /** The stored token, as the `Authorization` value. */
  authorization(): Promise<string | undefined> {
    return Promise.resolve(this.#token);
  }

  /** Records the challenge and refuses: `doctor` signs in never. */
  challenge(challenge: { readonly status: number }): Promise<"refused"> {
    this.challenged ??= challenge.status;
    return Promise.resolve("refused");
  }

  /** `doctor` has no client to ask. */
  setUrlPrompt(): void {}

  /** Never: `doctor` does not sign in. */
  nextSignIn(): Promise<void> {
    return new Promise(() => {});
  }
}
