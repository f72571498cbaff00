/**
 * The headers that revision 2026-07-28 mirrors from the message of a POST
 * (the Streamable HTTP transport, as the SDK v2 client transport
 * `StreamableHTTPClientTransport` of `@modelcontextprotocol/client` 2.4.0
 * sends them): `MCP-Protocol-Version` from the envelope, `Mcp-Method` and
 * `Mcp-Name` of a request, and the `Mcp-Param-*` headers of a tools/call
 * whose tool declares `x-mcp-header` properties in its input schema.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { ENVELOPE_KEYS, UPSTREAM_PROTOCOL_VERSION } from "./envelope.ts";

/** The member of the params that `Mcp-Name` mirrors, by method. */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";
/** An RFC 9110 token: the name of a header field (ours, the user's, the server's). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PARAM_TYPES: ReadonlySet<string> = new Set(["string", "integer", "boolean"]);

/**
 * A value as an HTTP field value: plain when it is printable ASCII without
 * spaces at its ends, else `=?base64?<UTF-8 in Base64>?=`.
 */
export function encodeHeaderValue(value: string): string {
  let plain = value.length > 0 && value === value.trim() &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX));
  for (let i = 0; plain && i < value.length; i++) {
    const code = value.charCodeAt(i);
    plain = code === 9 || (code >= 0x20 && code <= 0x7e);
  }
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${BASE64_PREFIX}${btoa(binary)}${BASE64_SUFFIX}`;
}

/** One `x-mcp-header` declaration: the path of the argument and the header name. */
export interface ParamHeader {
  readonly path: readonly string[];
  readonly name: string;
}

/**
 * The `x-mcp-header` declarations of an input schema, on the chain of
 * `properties` from the root, for primitive properties. A schema that
 * breaks a rule of the declarations gives none: the server then checks
 * nothing that the bridge could send.
 */
export function paramHeadersOf(schema: Json | undefined): ParamHeader[] {
  const out: ParamHeader[] = [];
  const seen = new Set<string>();
  const visit = (node: Json | undefined, path: string[], depth: number): boolean => {
    if (!isObject(node) || depth > 32) return true;
    if (Object.hasOwn(node, "x-mcp-header")) {
      const name = node["x-mcp-header"];
      const type = node.type;
      if (
        path.length === 0 || typeof name !== "string" || !HEADER_NAME.test(name) ||
        typeof type !== "string" || !PARAM_TYPES.has(type) || seen.has(name.toLowerCase())
      ) return false;
      seen.add(name.toLowerCase());
      out.push({ path, name });
    }
    const properties = node.properties;
    if (!isObject(properties)) return true;
    for (const [key, child] of Object.entries(properties)) {
      if (!visit(child, [...path, key], depth + 1)) return false;
    }
    return true;
  };
  return visit(schema, [], 0) ? out : [];
}

/** The text of a primitive argument, or undefined for a value that gets no header. */
function primitiveText(value: Json | undefined): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/**
 * The headers mirrored from one message. `paramHeaders` gives the
 * declarations of a tool by name (from the last tools/list).
 */
export function mirroredHeaders(
  message: JsonObject,
  paramHeaders: (tool: string) => readonly ParamHeader[] | undefined,
): [string, string][] {
  const params = isObject(message.params) ? message.params : undefined;
  const meta = params && isObject(params._meta) ? params._meta : undefined;
  const version = meta?.[ENVELOPE_KEYS.protocolVersion];
  const headers: [string, string][] = [
    ["mcp-protocol-version", typeof version === "string" ? version : UPSTREAM_PROTOCOL_VERSION],
  ];
  const method = message.method;
  if (typeof method !== "string" || !Object.hasOwn(message, "id")) return headers;
  headers.push(["mcp-method", method]);
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  const name = field && params ? params[field] : undefined;
  if (typeof name === "string") headers.push(["mcp-name", encodeHeaderValue(name)]);
  if (method === "tools/call" && typeof name === "string") {
    const args = params?.arguments;
    for (const declaration of paramHeaders(name) ?? []) {
      let value: Json | undefined = args;
      for (const key of declaration.path) value = isObject(value) ? value[key] : undefined;
      const text = primitiveText(value);
      if (text !== undefined) {
        headers.push([`mcp-param-${declaration.name}`, encodeHeaderValue(text)]);
      }
    }
  }
  return headers;
}

/**
 * The `x-mcp-header` declarations of the tools, by name, learned from each
 * tools/list result that passes the link (and from the link's own list after
 * a header mismatch).
 */
export class ToolHeaders {
  readonly #byTool = new Map<string, readonly ParamHeader[]>();
  /** The ids of the link's own tools/list requests. */
  #lists = 0;

  get(tool: string): readonly ParamHeader[] | undefined {
    return this.#byTool.get(tool);
  }

  /**
   * Lists the tools again, every page, with `ask` (the link's own POST and
   * its response, or undefined), after a header mismatch of `call`.
   */
  async refresh(
    call: JsonObject,
    ask: (request: JsonObject) => Promise<JsonObject | undefined>,
  ): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_OWN_LIST_PAGES; page++) {
      const reply = await ask(toolListRequest(`bridge-tools-${++this.#lists}`, call, cursor));
      if (!reply) return;
      this.learn(reply.result);
      const next = isObject(reply.result) ? reply.result.nextCursor : undefined;
      if (typeof next !== "string") return;
      cursor = next;
    }
  }

  /** Keeps the declarations of each tool of one tools/list result (one page). */
  learn(result: Json | undefined): void {
    const tools = isObject(result) ? result.tools : undefined;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== "string") continue;
      const declared = paramHeadersOf(tool.inputSchema);
      if (declared.length > 0) this.#byTool.set(tool.name, declared);
      else this.#byTool.delete(tool.name);
    }
  }
}

/** The JSON-RPC error of a 400 whose Mcp-Param headers do not match the tool (SEP-2243). */
export const HEADER_MISMATCH = -32020;
/** The pages of the link's own tools/list after a header mismatch. */
const MAX_OWN_LIST_PAGES = 50;

/**
 * The tools/list request of the link's own, with the envelope of the
 * request that needs it (the `_meta` keys of revision 2026-07-28 only).
 */
function toolListRequest(id: string, of: JsonObject, cursor: string | undefined): JsonObject {
  const params = isObject(of.params) ? of.params : undefined;
  const meta = params && isObject(params._meta) ? params._meta : {};
  const envelope: JsonObject = {};
  for (const key of Object.values(ENVELOPE_KEYS)) {
    const value = meta[key];
    if (value !== undefined) envelope[key] = value;
  }
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/list",
    params: { ...(cursor !== undefined && { cursor }), _meta: envelope },
  };
}
