/**
 * The redirect listener of one sign-in, on 127.0.0.1 only: the one-time
 * start URL `/start/<random>` that sends the browser on to the authorization
 * URL, and `/callback`, where the authorization server sends it back. The
 * browser gets a plain page that says whether the sign-in is done.
 *
 * @module
 */

import { randomToken } from "../random_token.ts";
import { UpstreamFailure } from "../upstream/failure.ts";
import { isSignInFailure, signInFailure } from "./failures.ts";

/** What the redirect brought: the code and the `iss` parameter (RFC 9207). */
export interface RedirectResult {
  readonly code: string;
  readonly iss: string | undefined;
}

/** The end of a sign-in as the browser page tells it. */
export type PageOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * What the query of a redirect means for the sign-in of `state`: its code,
 * the failure that it ends the sign-in with (with what the page says), or
 * `other`, a redirect of another sign-in (no `state`, or another one).
 */
export type RedirectCheck =
  | { readonly kind: "code"; readonly result: RedirectResult }
  | { readonly kind: "failure"; readonly failure: UpstreamFailure; readonly reason: string }
  | { readonly kind: "other" };

/** Checks the query of a redirect against the `state` of the sign-in (undefined before it). */
export function checkRedirect(params: URLSearchParams, state: string | undefined): RedirectCheck {
  if (state === undefined || params.get("state") !== state) return { kind: "other" };
  const error = params.get("error");
  const code = params.get("code");
  if (error !== null) {
    const safe = safeErrorCode(error);
    return safe === "access_denied"
      ? {
        kind: "failure",
        failure: signInFailure("sign_in_denied"),
        reason: "The authorization server refused the access.",
      }
      : {
        kind: "failure",
        failure: signInFailure("sign_in_error", safe),
        reason: `The authorization server sent the error ${safe}.`,
      };
  }
  if (code === null || code === "") {
    return {
      kind: "failure",
      failure: signInFailure("sign_in_failed", "the redirect has no code"),
      reason: "The redirect has no authorization code.",
    };
  }
  return { kind: "code", result: { code, iss: params.get("iss") ?? undefined } };
}

/** A code of an OAuth error that is safe to show and log (RFC 6749 allows no more). */
export function safeErrorCode(code: string): string {
  return /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code) && !/\s/.test(code) ? code : "invalid";
}

function page(status: number, title: string, text: string): Response {
  const escape = (s: string) =>
    s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  const body = `<!doctype html><html><head><meta charset="utf-8"><title>${
    escape(title)
  }</title></head><body><h1>${escape(title)}</h1><p>${escape(text)}</p></body></html>`;
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}

/** How long the callback page waits for the outcome of the token request. */
const PAGE_WAIT_MS = 30_000;

/**
 * The listener of one sign-in. `listen` fails with redirect_port_unavailable
 * when the port is taken; `arm` gives it the authorization URL and `state`;
 * `redirect` resolves with the code of the redirect, or rejects with the
 * sign-in failure the redirect or a reused start URL means.
 */
export class RedirectListener {
  readonly port: number;
  readonly redirectUri: string;
  readonly startUrl: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #startPath: string;
  #authorizationUrl: string | undefined;
  #state: string | undefined;
  #startCount = 0;
  #redirected = false;
  #settle!: { resolve(result: RedirectResult): void; reject(error: UpstreamFailure): void };
  readonly #redirect: Promise<RedirectResult>;
  #outcome!: (outcome: PageOutcome) => void;
  readonly #page: Promise<PageOutcome>;

  private constructor(port: number, server: Deno.HttpServer<Deno.NetAddr>, startPath: string) {
    this.port = port;
    this.#server = server;
    this.#startPath = startPath;
    this.redirectUri = `http://127.0.0.1:${port}/callback`;
    this.startUrl = `http://127.0.0.1:${port}${startPath}`;
    this.#redirect = new Promise<RedirectResult>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    // A failure nobody awaits yet must not be an unhandled rejection.
    this.#redirect.catch(() => {});
    this.#page = new Promise((resolve) => this.#outcome = resolve);
  }

  /** Listens on 127.0.0.1:`port`. */
  static listen(port: number): Promise<RedirectListener> {
    const startPath = `/start/${randomToken(24)}`;
    const holder: { listener?: RedirectListener } = {};
    let server: Deno.HttpServer<Deno.NetAddr>;
    try {
      server = Deno.serve(
        { hostname: "127.0.0.1", port, onListen: () => {} },
        (request) => holder.listener!.#handle(request),
      );
    } catch {
      return Promise.reject(
        signInFailure("redirect_port_unavailable", undefined, { port: String(port) }),
      );
    }
    holder.listener = new RedirectListener(server.addr.port, server, startPath);
    return Promise.resolve(holder.listener);
  }

  /** Gives the listener the URL the start URL redirects to, and the `state` of the redirect. */
  arm(authorizationUrl: string, state: string): void {
    this.#authorizationUrl = authorizationUrl;
    this.#state = state;
  }

  /** The redirect of the authorization server, or the failure of the sign-in. */
  redirect(): Promise<RedirectResult> {
    return this.#redirect;
  }

  /** Stops the sign-in with a failure (time limit, abort): the browser page says why. */
  fail(failure: UpstreamFailure, reason: string): void {
    this.#settle.reject(failure);
    this.#outcome({ ok: false, reason });
  }

  /** Tells the browser page how the sign-in ended. */
  finish(outcome: PageOutcome): void {
    this.#outcome(outcome);
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.#outcome({ ok: false, reason: "The sign-in stopped." });
    await this.#server.shutdown().catch(() => {});
  }

  /**
   * The redirect address that the user pasted into `login` (the browser was
   * on another machine): the checks of `/callback`. Only a code ends the
   * wait, as if the browser had come back; the first of the two wins, and
   * the other gets `other`. An error redirect or a redirect without a code
   * is given back, and the sign-in waits on.
   */
  paste(url: URL): RedirectCheck {
    const check = this.#check(url.searchParams);
    if (check.kind === "code") {
      this.#redirected = true;
      this.#settle.resolve(check.result);
    }
    return check;
  }

  /** The redirect checked against this sign-in: none is taken after the first. */
  #check(params: URLSearchParams): RedirectCheck {
    return this.#redirected ? { kind: "other" } : checkRedirect(params, this.#state);
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === this.#startPath && request.method === "GET") return this.#start();
    if (url.pathname === "/callback" && request.method === "GET") return await this.#callback(url);
    return page(404, "Not found", "This page does not exist.");
  }

  #start(): Response {
    this.#startCount += 1;
    if (this.#redirected) {
      return page(410, "Sign-in link used", "This sign-in link was used already. Close this tab.");
    }
    if (this.#startCount > 1 || this.#authorizationUrl === undefined) {
      this.fail(
        signInFailure("sign_in_start_reused"),
        "This sign-in link was opened twice, so the bridge stopped the sign-in.",
      );
      return page(
        409,
        "Sign-in stopped",
        "This sign-in link was opened twice, so the bridge stopped the sign-in. " +
          "Restart the server in VS Code to sign in again. You can close this tab.",
      );
    }
    return new Response(null, {
      status: 302,
      headers: {
        location: this.#authorizationUrl,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      },
    });
  }

  async #callback(url: URL): Promise<Response> {
    const check = this.#check(url.searchParams);
    if (check.kind === "other") {
      // Not the redirect of this sign-in: another tab, an old link, or a forgery.
      return page(400, "Not this sign-in", "This page is not for the current sign-in.");
    }
    this.#redirected = true;
    if (check.kind === "failure") this.fail(check.failure, check.reason);
    else this.#settle.resolve(check.result);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      this.#page,
      new Promise<PageOutcome>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, reason: "The sign-in did not finish in time." }),
          PAGE_WAIT_MS,
        );
      }),
    ]);
    clearTimeout(timer);
    return outcome.ok
      ? page(
        200,
        "Signed in",
        "The sign-in is done. You can close this tab and go back to VS Code.",
      )
      : page(
        400,
        "Sign-in failed",
        `The sign-in did not complete. ${outcome.reason} You can close this tab.`,
      );
  }
}

/** What the browser page says of a failed sign-in. */
export function pageReason(error: unknown): string {
  if (!isSignInFailure(error)) return "The sign-in stopped.";
  switch (error.signIn?.cause) {
    case "sign_in_denied":
      return "The authorization server refused the access.";
    case "sign_in_error":
      return `The authorization server sent the error ${error.signIn.detail ?? "invalid"}.`;
    case "sign_in_timeout":
      return "The time limit of the sign-in passed.";
    default:
      return "The token request of the bridge failed.";
  }
}
