/**
 * Framing and JSON-RPC 2.0: the line framer, the depth-limited parse, the id
 * scanner and the message writer.
 *
 * @module
 */
export * from "./framer.ts";
export * from "./id_scan.ts";
export * from "./message.ts";
export * from "./parse.ts";
export * from "./writer.ts";
