/**
 * What the tests of the HTTP link share: a link to a URL whose frames are
 * kept, and a tools/call sent on it.
 */

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
