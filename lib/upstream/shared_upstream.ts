/**
 * The life of a shared upstream (`serve`): one link of revision 2026-07-28
 * for all the front ends of a name (`shared_link.ts`). It starts at the
 * first initialize that needs it, and stops a grace time after the last
 * front end has left it (a window that reloads gets the same child). When
 * it ends by itself (the child stopped, the connection closed), each front
 * end on it loses it as a stdio bridge loses its child; the next initialize
 * starts a new one. A link that can no longer send while it runs on (a child
 * that closed its stdin) is retired: each front end on it fails its later
 * requests, the next initialize starts a new link, and the retired one
 * stops as soon as its last front end has left (its requests in flight may
 * still be answered until then).
 *
 * @module
 */

import type { Logger } from "../log.ts";
import { formatLimit } from "../settings/limits.ts";
import { UpstreamFailure } from "./failure.ts";
import { type Connect, endWords, type UpstreamLink } from "./link.ts";
import { LinkHub } from "./shared_link.ts";

/** Options of a {@linkcode SharedUpstream}. */
export interface SharedUpstreamOptions {
  /** Makes the one link (a child, or the HTTP link of a URL with its sign-in). */
  readonly connect: Connect;
  /** How long the link stays after its last front end left. */
  readonly graceMs: number;
  /** The upstream's own lines (its start and its stop). */
  readonly log: Logger;
  /** How long a canceled request still counts for the log messages (tests). */
  readonly lingerMs?: number;
}

/** The shared upstream of one name. */
export class SharedUpstream {
  readonly #o: SharedUpstreamOptions;
  #hub: LinkHub | undefined;
  #starting: Promise<LinkHub> | undefined;
  #grace: ReturnType<typeof setTimeout> | undefined;
  #closing: Promise<void> | undefined;
  /** The links that can no longer send, each until its last front end has left. */
  readonly #retired = new Set<LinkHub>();
  /** The links that were stopped by the grace or the close, for the close to wait for. */
  readonly #stopping = new Set<Promise<unknown>>();

  constructor(options: SharedUpstreamOptions) {
    this.#o = options;
  }

  /** True while a link runs (for tests and the log). */
  get running(): boolean {
    return this.#hub !== undefined;
  }

  /**
   * The `Connect` of one front end: a link of its own on the shared one,
   * which starts now when none runs. A link that cannot start rejects as a
   * link of its own would (spawn_failed, connect_failed).
   */
  readonly connect: Connect = async (): Promise<UpstreamLink> => {
    if (this.#closing) throw new UpstreamFailure("spawn_failed");
    let hub = await this.#current();
    // Retired meanwhile: the new front end gets the new link.
    while (hub.sendFailure) hub = await this.#current();
    clearTimeout(this.#grace);
    this.#grace = undefined;
    return hub.attach(() => this.#left(hub));
  };

  #current(): Promise<LinkHub> {
    const failure = this.#hub?.sendFailure;
    if (failure) this.#retire(this.#hub!, failure);
    if (this.#hub) return Promise.resolve(this.#hub);
    this.#starting ??= (async () => {
      try {
        const hub = new LinkHub(await this.#o.connect(), {
          log: this.#o.log,
          ...(this.#o.lingerMs !== undefined && { lingerMs: this.#o.lingerMs }),
        });
        this.#hub = hub;
        this.#o.log.info("the upstream server started: every session shares it");
        hub.sendEnded?.then((failure) => this.#retire(hub, failure));
        hub.ended.then((end) => {
          this.#retired.delete(hub);
          if (this.#hub !== hub) return;
          this.#hub = undefined;
          clearTimeout(this.#grace);
          this.#o.log.error(`${endWords(end)}; the next initialize starts it again`);
        });
        return hub;
      } finally {
        this.#starting = undefined;
      }
    })();
    return this.#starting;
  }

  /** The link can no longer send: the next initialize starts a new one. */
  #retire(hub: LinkHub, failure: UpstreamFailure): void {
    if (this.#hub !== hub) return;
    this.#hub = undefined;
    clearTimeout(this.#grace);
    this.#grace = undefined;
    const what = failure.kind === "closed"
      ? "the upstream server closed its stdin"
      : "the stdin of the upstream server failed";
    this.#o.log.info(
      `${what}: each later request of its sessions fails; the next initialize starts a new ` +
        "one, and this one stops when its last session has left",
    );
    this.#retired.add(hub);
    this.#left(hub);
  }

  /** A front end left: after the last one, the link stops when the grace passes. */
  #left(hub: LinkHub): void {
    if (this.#retired.has(hub)) {
      // A link that cannot send is of no use to a later front end: it stops at once.
      if (hub.size > 0) return;
      this.#retired.delete(hub);
      this.#stop(hub);
      return;
    }
    if (hub !== this.#hub || hub.size > 0 || this.#closing) return;
    clearTimeout(this.#grace);
    this.#grace = setTimeout(() => {
      this.#grace = undefined;
      if (hub !== this.#hub || hub.size > 0) return;
      // The next initialize starts a new link at once, while this one stops.
      this.#hub = undefined;
      this.#o.log.info(
        `the upstream server stops: no session for ${formatLimit(this.#o.graceMs)}`,
      );
      this.#stop(hub);
    }, this.#o.graceMs);
  }

  #stop(hub: LinkHub): void {
    const stopped = hub.close().then(() => hub.ended);
    this.#stopping.add(stopped);
    stopped.finally(() => this.#stopping.delete(stopped));
  }

  /** Stops the link now (the end of `serve`) and waits for it; no link starts after this. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#grace);
      await this.#starting?.catch(() => {});
      const hub = this.#hub;
      this.#hub = undefined;
      if (hub) this.#stop(hub);
      for (const retired of this.#retired) this.#stop(retired);
      this.#retired.clear();
      await Promise.allSettled([...this.#stopping]);
    })();
    return this.#closing;
  }
}
