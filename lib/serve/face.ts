/**
 * The HTTP face of `serve`: the Streamable HTTP transport of revision
 * 2025-11-25 at each MCP endpoint (`/mcp`, or `/NAME/mcp`). A request is
 * checked (the guard: Host, Origin, token), then taken by the session of its
 * `Mcp-Session-Id`: POST gives the session a message, GET opens its stream
 * for the messages of no request, DELETE ends it. An initialize without a
 * session id starts a new session; an unknown session id gets 404.
 *
 * @module
 */

import type { FrontendSettings } from "../frontend/frontend_options.ts";
import { readClientFrame } from "../frontend/inbound.ts";
import { BridgeError } from "../errors/errors.ts";
import { labeledLogger, type Logger } from "../log.ts";
import type { Limits } from "../settings/limits.ts";
import type { Profile } from "../settings/profile.ts";
import { BODY_TIMEOUT_MS, BodyBudget, readBody } from "./body.ts";
import { checkRequest, type GuardSettings } from "./guard.ts";
import { StreamCut } from "./event_stream.ts";
import { httpError } from "./http_errors.ts";
import { ServeSession } from "./session.ts";
import { newSessionId } from "./session_id.ts";

/** The revisions whose `MCP-Protocol-Version` header the face takes. */
export const FACE_REVISIONS: ReadonlySet<string> = new Set([
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
]);

/** One MCP endpoint: an upstream server of `serve`. */
export interface Endpoint {
  /** `/mcp` or `/NAME/mcp`. */
  readonly path: string;
  /** The name of the upstream in the log (empty for the one upstream). */
  readonly name: string;
  /** The limits of its bridge (the body limit is its line limit). */
  readonly limits: Limits;
  /** The log of the upstream; a session's lines say its label too. */
  readonly log: Logger;
  /** The settings of the front end of a new session, with its log. */
  readonly settings: (log: Logger) => FrontendSettings;
}

/** Options of an {@linkcode HttpFace}. */
export interface FaceOptions {
  readonly endpoints: readonly Endpoint[];
  readonly profile: Profile;
  /** What the guard checks; the port is the real one once `serve` listens. */
  readonly guard: () => GuardSettings;
  readonly maxSessions: number;
  readonly sessionIdleMs: number;
  /** The time a session has for `notifications/initialized` (`INIT_TIMEOUT_MS` by default). */
  readonly initTimeoutMs?: number;
  readonly replica?: string | undefined;
  /** The process's own lines. */
  readonly log: Logger;
  /** The keep-alive of the streams (tests pass a short one). */
  readonly keepAliveMs?: number;
  /** {@linkcode BODY_TIMEOUT_MS} by default (tests pass a short one). */
  readonly bodyTimeoutMs?: number;
  /**
   * The bytes that the bodies being read at once may hold: by default
   * {@linkcode BODY_BUDGET_BYTES}, or twice the largest body limit of an
   * endpoint when that is more.
   */
  readonly bodyBudgetBytes?: number;
}

/** The default bytes of all the bodies being read at once (256 MiB). */
export const BODY_BUDGET_BYTES = 256 * 1024 * 1024;

/** True when an `Accept` header takes `type` (or a wildcard of it). */
function accepts(header: string | null, type: string): boolean {
  if (header === null) return false;
  const [main] = type.split("/");
  return header.split(",").some((part) => {
    const range = part.split(";")[0]!.trim().toLowerCase();
    return range === type || range === "*/*" || range === `${main}/*`;
  });
}

/** The essence of a `Content-Type` header. */
function mediaType(header: string | null): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The refusal of new work while `serve` stops. */
function stoppingError(): Response {
  return httpError("stopping", { "retry-after": "5" });
}

/** The face of one `serve` process. */
export class HttpFace {
  readonly #o: FaceOptions;
  readonly #byPath: ReadonlyMap<string, Endpoint>;
  readonly #sessions = new Map<string, { session: ServeSession; endpoint: Endpoint }>();
  #count = 0;
  #stopping = false;
  readonly #budget: BodyBudget;

  constructor(options: FaceOptions) {
    this.#o = options;
    this.#byPath = new Map(options.endpoints.map((endpoint) => [endpoint.path, endpoint]));
    const largest = Math.max(...options.endpoints.map((e) => e.limits.max_line_bytes));
    this.#budget = new BodyBudget(
      options.bodyBudgetBytes ?? Math.max(BODY_BUDGET_BYTES, 2 * largest),
    );
  }

  /** The sessions now. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Handles one HTTP request (the handler of `Deno.serve`). */
  readonly handle = async (request: Request): Promise<Response> => {
    // The guard first: a client that it refuses learns nothing of the paths that are served
    // (the names of --config).
    const refusal = await checkRequest(request, this.#o.guard());
    if (refusal) this.#o.log.debug(`refused a request: ${refusal.message}`);
    if (refusal?.status === 403) return httpError("forbidden");
    const endpoint = this.#byPath.get(new URL(request.url).pathname);
    if (!refusal && !endpoint) return new Response("Not Found\n", { status: 404 });
    // The origin passed the guard: a page of it may read the response, a 401 too (its
    // WWW-Authenticate says what is missing).
    const origin = request.headers.get("origin");
    const cors: Record<string, string> = origin === null ? {} : {
      "access-control-allow-origin": origin,
      "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate",
      "vary": "origin",
    };
    const response = endpoint && !refusal
      ? await this.#route(request, endpoint, cors)
      : httpError("unauthorized", { "www-authenticate": 'Bearer realm="mcp"' });
    for (const [name, value] of Object.entries(cors)) response.headers.set(name, value);
    return response;
  };

  /**
   * The error handler of `Deno.serve`: an error of the handler, or of the
   * body of a response (a stream that was cut ends with a
   * {@linkcode StreamCut}, whose line it logged already). One line and no
   * stack on stderr, where `Deno.serve` would print the error with its stack.
   */
  readonly onError = (error: unknown): Response => {
    if (!(error instanceof StreamCut)) {
      const name = error instanceof Error ? error.name : typeof error;
      this.#o.log.warn(`a response failed: ${name}`);
    }
    return new Response(null, { status: 500 });
  };

  async #route(request: Request, endpoint: Endpoint, cors: Record<string, string>) {
    if (request.method === "OPTIONS" && Object.keys(cors).length > 0) {
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": "GET, POST, DELETE",
          "access-control-allow-headers":
            "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id",
          "access-control-max-age": "600",
        },
      });
    }
    // While serve stops, only what a request in flight needs passes: the POSTs of a session
    // (its answers and cancellations pass, its requests not: below) and the end of a session.
    const ofSession = request.method === "DELETE" ||
      (request.method === "POST" && request.headers.has("mcp-session-id"));
    if (this.#stopping && !ofSession) return stoppingError();
    // The header of the revision that a session negotiated: on every request after initialize.
    const version = request.headers.get("mcp-protocol-version");
    if (
      version !== null && request.headers.has("mcp-session-id") && !FACE_REVISIONS.has(version)
    ) {
      return httpError("protocol_version");
    }
    switch (request.method) {
      case "POST":
        return await this.#post(request, endpoint);
      case "GET":
      case "DELETE": {
        const found = this.#session(request, endpoint);
        if (found instanceof Response) return found;
        if (request.method === "DELETE") {
          await found.end();
          return new Response(null, { status: 200 });
        }
        if (!accepts(request.headers.get("accept"), "text/event-stream")) {
          return httpError("stream_not_acceptable");
        }
        return found.get();
      }
      default:
        return httpError("method_not_allowed", { allow: "GET, POST, DELETE" });
    }
  }

  /** The session of the request's `Mcp-Session-Id`, or the refusal. */
  #session(request: Request, endpoint: Endpoint): ServeSession | Response {
    const id = request.headers.get("mcp-session-id");
    if (id === null) return httpError("session_required");
    const found = this.#sessions.get(id);
    if (!found || found.endpoint !== endpoint || found.session.ended) {
      return httpError("session_not_found");
    }
    return found.session;
  }

  async #post(request: Request, endpoint: Endpoint): Promise<Response> {
    if (mediaType(request.headers.get("content-type")) !== "application/json") {
      return httpError("content_type");
    }
    const accept = request.headers.get("accept");
    if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
      return httpError("not_acceptable");
    }
    const hasSession = request.headers.has("mcp-session-id");
    // An unknown session is refused before its body is read.
    const known = hasSession ? this.#session(request, endpoint) : undefined;
    if (known instanceof Response) return known;
    const body = await readBody(
      request,
      endpoint.limits.max_line_bytes,
      this.#o.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
      this.#budget,
    );
    if (body.kind === "timeout") return httpError("body_timeout");
    if (body.kind === "busy") return httpError("busy", { "retry-after": "1" });
    if (body.kind === "failed") return new Response(null, { status: 400 });
    const inbound = readClientFrame(body, endpoint.limits, this.#o.profile.request_id_prefix);
    if (this.#stopping && (!known || inbound.kind === "request")) return stoppingError();
    if (known) return await known.post(inbound);
    if (inbound.kind === "reject") {
      const error = { jsonrpc: "2.0", id: inbound.id, error: inbound.error.toJSON() };
      return Response.json(error, { status: inbound.id === null ? 400 : 200 });
    }
    if (inbound.kind === "request" && inbound.method === "server/discover") {
      // The message table: -32601 in every state, so no session is needed for it.
      const error = BridgeError.of("method_not_found").toJSON();
      return Response.json({ jsonrpc: "2.0", id: inbound.id, error });
    }
    if (inbound.kind !== "request" || inbound.method !== "initialize") {
      return httpError("session_required");
    }
    if (this.#sessions.size >= this.#o.maxSessions) {
      this.#o.log.warn(`refused a new session: ${this.#o.maxSessions} sessions run`);
      return httpError("too_many_sessions", { "retry-after": "5" });
    }
    const session = this.#open(endpoint);
    return await session.post(inbound, { "mcp-session-id": session.id });
  }

  #open(endpoint: Endpoint): ServeSession {
    const id = newSessionId(this.#o.replica);
    // The upstream's name is on the lines of its log already.
    const label = `#${++this.#count}`;
    const log = labeledLogger(endpoint.log, `session ${label}`);
    const session = new ServeSession({
      id,
      label,
      settings: endpoint.settings(log),
      idleMs: this.#o.sessionIdleMs,
      ...(this.#o.initTimeoutMs !== undefined && { initTimeoutMs: this.#o.initTimeoutMs }),
      ...(this.#o.keepAliveMs !== undefined && { keepAliveMs: this.#o.keepAliveMs }),
      onEnd: (ended) => {
        if (this.#sessions.get(ended.id)?.session === ended) this.#sessions.delete(ended.id);
        log.info("the session ended");
      },
    });
    this.#sessions.set(id, { session, endpoint });
    log.info("a new session started");
    return session;
  }

  /**
   * `serve` stops: from now on a new session, a new request and a new GET
   * stream get 503, and a request that waits for the back pressure of its
   * session gets the error `stopping` at once; the answers and cancellations
   * of the clients still reach the requests in flight, and DELETE still ends
   * a session.
   */
  stop(): void {
    this.#stopping = true;
    for (const { session } of this.#sessions.values()) session.refuseRequests();
  }

  /** Waits until no session has a request in flight, for at most `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    const until = Date.now() + graceMs;
    while (Date.now() < until) {
      if ([...this.#sessions.values()].every(({ session }) => session.inFlight === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, until - Date.now())));
    }
  }

  /**
   * Ends every session: their requests left get the error `stopping` and are
   * canceled upstream, their upstream links close.
   */
  async endAll(): Promise<void> {
    await Promise.allSettled([...this.#sessions.values()].map(({ session }) => session.stop()));
  }
}
