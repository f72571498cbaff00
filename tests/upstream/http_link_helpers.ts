/**
 * What the tests of the HTTP link share: a link to a URL whose frames are
 * kept, a tools/call sent on it, and for the bridge in front of a raw
 * upstream the flags with a secret, the scan for secrets and the error of a
 * response.
 */

import { ok } from "node:assert/strict";
import { createHttpLink, type HttpLinkOptions } from "../../lib/upstream/http.ts";
import type { UpstreamFrame, UpstreamLink } from "../../lib/upstream/link.ts";

/** A link to `url` (1 MiB responses, plus `options`) and the frames it gives. */
export async function openLink(
  url: string,
  options: Partial<Omit<HttpLinkOptions, "url">> = {},
): Promise<{ link: UpstreamLink; frames: UpstreamFrame[] }> {
  const link = await createHttpLink({ url: new URL(url), maxResponseBytes: 1 << 20, ...options });
  const frames: UpstreamFrame[] = [];
  link.read((frame) => {
    frames.push(frame);
  });
  return { link, frames };
}

/** Sends the tools/call `id` of a tool `t`. */
export function call(link: UpstreamLink, id: number): Promise<void> {
  return link.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t" } });
}

/** What the bridge of the tests in front of a raw upstream must never print. */
export const SECRETS = ["secret-path", "sekrit-query", "header-value-s3cr3t"];

/** The variable of the header of {@linkcode SECRET_ARGS}. */
export const SECRET_ENV = { TEST_TOKEN: "Bearer header-value-s3cr3t" };

/** Debug logs, and a header whose value is a secret. */
export const SECRET_ARGS = ["--log-level", "debug", "--header-env", "Authorization=TEST_TOKEN"];

/** Fails when `text` (what the bridge wrote) holds one of `secrets`. */
export function assertNoSecret(text: string, secrets: readonly string[] = SECRETS): void {
  for (const secret of secrets) ok(!text.includes(secret), `the output holds ${secret}:\n${text}`);
}

/** The error object of an error response. */
export function errorOf(
  msg: Record<string, unknown>,
): { code: number; data?: Record<string, unknown> } {
  ok("error" in msg, JSON.stringify(msg));
  return msg.error as { code: number; data?: Record<string, unknown> };
}
