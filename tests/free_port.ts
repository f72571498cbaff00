/**
 * Ports for the listeners that a test names in advance (the redirect port of
 * a sign-in): free when picked, and outside the ports that the system hands
 * out (32768-60999 on Linux) and the redirect ports that the bridge derives
 * from a URL (20000-31999). A port that the system gave out and the test
 * released could be taken by any connection of the run before the bridge
 * listens on it; a port of this range only by another explicit listener.
 *
 * @module
 */

import { portIsFree } from "../lib/net/loopback.ts";

/** The first port of the range, and how many there are. */
const FIRST = 10_000;
const COUNT = 10_000;

/** A port of 10000-19999 on 127.0.0.1 that was free a moment ago. */
export function freePort(): number {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (portIsFree(port)) return port;
  }
  throw new Error("no free port in 10000-19999 after 100 tries");
}
