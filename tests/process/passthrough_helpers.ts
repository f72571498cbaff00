/**
 * The published servers of revision 2025-11-25 behind the bridge with
 * `--protocol auto`: the same v1 SDK client (as VS Code runs it) talks to a
 * server directly and through the bridge, so each result can be compared
 * with the server's own.
 *
 * The servers come from npm, pinned in deno.json (`deno install` puts them in
 * node_modules), and run under Node.js as their package says: they are
 * Node.js programs (express, `node:` built-ins), and a run under Deno's npm
 * compatibility would test that layer instead of the bridge.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO, programArgs, ROOT } from "./helpers.ts";

// The imports put the packages into node_modules (nodeModulesDir "auto"): the servers
// run from there under Node.js, and nothing else of them is imported.
import everything from "@modelcontextprotocol/server-everything/package.json" with {
  type: "json",
};
import filesystem from "@modelcontextprotocol/server-filesystem/package.json" with {
  type: "json",
};
import memory from "@modelcontextprotocol/server-memory/package.json" with { type: "json" };

/** The versions under test (deno.json pins the same). */
export const SERVER_VERSIONS = {
  everything: "2026.8.31",
  filesystem: "2026.8.31",
  memory: "2026.8.31",
} as const;

const PACKAGES = { everything, filesystem, memory } as const;

/** The entry point of a server package in node_modules. */
export function serverEntry(name: keyof typeof SERVER_VERSIONS): string {
  const json = import.meta.resolve(`@modelcontextprotocol/server-${name}/package.json`);
  const dir = dirname(fileURLToPath(json));
  const pkg = PACKAGES[name] as { version: string };
  if (pkg.version !== SERVER_VERSIONS[name]) {
    throw new Error(`server-${name} is ${pkg.version}, the tests pin ${SERVER_VERSIONS[name]}`);
  }
  return `${dir}/dist/index.js`;
}

/** What the client handlers saw, and the notifications of the server. */
export class Recorder {
  readonly notifications: { method: string; params: Record<string, unknown> }[] = [];
  readonly requests: { method: string; params: Record<string, unknown> }[] = [];
  readonly errors: string[] = [];

  of(method: string): Record<string, unknown>[] {
    return this.notifications.filter((n) => n.method === method).map((n) => n.params);
  }
}

/** The capabilities of the client: what VS Code declares (no tasks). */
export const CLIENT_CAPABILITIES = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: {}, url: {} },
};

/** The fixed answers of the client's handlers. */
export const SAMPLING_RESULT = {
  model: "test-model",
  role: "assistant",
  content: { type: "text", text: "sampled answer" },
  stopReason: "endTurn",
};

/** A root of the client. */
export interface Root {
  uri: string;
  name: string;
}

/** How a side starts. */
export interface SideOptions {
  /** The roots that the client answers (the array is read at each roots/list). */
  readonly roots?: Root[];
  /** Variables for the server (besides the SDK's default environment). */
  readonly env?: Record<string, string>;
}

/** A v1 client with handlers for sampling, elicitation and roots. */
export function makeClient(roots: Root[] = []): {
  client: Client;
  recorder: Recorder;
} {
  const recorder = new Recorder();
  const client = new Client({ name: "vscode-like", version: "1.0.0" }, {
    capabilities: CLIENT_CAPABILITIES,
  });
  client.setRequestHandler(CreateMessageRequestSchema, (request: { params: never }) => {
    recorder.requests.push({ method: "sampling/createMessage", params: request.params });
    return SAMPLING_RESULT;
  });
  client.setRequestHandler(
    ElicitRequestSchema,
    (request: { params: { mode?: string; requestedSchema?: { properties?: object } } }) => {
      recorder.requests.push({ method: "elicitation/create", params: request.params as never });
      if (request.params.mode === "url") return { action: "accept" };
      return { action: "decline" };
    },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => {
    recorder.requests.push({ method: "roots/list", params: {} });
    return { roots };
  });
  client.fallbackNotificationHandler = (notification: {
    method: string;
    params?: Record<string, unknown>;
  }) => {
    recorder.notifications.push({
      method: notification.method,
      params: notification.params ?? {},
    });
    return Promise.resolve();
  };
  client.onerror = (error: Error) => recorder.errors.push(error.message);
  return { client, recorder };
}

/** A client connected to the stdio server directly. */
export async function direct(
  argv: string[],
  options: SideOptions = {},
): Promise<{ client: Client; recorder: Recorder }> {
  const made = makeClient(options.roots);
  await made.client.connect(
    new StdioClientTransport({
      command: argv[0]!,
      args: argv.slice(1),
      stderr: "pipe",
      env: { ...getDefaultEnvironment(), ...options.env },
    }),
  );
  return made;
}

/**
 * A client connected through the bridge with `--protocol auto`; `upstream`
 * is `-- COMMAND ...` or a URL, after more flags if needed.
 */
export async function bridged(
  upstream: string[],
  options: SideOptions = {},
): Promise<{ client: Client; recorder: Recorder; stderr: () => string }> {
  const made = makeClient(options.roots);
  const transport = new StdioClientTransport({
    command: DENO,
    args: programArgs(["--protocol", "auto", ...upstream]),
    cwd: ROOT,
    stderr: "pipe",
    env: { ...getDefaultEnvironment(), ...options.env },
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  await made.client.connect(transport);
  return { ...made, stderr: () => stderr };
}

/** A client connected to an HTTP server directly (the SDK's transport). */
export async function directHttp(
  url: string,
  options: SideOptions = {},
): Promise<{ client: Client; recorder: Recorder }> {
  const made = makeClient(options.roots);
  await made.client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return made;
}

/** A server of the package run by Node.js. */
export function nodeServer(name: keyof typeof SERVER_VERSIONS, ...args: string[]): string[] {
  return ["node", serverEntry(name), ...args];
}

/**
 * server-everything in its Streamable HTTP mode, bound to 127.0.0.1 (it
 * binds every interface by itself) on a free port, or on the port `at` (the same
 * port again after a restart). Dispose to stop it.
 */
export async function everythingHttp(at = 0): Promise<AsyncDisposable & { url: string }> {
  const child = new Deno.Command("node", {
    args: [`${ROOT}tests/fixtures/everything_http.mjs`, serverEntry("everything")],
    stdout: "null",
    stderr: "piped",
    env: { PORT: String(at) },
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream());
  const reader = lines.getReader();
  let text = "";
  let port: string | undefined;
  while (port === undefined) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`server-everything did not start: ${text}`);
    text += value;
    port = /LISTENING 127\.0\.0\.1 (\d+)/.exec(text)?.[1];
  }
  // Keep its stderr flowing.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* stopped */ }
      await child.status;
    },
  };
}
