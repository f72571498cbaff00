/**
 * The doctor in the process: `--protocol auto` (an upstream of revision
 * 2025-11-25 is then no break), and the reports of the command line
 * `doctor ...` (its real parser, `doctorMain` with the report and the
 * environment given) in front of real upstreams: a v1 SDK server, a server
 * whose tools need the repairs, and an upstream at a URL on loopback (with a
 * stored token, a sign-in, icons and the sandbox). The report never holds a
 * token or the URL's path or query. The real program (exit codes, stderr) is
 * in tests/process/doctor_test.ts.
 */

import { strictEqual } from "node:assert/strict";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { doctorMain, runDoctor } from "../../lib/doctor/main.ts";
import { parseCommandLine } from "../../lib/cli/command_line.ts";
import { TokenStore } from "../../lib/auth/store.ts";
import { VERSION } from "../../lib/version.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { json, type RawMessage, result, serveMcp } from "../fixtures/http_raw.ts";
import { assertExcludes, assertIncludes } from "../assert.ts";
import { DENO, ROOT } from "../process/helpers.ts";

const LEGACY = ["run", "-A", `${ROOT}tests/fixtures/legacy_server.ts`];

const RAW = [DENO, "run", "-A", `${ROOT}tests/fixtures/raw_server.ts`, "ok"];
const SECRETS = ["secret-path", "sekrit-query", "tok-s3cret", "refresh-s3cret", "v4lue-s3cr3t"];
/** A config home of these tests only: the doctor never reads the user's token store. */
const CONFIG_HOME = Deno.makeTempDirSync({ prefix: "mcp-bridge-doctor-test-" });
globalThis.addEventListener("unload", () => Deno.removeSync(CONFIG_HOME, { recursive: true }));

function assertClean(text: string): void {
  for (const secret of SECRETS) assertExcludes(text, secret);
}

/**
 * `doctor ...args` as the program runs it (the real parser, then
 * `doctorMain`), in this process: the environment is the test's without
 * proxies, with its own config home, plus `env` (as the process tests give
 * the program); the report is `stdout`.
 */
async function doctorRun(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string }> {
  const [word, ...argv] = args;
  strictEqual(word, "doctor");
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (!/^(https?|no|all)_proxy$/i.test(name)) vars[name] = value;
  }
  Object.assign(vars, { XDG_CONFIG_HOME: CONFIG_HOME }, env);
  const envOf = (name: string) => Object.hasOwn(vars, name) ? vars[name] : undefined;
  let stdout = "";
  const code = await doctorMain(parseCommandLine(argv, envOf), {
    profile: VSCODE_PROFILE,
    version: VERSION,
    argv,
    env: envOf,
    write: (text) => stdout += text,
  });
  return { code, stdout };
}

async function doctor(protocol?: string): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await runDoctor({
    command: DENO,
    args: LEGACY,
    name: "legacy",
    logLevel: "info",
    limits: DEFAULT_LIMITS,
    ...(protocol !== undefined && { protocol }),
  }, { profile: VSCODE_PROFILE, version: "0.0.0", argv: [], write: (t) => text += t });
  return { code, text };
}

Deno.test("doctor: with --protocol auto an upstream of revision 2025-11-25 passes through (exit 0)", async () => {
  const auto = await doctor("auto");
  strictEqual(auto.code, 0, auto.text);
  assertIncludes(
    auto.text,
    "ok      The upstream server speaks revision 2025-11-25: with --protocol auto",
  );
  const strict = await doctor();
  strictEqual(strict.code, 1, strict.text);
  assertIncludes(strict.text, "Start the bridge with --protocol auto");
});

Deno.test("doctor: a v1 SDK server (2025-11-25) would break: exit 1 with the hint of --protocol auto", async () => {
  const out = await doctorRun(["doctor", "--", DENO, ...LEGACY]);
  strictEqual(out.code, 1, out.stdout);
  assertIncludes(
    out.stdout,
    "break   The upstream server speaks revision 2025-11-25 (it answered initialize), not 2026-07-28 (server/discover: discover_failed: Method not found). Start the bridge with --protocol auto",
  );
  assertIncludes(out.stdout, "Result: 1 thing would break in VS Code.");
});

Deno.test("doctor: each repair of the result rules is named (R6, output schema, nextCursor)", async () => {
  const out = await doctorRun(["doctor", "--", ...RAW]);
  strictEqual(out.code, 0, out.stdout);
  for (
    const line of [
      "repair  tool 'array_no_items': gave the array schema at /properties/tags an items schema",
      "repair  tool 'array_no_items': gave the array schema at /properties/pairs an items schema",
      "repair  tool 'array_no_items': gave the array schema at /properties/nested/properties/deep an items schema",
      "repair  tool 'non_object_output': removed an outputSchema whose root is not an object schema",
      "repair  tools/list: removed a nextCursor that is not a string",
    ]
  ) assertIncludes(out.stdout, line);
  // The tool whose output schema is an object keeps it: no line names it.
  assertExcludes(out.stdout, "'object_output'");
});

/** A loopback upstream that wants `Bearer tok-s3cret`, with tools whose icons are not data:. */
function protectedUpstream() {
  return serveMcp((message: RawMessage, request: Request) => {
    if (request.headers.get("authorization") !== "Bearer tok-s3cret") {
      return new Response("", {
        status: 401,
        headers: { "www-authenticate": 'Bearer resource_metadata="http://127.0.0.1:1/x"' },
      });
    }
    if (message.method === "tools/list") {
      return result(message, {
        resultType: "complete",
        tools: [{
          name: "pic",
          inputSchema: { type: "object" },
          icons: [{ src: "https://icons.example/a.png" }, { src: "data:image/png;base64,AA==" }],
        }],
      });
    }
    if (message.method === "ping") return json({ jsonrpc: "2.0", id: message.id, result: {} });
    return undefined;
  });
}

Deno.test("doctor: a URL with a stored token: the expiry, the icons dropped, no token and no path or query", async () => {
  const store = await Deno.makeTempDir();
  await using upstream = protectedUpstream();
  const tokens = await TokenStore.open(store);
  const expiresAt = Date.now() + 3_600_000;
  await tokens.write(new URL(upstream.url).href, {
    issuer: "https://as.example/",
    clients: [],
    tokens: {
      accessToken: "tok-s3cret",
      tokenType: "Bearer",
      refreshToken: "refresh-s3cret",
      expiresAt,
    },
  });
  try {
    const out = await doctorRun(["doctor", "--token-store", store, upstream.url]);
    strictEqual(out.code, 0, out.stdout);
    assertIncludes(
      out.stdout,
      `the server at http://127.0.0.1:${upstream.port} (path and query not shown)`,
    );
    assertIncludes(out.stdout, `ok      The token store ${store} has the mode 0700.`);
    assertIncludes(
      out.stdout,
      `A token is stored for this server; it expires at ${
        new Date(expiresAt).toISOString()
      } (in 60 min).`,
    );
    assertIncludes(out.stdout, "repair  tools/list 'pic': dropped 1 of 2 icons");
    assertIncludes(out.stdout, "is free.");
    assertClean(out.stdout);
  } finally {
    await Deno.remove(store, { recursive: true });
  }
});

Deno.test("doctor: a URL that asks for a sign-in, in the sandbox: exit 1, the domains and the store to allow", async () => {
  const store = await Deno.makeTempDir();
  await Deno.chmod(store, 0o777);
  await using upstream = protectedUpstream();
  try {
    const out = await doctorRun(["doctor", "--token-store", store, upstream.url], {
      SANDBOX_RUNTIME: "1",
    });
    strictEqual(out.code, 1, out.stdout);
    assertIncludes(
      out.stdout,
      `break   The token store ${store} can be written by other users (mode 0777)`,
    );
    assertIncludes(out.stdout, "note    No token is stored for this server.");
    assertIncludes(out.stdout, "The server asks for a sign-in (HTTP status 401)");
    assertIncludes(
      out.stdout,
      `SANDBOX_RUNTIME=1: allow the domains 127.0.0.1 (sandbox.network.allowedDomains) and the writes to ${store} (sandbox.filesystem.allowWrite`,
    );
    assertIncludes(
      out.stdout,
      `"sandbox":{"network":{"allowedDomains":["127.0.0.1"]},"filesystem":{"allowWrite":[${
        JSON.stringify(store)
      }]}}`,
    );
    assertIncludes(
      out.stdout,
      "break   The server needs a sign-in, and in the sandbox the bridge cannot open a browser",
    );
    assertIncludes(out.stdout, "Result: 2 things would break in VS Code.");
    assertClean(out.stdout);
  } finally {
    await Deno.remove(store, { recursive: true });
  }
});

Deno.test("doctor: a URL that does not answer: exit 1, the cause, no path or query", async () => {
  await using upstream = serveMcp(() => new Response("no", { status: 404 }));
  const out = await doctorRun(["doctor", "--header-env", "Authorization=K", upstream.url], {
    K: "Bearer v4lue-s3cr3t",
  });
  strictEqual(out.code, 1, out.stdout);
  assertIncludes(out.stdout, "The Authorization header of --header-env");
  assertIncludes(
    out.stdout,
    "break   The upstream server does not start or answer: discover_failed: HTTP status 404.",
  );
  assertClean(out.stdout);
});

Deno.test("doctor: a token store of another user is a break (root's directory, seen by the owner's uid)", async () => {
  // Only where the test runs as a user who does not own /: the root directory is then "another user's".
  const rootOwner = (await Deno.lstat("/")).uid;
  if (rootOwner === Deno.uid()) {
    // As root every directory of root is the user's own: make one of another user instead.
    const store = await Deno.makeTempDir();
    await Deno.chown(store, 65534, 65534);
    await Deno.chmod(store, 0o700);
    await using upstream = protectedUpstream();
    try {
      const out = await doctorRun(["doctor", "--token-store", store, upstream.url]);
      strictEqual(out.code, 1, out.stdout);
      assertIncludes(out.stdout, `break   The token store ${store} belongs to another user`);
    } finally {
      await Deno.remove(store, { recursive: true });
    }
    return;
  }
  await using upstream = protectedUpstream();
  const out = await doctorRun(["doctor", "--token-store", "/", upstream.url]);
  strictEqual(out.code, 1, out.stdout);
  assertIncludes(out.stdout, "break   The token store / belongs to another user");
});

Deno.test("doctor: with --protocol auto and --ignore-tool, the hidden tools of a server of revision 2025-11-25", async () => {
  const out = await doctorRun([
    "doctor",
    "--protocol",
    "auto",
    "--ignore-tool",
    "hel*",
    "--tool",
    "*",
    "--",
    DENO,
    ...LEGACY,
  ]);
  strictEqual(out.code, 0, out.stdout);
  assertIncludes(out.stdout, "ok      tools/list: 1 item.");
  assertIncludes(
    out.stdout,
    'note    --tool and --ignore-tool hide 1 of 1 tools, which VS Code does not see: "hello".',
  );
});
