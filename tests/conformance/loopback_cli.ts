/**
 * Runs the CLI of `@modelcontextprotocol/conformance` with its test servers
 * on 127.0.0.1: the package listens on every interface (`listen(0)`), and
 * the tests of this project listen on loopback only. The package reads the
 * port right after `listen`, so the bind must stay synchronous: the
 * host-less path of `listen` with the loopback address.
 *
 * @module
 */

import net from "node:net";

interface Bindable {
  listen(...args: unknown[]): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  _listen2(address: string, port: number, addressType: number, backlog: number): void;
}

const proto = net.Server.prototype as unknown as Bindable;
const listen = proto.listen;
proto.listen = function (this: Bindable, ...args: unknown[]) {
  const [port, callback] = args;
  if (typeof port === "number" && (args.length === 1 || typeof callback === "function")) {
    if (typeof callback === "function") this.once("listening", callback as () => void);
    this._listen2("127.0.0.1", port, 4, 511);
    return this;
  }
  return listen.apply(this, args);
};
await import("@modelcontextprotocol/conformance/dist/index.js");
