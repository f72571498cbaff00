/**
 * Translation between the revisions: the capabilities of the client for the
 * upstream server, the initialize result from the discover result, and the
 * params of a forwarded request. Pure functions over JSON.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { ENVELOPE_KEYS, SERVER_INFO_KEY } from "../upstream/envelope.ts";
import type { Profile } from "../settings/profile.ts";

/**
 * The methods that the bridge forwards; both revisions have them.
 */
export const FORWARDED_METHODS: ReadonlySet<string> = new Set([
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete",
]);

/**
 * The methods whose results are pages with `nextCursor`, and the member of their items.
 */
export const LIST_METHODS: ReadonlyMap<string, string> = new Map([
  ["tools/list", "tools"],
  ["prompts/list", "prompts"],
  ["resources/list", "resources"],
  ["resources/templates/list", "resourceTemplates"],
]);

/** The Tasks extension; the bridge declares no tasks in either direction. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The members of `value` that are objects, without the Tasks extension when asked. */
function objectMembers(value: Json | undefined, dropTasks: boolean): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  const out: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    if (dropTasks && key === TASKS_EXTENSION) continue;
    if (isObject(member)) out[key] = member;
  }
  return out;
}

/** The members of `value` named in `keys` whose values are objects. */
function objectSubset(value: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    const member = value[key];
    if (isObject(member)) out[key] = member;
  }
  return out;
}

/**
 * The capabilities that the upstream server gets from the capabilities of the
 * client: sampling and the elicitation modes as declared, roots without
 * listChanged, the object members of experimental and extensions (never the
 * Tasks extension), and nothing else. A member without the shape of the
 * schema is dropped.
 *
 * @example
 * ```ts
 * import { TASKS_EXTENSION, upstreamCapabilities } from "./translate.ts";
 * const caps = upstreamCapabilities({
 *   roots: { listChanged: true },
 *   elicitation: { form: {}, other: {} },
 *   extensions: { [TASKS_EXTENSION]: {}, "example.com/x": {} },
 *   tasks: {},
 * });
 * const want = '{"elicitation":{"form":{}},"roots":{},"extensions":{"example.com/x":{}}}';
 * if (JSON.stringify(caps) !== want) throw new Error();
 * ```
 */
export function upstreamCapabilities(client: Json | undefined): JsonObject {
  const out: JsonObject = {};
  if (!isObject(client)) return out;
  // The members that the schema has, as declared; nothing is added.
  if (isObject(client.sampling)) out.sampling = objectSubset(client.sampling, ["context", "tools"]);
  if (isObject(client.elicitation)) {
    out.elicitation = objectSubset(client.elicitation, ["form", "url"]);
  }
  if (isObject(client.roots)) out.roots = {};
  const experimental = objectMembers(client.experimental, false);
  if (experimental) out.experimental = experimental;
  const extensions = objectMembers(client.extensions, true);
  if (extensions) out.extensions = extensions;
  return out;
}

/**
 * The clientInfo for the upstream server: the members of an Implementation
 * that have its shape (name, version, title, description, websiteUrl, valid
 * icons). A member without the shape is dropped, so that the `_meta`
 * envelope of each request stays valid.
 *
 * @example
 * ```ts
 * import { upstreamClientInfo } from "./translate.ts";
 * // A title that is not a string and an empty list of icons are dropped.
 * const info = upstreamClientInfo({ name: "VS Code", version: "1.99", title: 7, icons: [] });
 * if (JSON.stringify(info) !== '{"name":"VS Code","version":"1.99"}') throw new Error();
 * ```
 */
export function upstreamClientInfo(info: JsonObject): JsonObject {
  const out: JsonObject = { name: info.name ?? "", version: info.version ?? "" };
  for (const key of ["title", "description", "websiteUrl"] as const) {
    if (typeof info[key] === "string") out[key] = info[key];
  }
  if (Array.isArray(info.icons)) {
    const icons = info.icons.filter(isIcon);
    if (icons.length > 0) out.icons = icons;
  }
  return out;
}

/** The members of the discover capabilities that the initialize result keeps. */
const SERVER_CAPABILITIES = [
  "tools",
  "prompts",
  "resources",
  "completions",
  "logging",
  "experimental",
  "extensions",
] as const;

/**
 * The capabilities of the initialize result, from those of the discover result.
 *
 * @example
 * ```ts
 * import { initializeCapabilities, TASKS_EXTENSION } from "./translate.ts";
 * const discovered = { tools: {}, tasks: {}, extensions: { [TASKS_EXTENSION]: {} } };
 * const caps = initializeCapabilities(discovered);
 * if (JSON.stringify(caps) !== '{"tools":{},"extensions":{}}') throw new Error();
 * ```
 */
export function initializeCapabilities(discovered: Json | undefined): JsonObject {
  const out: JsonObject = {};
  if (!isObject(discovered)) return out;
  for (const key of SERVER_CAPABILITIES) {
    const member = discovered[key];
    if (!isObject(member)) continue;
    if (key === "extensions") {
      const { [TASKS_EXTENSION]: _tasks, ...rest } = member;
      out.extensions = rest;
    } else {
      out[key] = member;
    }
  }
  return out;
}

/**
 * What the bridge needs to fill serverInfo when the upstream gives none.
 *
 * @example
 * ```ts
 * import { type Fallback, serverInfo } from "./translate.ts";
 * const fallback: Fallback = { name: "everything", version: "0.1.0" };
 * // A discover result without serverInfo: the fallback fills it.
 * if (serverInfo({ capabilities: {} }, fallback, "all").name !== "everything") throw new Error();
 * ```
 */
export interface Fallback {
  /** The value of --name, or the file name of the upstream command without its extension. */
  readonly name: string;
  /** The version of the bridge. */
  readonly version: string;
}

/**
 * Which icons a result keeps: all of them, or only data: URIs (remote upstream).
 *
 * @example
 * ```ts
 * import { type IconRule, serverInfo } from "./translate.ts";
 * import { SERVER_INFO_KEY } from "../upstream/envelope.ts";
 * const icons = [{ src: "https://example.com/a.png" }, { src: "data:image/png;base64,AA==" }];
 * const discover = { _meta: { [SERVER_INFO_KEY]: { name: "s", version: "1", icons } } };
 * const remote: IconRule = "data_only";
 * const info = serverInfo(discover, { name: "f", version: "0" }, remote);
 * if (!Array.isArray(info.icons) || info.icons.length !== 1) throw new Error();
 * ```
 */
export type IconRule = "all" | "data_only";

function isIcon(value: Json): boolean {
  if (!isObject(value) || typeof value.src !== "string") return false;
  if (value.mimeType !== undefined && typeof value.mimeType !== "string") return false;
  if (value.theme !== undefined && value.theme !== "light" && value.theme !== "dark") return false;
  const sizes = value.sizes;
  return sizes === undefined || (Array.isArray(sizes) && sizes.every((s) => typeof s === "string"));
}

/**
 * True for an icon whose URI has the scheme data:, in any case.
 *
 * @example
 * ```ts
 * import { isDataIcon } from "./translate.ts";
 * if (!isDataIcon({ src: "DATA:image/png;base64,AA==" })) throw new Error("any case");
 * if (isDataIcon({ src: "https://example.com/a.png" }) || isDataIcon("data:x")) throw new Error();
 * ```
 */
export function isDataIcon(icon: Json): boolean {
  return isObject(icon) && typeof icon.src === "string" && /^data:/i.test(icon.src.trimStart());
}

/**
 * serverInfo from `_meta["io.modelcontextprotocol/serverInfo"]` of the
 * discover result, when it is valid and its name is not empty; else the
 * fallback name and the version of the bridge.
 *
 * @example
 * ```ts
 * import { serverInfo } from "./translate.ts";
 * import { SERVER_INFO_KEY } from "../upstream/envelope.ts";
 * const fallback = { name: "fallback", version: "0.1.0" };
 * const discover = { _meta: { [SERVER_INFO_KEY]: { name: "demo", version: "2", extra: 1 } } };
 * const info = serverInfo(discover, fallback, "all");
 * if (JSON.stringify(info) !== '{"name":"demo","version":"2"}') throw new Error();
 * // An empty name is not valid: the fallback is used.
 * const empty = { _meta: { [SERVER_INFO_KEY]: { name: "", version: "2" } } };
 * if (serverInfo(empty, fallback, "all").name !== "fallback") throw new Error();
 * ```
 */
export function serverInfo(discover: JsonObject, fallback: Fallback, icons: IconRule): JsonObject {
  const meta = discover._meta;
  const info = isObject(meta) ? meta[SERVER_INFO_KEY] : undefined;
  if (
    !isObject(info) || typeof info.name !== "string" || info.name === "" ||
    typeof info.version !== "string"
  ) {
    return { name: fallback.name, version: fallback.version };
  }
  const out: JsonObject = { name: info.name, version: info.version };
  for (const key of ["title", "description", "websiteUrl"] as const) {
    if (typeof info[key] === "string") out[key] = info[key];
  }
  if (Array.isArray(info.icons)) {
    const kept = info.icons.filter((icon) => isIcon(icon) && (icons === "all" || isDataIcon(icon)));
    if (kept.length > 0) out.icons = kept;
  }
  return out;
}

/**
 * The initialize result of the bridge, made from the discover result.
 *
 * @example
 * ```ts
 * import { initializeResult } from "./translate.ts";
 * import { VSCODE_PROFILE } from "../vscode/profile.ts";
 * const discover = { capabilities: { tools: {} }, instructions: "Use the tools." };
 * const result = initializeResult(VSCODE_PROFILE, discover, { name: "demo", version: "1" }, "all");
 * if (result.protocolVersion !== "2025-11-25" || result.instructions !== "Use the tools.") {
 *   throw new Error();
 * }
 * ```
 */
export function initializeResult(
  profile: Profile,
  discover: JsonObject,
  fallback: Fallback,
  icons: IconRule,
): JsonObject {
  const result: JsonObject = {
    protocolVersion: profile.reply_protocol_version,
    capabilities: initializeCapabilities(discover.capabilities),
    serverInfo: serverInfo(discover, fallback, icons),
  };
  if (typeof discover.instructions === "string") result.instructions = discover.instructions;
  return result;
}

/** The params of a forwarded request, and what the bridge keeps from them. */
export interface ForwardParams {
  /** The params for the upstream server, without task and _meta. */
  readonly params: JsonObject;
  /** The `_meta` of the client, for the progress rule and the passthrough. */
  readonly meta: JsonObject | undefined;
}

/**
 * Params for the upstream server: missing params or params that are not an
 * object become `{}`; `task` and `_meta` are removed; each other member stays.
 *
 * @example
 * ```ts
 * import { forwardParams } from "./translate.ts";
 * const { params, meta } = forwardParams({ name: "echo", task: {}, _meta: { progressToken: 3 } });
 * if (JSON.stringify(params) !== '{"name":"echo"}' || meta?.progressToken !== 3) throw new Error();
 * if (JSON.stringify(forwardParams(undefined).params) !== "{}") throw new Error();
 * ```
 */
export function forwardParams(params: Json | undefined): ForwardParams {
  if (!isObject(params)) return { params: {}, meta: undefined };
  const { task: _task, _meta, ...rest } = params;
  return { params: rest, meta: isObject(_meta) ? _meta : undefined };
}

/**
 * True when a request's `_meta` marks a client of revision 2026-07-28.
 *
 * @example
 * ```ts
 * import { hasModernMeta } from "./translate.ts";
 * import { ENVELOPE_KEYS } from "../upstream/envelope.ts";
 * const modern = { _meta: { [ENVELOPE_KEYS.protocolVersion]: "2026-07-28" } };
 * if (!hasModernMeta(modern)) throw new Error();
 * if (hasModernMeta({ _meta: { progressToken: 1 } })) throw new Error();
 * ```
 */
export function hasModernMeta(params: Json | undefined): boolean {
  return isObject(params) && isObject(params._meta) &&
    Object.hasOwn(params._meta, ENVELOPE_KEYS.protocolVersion);
}

/**
 * The progress token of the client: any JSON value except null, an array and
 * an object. `0` and `""` are tokens.
 *
 * @example
 * ```ts
 * import { progressToken } from "./translate.ts";
 * if (progressToken({ progressToken: 0 }) !== 0) throw new Error("0 is a token");
 * if (progressToken({ progressToken: null }) !== undefined) throw new Error();
 * ```
 */
export function progressToken(meta: JsonObject | undefined): string | number | boolean | undefined {
  const token = meta?.progressToken;
  if (typeof token === "string" || typeof token === "number" || typeof token === "boolean") {
    return token;
  }
  return undefined;
}

/**
 * Valid params of initialize, in revision 2025-11-25.
 *
 * @example
 * ```ts
 * import { isInitializeParams } from "./translate.ts";
 * const clientInfo = { name: "VS Code", version: "1.99" };
 * const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo };
 * if (!isInitializeParams(params)) throw new Error();
 * if (isInitializeParams({ ...params, clientInfo: { name: "x" } })) throw new Error("no version");
 * ```
 */
export function isInitializeParams(params: Json | undefined): params is JsonObject {
  if (!isObject(params)) return false;
  const info = params.clientInfo;
  return typeof params.protocolVersion === "string" &&
    isObject(params.capabilities) &&
    isObject(info) && typeof info.name === "string" && typeof info.version === "string";
}
