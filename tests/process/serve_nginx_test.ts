/**
 * Scale out: two `serve` replicas behind Debian's nginx, with the `map` of
 * README.md ("Several replicas behind nginx", its very block with the ports
 * of the test): every request of a session reaches the replica that made
 * it (its id begins with the replica's name), an initialize goes to any
 * replica, and SSE streams (a call's progress and input round, the GET
 * stream's events) pass through; a session whose replica stopped gets the
 * 404 of an unknown session from nginx, and a new initialize lands on the
 * replica that runs. nginx runs from the test with its own
 * prefix and config in a temporary folder, `daemon off;`, on a free
 * loopback port. Without nginx (CI installs `nginx-light`) the test is
 * ignored and says "skipped".
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { freePort } from "../free_port.ts";
import { waitFor } from "../wait.ts";
import { INITIALIZE_REQUEST, ROOT } from "./helpers.ts";
import { CONFORMANCE_UPSTREAM, ServeProcess, textOf } from "./serve_helpers.ts";

const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});
if (!NGINX) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      "skipped: the nginx test needs Debian's nginx (apt-get install nginx-light)\n",
    ),
  );
}

const TOKEN = "replica-test-token";

/** The nginx block of README.md, with the ports of the test. */
async function readmeBlock(listen: number, r1: number, r2: number): Promise<string> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const section = readme.slice(readme.indexOf("**Several replicas behind nginx.**"));
  const block = /```nginx\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README.md has no nginx block for the replicas");
  return block.replaceAll("127.0.0.1:8770", `127.0.0.1:${listen}`)
    .replaceAll("127.0.0.1:8771", `127.0.0.1:${r1}`)
    .replaceAll("127.0.0.1:8772", `127.0.0.1:${r2}`);
}

/** nginx with `block` inside `http {}`, in its own prefix; its stderr. */
async function startNginx(prefix: string, block: string, listen: number) {
  const config = [
    "daemon off;",
    "master_process off;",
    `pid ${prefix}/nginx.pid;`,
    "error_log stderr warn;",
    "events { worker_connections 256; }",
    "http {",
    "  access_log off;",
    `  client_body_temp_path ${prefix}/body;`,
    `  proxy_temp_path ${prefix}/proxy;`,
    block,
    "}",
  ].join("\n");
  await Deno.writeTextFile(`${prefix}/nginx.conf`, config);
  const child = new Deno.Command(NGINX!, {
    args: ["-p", prefix, "-c", `${prefix}/nginx.conf`, "-e", "stderr"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  );
  await waitFor("nginx to listen", async () => {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port: listen })).close();
      return true;
    } catch {
      return false;
    }
  }, { timeoutMs: 20_000 });
  return {
    stderr: () => stderr,
    async [Symbol.asyncDispose]() {
      child.kill("SIGQUIT");
      await child.status;
      await reading.catch(() => {});
    },
  };
}

/** Replicas r1 and r2 of serve behind nginx with README's block; all stopped at the dispose. */
async function replicasBehindNginx() {
  const env = { MCP_TOKEN: TOKEN };
  const replica = (name: string) =>
    ServeProcess.start(
      ["--replica", name, "--token-env", "MCP_TOKEN", "--", ...CONFORMANCE_UPSTREAM],
      env,
    );
  await using stack = new AsyncDisposableStack();
  const r1 = stack.use(await replica("r1"));
  const r2 = stack.use(await replica("r2"));
  const prefix = await Deno.makeTempDir({ prefix: "serve-nginx-" });
  stack.defer(() => Deno.remove(prefix, { recursive: true }));
  const listen = freePort();
  const nginx = stack.use(
    await startNginx(prefix, await readmeBlock(listen, r1.port, r2.port), listen),
  );
  const owned = stack.move();
  return { r1, r2, nginx, listen, [Symbol.asyncDispose]: () => owned.disposeAsync() };
}

Deno.test({
  name: NGINX
    ? "serve: two replicas behind nginx: each session stays on its replica (the map of README.md on the session id)"
    : "serve: two replicas behind nginx (skipped: nginx is missing)",
  ignore: !NGINX,
  async fn() {
    await using setup = await replicasBehindNginx();
    const { r1, r2, nginx, listen } = setup;
    const url = new URL(`http://127.0.0.1:${listen}/mcp`);
    const clients = [];
    for (let i = 0; i < 4; i++) {
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      });
      const client = new Client({ name: `c${i}`, version: "1" }, {
        capabilities: { elicitation: {} },
      });
      await client.connect(transport);
      clients.push({ client, transport });
    }
    const replicas = clients.map(({ transport }) => transport.sessionId!.split(".")[0]);
    // nginx sends the initializes round robin: both replicas have sessions.
    deepStrictEqual(new Set(replicas), new Set(["r1", "r2"]), nginx.stderr());
    // Each replica has one upstream child: a session's calls all reach its replica's child.
    const pidOf = async (client: Client) =>
      textOf(await client.callTool({ name: "pid", arguments: {} }));
    const pids = new Map<string, string>();
    for (const [i, { client }] of clients.entries()) {
      for (let call = 0; call < 3; call++) {
        const pid = await pidOf(client);
        const expected = pids.get(replicas[i]!) ?? pid;
        pids.set(replicas[i]!, expected);
        strictEqual(pid, expected, `session ${i} left its replica ${replicas[i]}`);
      }
    }
    ok(pids.get("r1") !== pids.get("r2"));
    // Streams through nginx: an input round and progress on the call's stream, events on GET.
    const { client } = clients[0]!;
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: "accept",
      content: { a: "via nginx" },
    }));
    strictEqual(
      textOf(await client.callTool({ name: "ask", arguments: { question: "?" } })),
      "answered: via nginx",
    );
    const progress: number[] = [];
    await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
      onprogress: (p: { progress: number }) => progress.push(p.progress),
    });
    deepStrictEqual(progress, [0, 50, 100]);
    const updates: string[] = [];
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n: { params: { uri: string } }) => void updates.push(n.params.uri),
    );
    await client.subscribeResource({ uri: "test://watched-resource" });
    await client.callTool({ name: "touch", arguments: { uri: "test://watched-resource" } });
    await waitFor("the update through nginx", () => updates.length === 1);
    for (const { client, transport } of clients) {
      await transport.terminateSession();
      await client.close();
    }
    for (const r of [r1, r2]) strictEqual(await r.stop(), 0);
    ok(r1.stderr.includes("session #1: the session ended"), r1.stderr);
  },
});

Deno.test({
  name: NGINX
    ? "serve: behind nginx, a session whose replica stopped gets the 404 of an unknown session (not a 502); its client initializes again on the other replica"
    : "serve: a replica that stops behind nginx (skipped: nginx is missing)",
  ignore: !NGINX,
  async fn() {
    await using setup = await replicasBehindNginx();
    const { r1, r2, nginx, listen } = setup;
    const url = `http://127.0.0.1:${listen}/mcp`;
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const initialize = () =>
      fetch(url, { method: "POST", headers, body: JSON.stringify(INITIALIZE_REQUEST) });
    // Initialize until a session lives on r1.
    let session = "";
    for (let i = 0; i < 4 && !session.startsWith("r1."); i++) {
      const response = await initialize();
      await response.body?.cancel();
      session = response.headers.get("mcp-session-id") ?? "";
    }
    ok(session.startsWith("r1."), `no session on r1: ${session} ${nginx.stderr()}`);
    strictEqual(await r1.stop(), 0);
    // A request of that session: the replica is gone, so is its session.
    const call = await fetch(url, {
      method: "POST",
      headers: { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
    });
    strictEqual(call.status, 404);
    strictEqual(call.headers.get("content-type"), "application/json");
    const body = await call.json();
    strictEqual(body.error.code, -32001);
    // The client initializes again: the replica that runs takes it (nginx skips the other).
    for (let i = 0; i < 2; i++) {
      const again = await initialize();
      await again.body?.cancel();
      strictEqual(again.status, 200);
      ok(again.headers.get("mcp-session-id")?.startsWith("r2."));
    }
    strictEqual(await r2.stop(), 0);
  },
});
