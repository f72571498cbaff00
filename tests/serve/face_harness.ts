/**
 * The HTTP face of `serve` in the test's own process: its handler gets
 * `Request`s directly (no socket), and its sessions run the real front end
 * over the memory link to the SDK v2 fixture of revision 2026-07-28
 * (`tests/fixtures/conformance_upstream.ts`), shared as `serve` shares it.
 */

import { type FaceOptions, HttpFace } from "../../lib/serve/face.ts";
import { SharedUpstream } from "../../lib/upstream/shared_upstream.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import { createLogger } from "../../lib/log.ts";
import { DEFAULT_LIMITS, type Limits } from "../../lib/settings/limits.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { readEvents } from "../../lib/http/sse.ts";
import { server } from "../fixtures/conformance_upstream.ts";
import type { GuardSettings } from "../../lib/serve/guard.ts";

/** The port the guard believes it listens on. */
export const PORT = 8770;
export const BASE = `http://127.0.0.1:${PORT}`;

/** What a test can change. */
export interface HarnessOptions {
  readonly face?: Partial<Omit<FaceOptions, "guard" | "endpoints">>;
  readonly guard?: Partial<GuardSettings>;
  readonly limits?: Partial<Limits>;
  /** The upstream (default: the fixture over the memory link). */
  readonly connect?: Connect;
}

/** The headers of a POST of a client that follows the transport. */
export function postHeaders(
  session?: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    host: `127.0.0.1:${PORT}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(session !== undefined && { "mcp-session-id": session }),
    ...extra,
  };
}

/** The initialize params of a client of revision 2025-11-25. */
export const INIT_PARAMS = {
  protocolVersion: "2025-11-25",
  capabilities: { elicitation: {} },
  clientInfo: { name: "face-test", version: "1" },
};

/** A face with one endpoint at `/mcp`, its log lines, and helpers. */
export class FaceHarness implements AsyncDisposable {
  readonly face: HttpFace;
  readonly lines: string[] = [];
  readonly shared: SharedUpstream;

  constructor(options: HarnessOptions = {}) {
    const log = createLogger("t", "debug", (line) => this.lines.push(line));
    const limits = { ...DEFAULT_LIMITS, shutdown_grace_ms: 200, ...options.limits };
    this.shared = new SharedUpstream({
      connect: options.connect ?? (() => connectMemoryLink(server)),
      graceMs: 10,
      log,
    });
    this.face = new HttpFace({
      endpoints: [{
        path: "/mcp",
        name: "",
        limits,
        log,
        settings: (sessionLog) => ({
          profile: VSCODE_PROFILE,
          limits,
          log: sessionLog,
          fallback: { name: "fixture", version: "1" },
          connect: this.shared.connect,
        }),
      }],
      profile: VSCODE_PROFILE,
      guard: () => ({ host: "127.0.0.1", port: PORT, allowedOrigins: [], ...options.guard }),
      maxSessions: 8,
      sessionIdleMs: 60_000,
      log,
      ...options.face,
    });
  }

  /** A request to the face. */
  request(init: RequestInit & { path?: string }): Promise<Response> {
    return this.face.handle(new Request(`${BASE}${init.path ?? "/mcp"}`, init));
  }

  /** A POST of `message`. */
  post(
    message: unknown,
    session?: string,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.request({
      method: "POST",
      headers: postHeaders(session, headers),
      body: typeof message === "string" ? message : JSON.stringify(message),
    });
  }

  /** Initializes a session; its id and the initialize response. */
  async initialize(params: unknown = INIT_PARAMS): Promise<{ session: string; result: unknown }> {
    const response = await this.post({ jsonrpc: "2.0", id: 1, method: "initialize", params });
    const session = response.headers.get("mcp-session-id");
    const [message] = await messagesOf(response);
    if (session === null) throw new Error(`no session id: ${JSON.stringify(message)}`);
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    return { session, result: message };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.face.stop();
    await this.face.endAll();
    await this.shared.close();
  }
}

/** The messages of a response: its JSON body, or every event of its SSE stream. */
export async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("application/json")) return [await response.json()];
  if (!type.startsWith("text/event-stream") || !response.body) {
    throw new Error(`not a body of messages: ${response.status} ${type}`);
  }
  const out: Record<string, unknown>[] = [];
  for await (const event of readEvents(response.body, 1 << 24)) {
    out.push(JSON.parse(new TextDecoder().decode(event.data)));
  }
  return out;
}
