/**
 * The one way a request of the sign-in goes out: protected resource
 * metadata, authorization server metadata, registration, token, refresh and
 * revocation. Each request gets the sign-in's abort signal, a time limit of
 * its own and a byte limit on its response (a larger body is cut off and the
 * connection closed, never read into memory); a request to the authorization
 * server must be https, or http on a loopback host. Each step records its own
 * status, so a failure names the step that failed and that step's status,
 * never a body or a URL.
 *
 * @module
 */

import { linkFetch } from "../http/post_transport.ts";
import type { FetchLike } from "@modelcontextprotocol/client";
import type { UpstreamFailure } from "../upstream/failure.ts";
import { isLoopbackHost } from "../net/loopback.ts";
import { signInFailure } from "./failures.ts";

/** The byte limit of a response of the sign-in: its JSON documents are small. */
export const SIGN_IN_MAX_BYTES = 1024 * 1024;

/** The time limit of one request of the sign-in (the sign-in's own limit can stop it sooner). */
export const SIGN_IN_REQUEST_TIMEOUT_MS = 30_000;

/** The steps of a sign-in that send a request; a failure's `data.detail` starts with one. */
export type SignInStep =
  | "protected resource metadata"
  | "authorization server metadata"
  | "registration"
  | "token request"
  | "refresh"
  | "revocation";

/** What the requests of one sign-in share. */
export interface SignInHttpOptions {
  /** The fetch of the link (its HTTP client: the CA of --ca-file, the proxies). */
  readonly fetch?: FetchLike;
  /** The sign-in's signal: `--sign-in-timeout`, or the end of the request that waits. */
  readonly signal: AbortSignal;
  readonly maxBytes?: number;
  readonly requestTimeoutMs?: number;
}

/** True for a URL of the authorization server the bridge may send to: https, or loopback http. */
export function isSecureEndpoint(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === "https:" ||
    (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname));
}

/** The failure of an endpoint that is not https (nor loopback http): before any request. */
export function insecureEndpoint(step: SignInStep | "authorization"): UpstreamFailure {
  return signInFailure("sign_in_failed", `${step}: the endpoint is not https`);
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** `1 MiB`, `64 KiB`, `100 bytes`: the byte limit in a detail. */
function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The fetch of one step. `fetch` sends a request with the limits; after a
 * failed SDK call, `failure()` is the sign-in failure to throw.
 */
export class StepFetch {
  readonly step: SignInStep;
  /** The status of the last response of this step. */
  status: number | undefined;
  /** Why the last request of this step failed without an answer, or with a body cut off. */
  problem: string | undefined;
  readonly fetch: FetchLike;
  readonly #options: SignInHttpOptions;

  constructor(step: SignInStep, options: SignInHttpOptions, authorizationServer: boolean) {
    this.step = step;
    this.#options = options;
    this.fetch = (input, init) => this.#send(input, init, authorizationServer);
  }

  /** True when the sign-in's own signal stopped this step (`--sign-in-timeout`). */
  get stopped(): boolean {
    return this.#options.signal.aborted;
  }

  /** `step: HTTP status N`, `step: <problem>`, or `step` when nothing is known. */
  detail(): string {
    if (this.problem !== undefined) return `${this.step}: ${this.problem}`;
    return this.status === undefined ? this.step : `${this.step}: HTTP status ${this.status}`;
  }

  /** The failure of this step: sign_in_timeout when the sign-in's signal stopped it. */
  failure(): UpstreamFailure {
    return this.stopped ? signInFailure("sign_in_timeout") : signInFailure(
      "sign_in_failed",
      this.detail(),
    );
  }

  async #send(
    input: string | URL,
    init: RequestInit | undefined,
    authorizationServer: boolean,
  ): Promise<Response> {
    this.status = undefined;
    this.problem = undefined;
    const options = this.#options;
    if (authorizationServer && !isSecureEndpoint(input)) {
      this.problem = "the endpoint is not https";
      throw insecureEndpoint(this.step);
    }
    options.signal.throwIfAborted();
    const maxBytes = options.maxBytes ?? SIGN_IN_MAX_BYTES;
    const timeoutMs = options.requestTimeoutMs ?? SIGN_IN_REQUEST_TIMEOUT_MS;
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => {
      this.problem ??= `no response in ${Math.round(timeoutMs / 1000)} s`;
      controller.abort();
    }, timeoutMs);
    Deno.unrefTimer(timer);
    const finish = () => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
    };
    const base = options.fetch ?? defaultFetch();
    let response: Response;
    try {
      // Redirects are the caller's to follow (the SDK follows them within the origin).
      response = await base(input, { ...init, redirect: "manual", signal: controller.signal });
    } catch (error) {
      finish();
      if (options.signal.aborted) this.problem = "the time limit of the sign-in passed";
      this.problem ??= "no response";
      throw error;
    }
    this.status = response.status;
    if (response.body === null || NULL_BODY.has(response.status)) {
      finish();
      await response.body?.cancel().catch(() => {});
      return response;
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    const tooLarge = () => {
      this.problem = `HTTP status ${response.status}, a response larger than ${sizeText(maxBytes)}`;
      controller.abort();
      finish();
      return new TypeError(`the response is larger than ${maxBytes} bytes`);
    };
    if (declared > maxBytes) {
      const error = tooLarge();
      await response.body.cancel().catch(() => {});
      throw error;
    }
    const reader = response.body.getReader();
    let total = 0;
    const limited = new ReadableStream<Uint8Array>({
      pull: async (out) => {
        let next;
        try {
          next = await reader.read();
        } catch (error) {
          finish();
          if (options.signal.aborted) this.problem = "the time limit of the sign-in passed";
          this.problem ??= "the response stopped";
          throw error;
        }
        if (next.done) {
          finish();
          out.close();
          return;
        }
        total += next.value.byteLength;
        if (total > maxBytes) {
          const error = tooLarge();
          await reader.cancel().catch(() => {});
          out.error(error);
          return;
        }
        out.enqueue(next.value);
      },
      cancel: async (reason) => {
        finish();
        controller.abort();
        await reader.cancel(reason).catch(() => {});
      },
    });
    return new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}

let shared: FetchLike | undefined;

/** The fetch of a sign-in given none: {@linkcode signInFetch} without `--ca-file`. */
function defaultFetch(): FetchLike {
  return shared ??= signInFetch(undefined);
}

/** The requests of one sign-in: one {@linkcode StepFetch} per step. */
export class SignInHttp {
  readonly options: SignInHttpOptions;

  constructor(options: SignInHttpOptions) {
    this.options = options;
  }

  /** The fetch of `step`; every step but the resource's metadata goes to the authorization server. */
  step(step: SignInStep): StepFetch {
    return new StepFetch(step, this.options, step !== "protected resource metadata");
  }
}

/**
 * A fetch with the HTTP clients of the link (`linkFetch` of
 * `http/post_transport.ts`: the CA certificates of `--ca-file`, the proxy
 * variables, HTTP/2 for https and HTTP/1.1 kept alive). Its requests go
 * through `sendOnce` (`http/send_once.ts`): fetch never sends a token
 * request, a registration or a revocation twice.
 */
export function signInFetch(caCerts: readonly string[] | undefined): FetchLike {
  const http = linkFetch(caCerts === undefined ? {} : { caCerts });
  return (input, init) => http.fetch(input, init ?? {});
}
