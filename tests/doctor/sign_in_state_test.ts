/**
 * The sign-in part of `doctor`, on real directories: each state of the token
 * store (missing, loose but fixable, a server file others can read), the
 * stored token in words, the redirect port in use; and the token source of
 * doctor, which uses a valid stored token and never signs in.
 * tests/doctor/main_test.ts runs the whole doctor (a store of 0700, 0777 and
 * of another user, a token that expires in an hour).
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import type { AuthSettings } from "../../lib/auth/options.ts";
import { type ServerEntry, serverKey, TokenStore } from "../../lib/auth/store.ts";
import { Report } from "../../lib/doctor/report.ts";
import { checkSignIn, type SignInState, StoredToken } from "../../lib/doctor/sign_in_state.ts";
import { freePort } from "../free_port.ts";

const URL_ = "https://mcp.example/mcp";
const NO_ENV = () => undefined;

/** checkSignIn on a fresh store dir (made by the store, 0700) holding `entry`, after `prepare`. */
async function check(
  entry: ServerEntry | undefined,
  prepare: (dir: string, file: string) => Promise<void> = () => Promise.resolve(),
  settings: Partial<AuthSettings> = {},
): Promise<{ state: SignInState; report: Report; dir: string }> {
  const root = await Deno.makeTempDir({ prefix: "doctor-sign-in-" });
  const dir = join(root, "store");
  if (entry) await (await TokenStore.open(dir)).write(URL_, entry);
  await prepare(dir, join(dir, `${await serverKey(URL_)}.json`));
  const report = new Report();
  try {
    const state = await checkSignIn(
      {
        signInTimeoutMs: 1000,
        noBrowser: true,
        tokenStore: dir,
        redirectPort: freePort(),
        ...settings,
      },
      URL_,
      NO_ENV,
      report,
    );
    return { state, report, dir };
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const lines = (report: Report) => report.findings.map((f) => `${f.mark} ${f.text}`);

Deno.test("checkSignIn: a store that does not exist yet: a note, no token, an empty entry", async () => {
  const { state, report, dir } = await check(undefined);
  deepStrictEqual(state, { storeDir: dir, entry: { clients: [] }, usableToken: false });
  deepStrictEqual(lines(report).slice(0, 2), [
    `note The token store ${dir} does not exist yet: the first sign-in makes it.`,
    "note No token is stored for this server.",
  ]);
  strictEqual(report.breaks, 0);
});

Deno.test("checkSignIn: a store of 0750 is a repair; a server file that others can read is a break", async () => {
  const token = { accessToken: "tok-s3cret", tokenType: "Bearer" };
  const loose = await check({ clients: [], tokens: token }, (dir) => Deno.chmod(dir, 0o750));
  ok(
    lines(loose.report).includes(
      `repair The token store ${loose.dir} has the mode 0750: the bridge sets 0700 at start.`,
    ),
    lines(loose.report).join("\n"),
  );
  strictEqual(loose.state.usableToken, true);
  const readable = await check(
    { clients: [], tokens: token },
    (_, file) => Deno.chmod(file, 0o644),
  );
  ok(
    lines(readable.report).some((l) =>
      l.startsWith("break The server's file in the token store has the mode 0644")
    ),
    lines(readable.report).join("\n"),
  );
  for (const line of [...lines(loose.report), ...lines(readable.report)]) {
    ok(!line.includes("tok-s3cret"), line);
  }
});

Deno.test("checkSignIn: the stored token in words: no lifetime is usable; an expired one says whether a refresh token is there", async () => {
  const base = { accessToken: "a", tokenType: "Bearer" };
  const forever = await check({ clients: [], tokens: base });
  strictEqual(forever.state.usableToken, true);
  ok(
    lines(forever.report).includes(
      "ok A token is stored for this server (the server gave no lifetime).",
    ),
  );
  const expiresAt = Date.now() - 5 * 60_000;
  const refreshable = await check({
    clients: [],
    tokens: { ...base, expiresAt, refreshToken: "r" },
  });
  strictEqual(refreshable.state.usableToken, false);
  ok(
    lines(refreshable.report).includes(
      `note The stored token expires at ${
        new Date(expiresAt).toISOString()
      } (5 min ago). A refresh token is stored: the bridge refreshes it at start.`,
    ),
    lines(refreshable.report).join("\n"),
  );
  // Within the minute of the refresh margin: not usable, and no refresh token.
  const soon = await check({ clients: [], tokens: { ...base, expiresAt: Date.now() + 30_000 } });
  strictEqual(soon.state.usableToken, false);
  ok(
    lines(soon.report).some((l) =>
      l.endsWith("No refresh token is stored: the next start needs a new sign-in.")
    ),
  );
});

Deno.test("checkSignIn: a redirect port in use breaks a needed sign-in, and is only a note with a usable token", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const text =
    `The redirect port ${port} is in use by another program: a sign-in cannot listen there. Give --redirect-port another port.`;
  const none = await check(undefined, undefined, { redirectPort: port });
  ok(lines(none.report).includes(`break ${text}`), lines(none.report).join("\n"));
  const usable = await check(
    { clients: [], tokens: { accessToken: "a", tokenType: "Bearer" } },
    undefined,
    { redirectPort: port },
  );
  ok(lines(usable.report).includes(`note ${text}`), lines(usable.report).join("\n"));
  const free = await check(undefined);
  ok(
    lines(free.report).some((l) => l.startsWith("ok The redirect port ") && l.endsWith("is free.")),
  );
});

Deno.test("StoredToken: a usable stored token as the Authorization value; a challenge is recorded and refused", async () => {
  const entry = { clients: [], tokens: { accessToken: "at", tokenType: "DPoP" } };
  const usable = new StoredToken({ storeDir: "/s", entry, usableToken: true });
  strictEqual(await usable.authorization(), "DPoP at");
  strictEqual(
    await new StoredToken({
      storeDir: "/s",
      entry: { clients: [], tokens: { accessToken: "at", tokenType: "" } },
      usableToken: true,
    }).authorization(),
    "Bearer at",
  );
  strictEqual(
    await new StoredToken({ storeDir: "/s", entry, usableToken: false }).authorization(),
    undefined,
  );
  strictEqual(await new StoredToken(undefined).authorization(), undefined);
  strictEqual(await usable.challenge({ status: 403 }), "refused");
  strictEqual(await usable.challenge({ status: 401 }), "refused");
  strictEqual(usable.challenged, 403);
});
