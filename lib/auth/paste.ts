/**
 * The paste fallback of `login`, for a browser on another machine (SSH,
 * WSL, a container): that browser cannot open the start URL on 127.0.0.1
 * here, nor load the redirect. With `--no-browser`, `login` prints the
 * authorization URL itself on the terminal; the user opens it anywhere,
 * signs in, and pastes back the address that the browser ends on (the
 * redirect, whose page does not load there). `login` reads lines on stdin
 * while the redirect listener waits: a line with the redirect address goes
 * through the listener's own checks (`RedirectListener.paste`), and the
 * first of the two to bring a code wins. The bridge under VS Code never
 * reads stdin for this (stdin is the protocol there).
 *
 * No pasted line, code, state or address reaches the terminal or the log:
 * each line that does not complete the sign-in gets one warn line that
 * says why, in words of its own.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { RedirectListener } from "./redirect.ts";

/** Where `login` reads the pasted lines and writes the authorization URL. */
export interface PasteInput {
  /** The lines that the user pastes (login's stdin), opened when the sign-in waits for them. */
  readonly open: () => ReadableStream<Uint8Array>;
  /** Writes text to the terminal of `login` (its stderr). */
  readonly write: (text: string) => void;
  /** `--no-browser`: print the authorization URL and how to paste the redirect. */
  readonly showUrl: boolean;
}

/** The reading of one sign-in's pastes; `stop` ends it (and the read of stdin). */
export interface Pasting {
  stop(): Promise<void>;
}

/** The longest line that is read as a paste; a longer one is refused. */
export const MAX_PASTE_CHARS = 64 * 1024;

/**
 * Reads an address as the user pastes it: an http(s) URL, or the redirect
 * address without its `http://` (as some browsers show it). Undefined for
 * anything else.
 */
export function pastedAddress(text: string): URL | undefined {
  const candidate = /^127\.0\.0\.1[:/]/.test(text) ? `http://${text}` : text;
  if (!URL.canParse(candidate)) return undefined;
  const url = new URL(candidate);
  return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
}

/**
 * Starts to read pastes for the sign-in of `listener` (armed with its
 * authorization URL and state), and prints the authorization URL when the
 * input asks for it.
 */
export function readPastes(
  input: PasteInput,
  listener: RedirectListener,
  authorizationUrl: string,
  log: Logger,
): Pasting {
  const redirectUri = listener.redirectUri;
  if (input.showUrl) {
    log.info(
      "with a browser on another machine: open the URL below there, sign in, then paste here " +
        `the address that the browser ends on (it begins with ${redirectUri} and its page ` +
        "does not load there) and press Enter",
    );
    // A line of its own, without the log's prefix, so that it copies whole.
    input.write(`${authorizationUrl}\n`);
  }
  const take = (line: string) => {
    const text = line.trim();
    if (text === "") return;
    const url = pastedAddress(text);
    if (url === undefined) {
      log.warn(
        `the pasted line is not an address: paste the whole address that begins with ${redirectUri}`,
      );
      return;
    }
    if (`${url.origin}${url.pathname}` !== redirectUri) {
      log.warn(
        "the pasted address is not the redirect of the sign-in: paste the address that the " +
          `browser ends on after the sign-in, which begins with ${redirectUri}`,
      );
      return;
    }
    const check = listener.paste(url);
    if (check.kind === "other") {
      log.warn(
        "the pasted address is not the redirect of this sign-in (its state is not this " +
          "sign-in's): paste the address of the browser that opened the URL of this login",
      );
    } else if (check.kind === "failure") {
      log.warn(
        `the pasted address does not sign in: ${check.reason} Open the URL of this login ` +
          "again to sign in, and paste the new address",
      );
    }
  };
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = input.open().getReader();
  } catch {
    // No stdin to read (closed): the listener waits alone.
    return { stop: () => Promise.resolve() };
  }
  let stopped = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let line = "";
    // A line longer than the limit is dropped up to its end, with one warn line.
    let dropping = false;
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        return; // stdin failed: the listener waits on
      }
      // The end of stdin leaves the listener waiting.
      if (chunk.done || stopped) return;
      let text = decoder.decode(chunk.value, { stream: true });
      for (let at = text.indexOf("\n"); at >= 0 && !stopped; at = text.indexOf("\n")) {
        if (dropping) dropping = false;
        else take(line + text.slice(0, at));
        line = "";
        text = text.slice(at + 1);
      }
      if (dropping) continue;
      line += text;
      if (line.length > MAX_PASTE_CHARS) {
        log.warn(`the pasted line is longer than ${MAX_PASTE_CHARS} characters: it is not read`);
        line = "";
        dropping = true;
      }
    }
  })();
  return {
    /** Stops the reading (it can be called again). */
    async stop() {
      stopped = true;
      await reader.cancel().catch(() => {});
      await reading;
    },
  };
}
