/**
 * The upstream part of `doctor`: starts the upstream server (or connects to
 * the URL) as the bridge does at initialize, with the capabilities that VS
 * Code declares, and asks it for its lists. Every failure is the client's
 * error of the bridge (cause and detail), which never holds a secret.
 *
 * @module
 */

import { failureSummary, mapUpstreamFailure } from "../errors/failures.ts";
import { formatLimit, type Limits } from "../settings/limits.ts";
import type { Logger } from "../log.ts";
import type { Profile } from "../settings/profile.ts";
import { startUpstream } from "../start/start.ts";
import { initializeCapabilities, serverInfo } from "../translate/translate.ts";
import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { UpstreamClient } from "../upstream/client.ts";
import { UPSTREAM_PROTOCOL_VERSION } from "../upstream/envelope.ts";
import type { Connect } from "../upstream/link.ts";
import type { Report } from "./report.ts";
import { repairsOf } from "./repairs.ts";
import { HiddenTools } from "./hidden_tools.ts";
import type { ToolFilter } from "../translate/tool_filter.ts";

/** The client that VS Code is, as the bridge sees it at initialize. */
export const VSCODE_CLIENT = {
  clientInfo: { name: "Visual Studio Code", version: "1.107.0" },
  capabilities: {
    roots: { listChanged: true },
    sampling: {},
    elicitation: { form: {}, url: {} },
  },
} as const;

/** The revision that VS Code speaks, and that `--protocol auto` passes through. */
export const LEGACY_REVISION = "2025-11-25";

/** The most pages of one list that `doctor` reads. */
const MAX_PAGES = 20;

/** What `doctor` needs to probe the upstream. */
export interface ProbeOptions {
  readonly connect: Connect;
  readonly limits: Limits;
  readonly profile: Profile;
  /** The fallback server name (--name, or the file name of the command, or the host). */
  readonly name: string;
  readonly version: string;
  /** A silent logger, or one for --log-level debug. */
  readonly log: Logger;
  /** `--protocol auto`: the bridge passes an upstream of revision 2025-11-25 through. */
  readonly passThrough?: boolean;
  /** `--tool` and `--ignore-tool`: the report names the tools that they hide. */
  readonly tools?: ToolFilter | undefined;
  /**
   * With `passThrough`: the link of revision 2025-11-25 that the bridge then
   * uses (the 2025-11-25 HTTP transport for a URL); default `connect`.
   */
  readonly legacyConnect?: Connect | undefined;
}

/** How the probe ended. */
export interface ProbeResult {
  /** True when server/discover answered. */
  readonly ready: boolean;
  /** The cause of the failed start (`discover_failed`, `spawn_failed`, a sign-in cause...). */
  readonly cause?: string;
}

const SERVER_CAPABILITY_WORDS: Readonly<Record<string, string>> = {
  tools: "tools",
  prompts: "prompts",
  resources: "resources",
  completions: "completion",
  logging: "log messages",
};

/** The capabilities in words, with their sub-capabilities. */
function capabilityWords(capabilities: JsonObject): string {
  const words: string[] = [];
  for (const [key, value] of Object.entries(capabilities)) {
    const word = SERVER_CAPABILITY_WORDS[key];
    if (word === undefined) continue;
    const subs = isObject(value) ? Object.keys(value).filter((k) => value[k] === true) : [];
    words.push(subs.length > 0 ? `${word} (${subs.join(", ")})` : word);
  }
  return words.length > 0 ? words.join(", ") : "none";
}

/** The list requests of the declared capabilities. */
function listsOf(capabilities: JsonObject): string[] {
  const lists: string[] = [];
  if (isObject(capabilities.tools)) lists.push("tools/list");
  if (isObject(capabilities.prompts)) lists.push("prompts/list");
  if (isObject(capabilities.resources)) lists.push("resources/list", "resources/templates/list");
  return lists;
}

/** Reads every page of one list (at most 20) and reports the bridge's repairs. */
async function checkList(
  session: UpstreamClient,
  method: string,
  options: ProbeOptions,
  report: Report,
): Promise<void> {
  const icons = session.link.isRemote ? "data_only" : "all";
  const limit = options.limits.list_timeout_ms;
  let cursor: string | undefined;
  let items = 0;
  const hidden = method === "tools/list" && options.tools
    ? new HiddenTools(options.tools)
    : undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let result: Json;
    try {
      result = await session.request(method, cursor === undefined ? {} : { cursor }, {
        timeoutMs: limit,
      });
    } catch (error) {
      const reason = failureSummary(mapUpstreamFailure(error, method, formatLimit(limit)));
      report.add("break", `${method} failed (${reason}): VS Code shows an error for it.`);
      return;
    }
    if (!isObject(result)) {
      report.add("break", `${method} answered with a result that is not an object.`);
      return;
    }
    const key = method === "resources/templates/list" ? "resourceTemplates" : method.split("/")[0]!;
    if (Array.isArray(result[key])) items += (result[key] as Json[]).length;
    // The repairs are those of the tools that VS Code sees.
    hidden?.page(result);
    for (const line of repairsOf(method, result, options.profile.quirks, icons)) {
      report.add("repair", line);
    }
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  report.add("ok", `${method}: ${items} ${items === 1 ? "item" : "items"}.`);
  hidden?.report(items, report);
}

/** An upstream session of revision 2025-11-25 that answered initialize. */
interface LegacySession {
  readonly revision: string;
  readonly capabilities: JsonObject;
  readonly session: UpstreamClient;
}

/**
 * Whether the upstream answers `initialize` of revision 2025-11-25: its
 * session (the caller closes it), else undefined.
 */
async function legacySession(options: ProbeOptions): Promise<LegacySession | undefined> {
  let session: UpstreamClient | undefined;
  try {
    const connect = options.passThrough && options.legacyConnect
      ? options.legacyConnect
      : options.connect;
    session = new UpstreamClient(await connect(), { ...VSCODE_CLIENT, debug: () => {} });
    const result = await session.request("initialize", {
      protocolVersion: LEGACY_REVISION,
      capabilities: VSCODE_CLIENT.capabilities,
      clientInfo: VSCODE_CLIENT.clientInfo,
    }, { timeoutMs: options.limits.discover_timeout_ms });
    if (isObject(result) && typeof result.protocolVersion === "string") {
      const capabilities = isObject(result.capabilities) ? result.capabilities : {};
      return { revision: result.protocolVersion, capabilities, session };
    }
  } catch {
    // Not a server of that revision either.
  }
  await session?.close();
  return undefined;
}

/**
 * The tools of a server that the pass-through serves, when `--tool` or
 * `--ignore-tool` is given: the report names those that they hide.
 */
async function checkLegacyTools(
  legacy: LegacySession,
  options: ProbeOptions,
  report: Report,
): Promise<void> {
  if (!options.tools) return;
  if (!isObject(legacy.capabilities.tools)) {
    report.add("note", "The server declares no tools: --tool and --ignore-tool hide nothing.");
    return;
  }
  await legacy.session.link.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await checkList(legacy.session, "tools/list", options, report);
}

/**
 * Starts the upstream as the bridge does, and reports: whether it starts,
 * the revision it speaks, its capabilities, and the repairs of its lists.
 */
export async function probeUpstream(options: ProbeOptions, report: Report): Promise<ProbeResult> {
  const { limits, log } = options;
  const started = await startUpstream({
    connect: options.connect,
    clientInfo: VSCODE_CLIENT.clientInfo,
    capabilities: VSCODE_CLIENT.capabilities,
    discoverTimeoutMs: limits.discover_timeout_ms,
    signal: new AbortController().signal,
    log,
    onLogMessage: () => {},
  });
  if (started.kind !== "ready") {
    if (started.kind === "canceled") return { ready: false };
    if (started.kind === "legacy") {
      // Only a start with a fallback (the bridge's --protocol auto) gives one.
      await started.session.close();
      return { ready: false };
    }
    await started.stopped;
    const data = started.error.data as { cause?: string };
    const cause = data.cause ?? "internal";
    const reason = failureSummary(started.error);
    if (cause === "discover_failed") {
      const legacy = await legacySession(options);
      if (legacy !== undefined && options.passThrough) {
        report.add(
          "ok",
          `The upstream server speaks revision ${legacy.revision}: with --protocol auto the bridge passes it through to VS Code.`,
        );
        try {
          await checkLegacyTools(legacy, options, report);
        } finally {
          await legacy.session.close();
        }
        return { ready: false, cause };
      }
      if (legacy !== undefined) {
        await legacy.session.close();
        report.add(
          "break",
          `The upstream server speaks revision ${legacy.revision} (it answered initialize), not ${UPSTREAM_PROTOCOL_VERSION} (server/discover: ${reason}). ` +
            "Start the bridge with --protocol auto to pass it through, or give VS Code the server itself.",
        );
        return { ready: false, cause };
      }
    }
    report.add("break", `The upstream server does not start or answer: ${reason}.`);
    return { ready: false, cause };
  }
  const { session, discover } = started;
  try {
    const versions = Array.isArray(discover.supportedVersions) ? discover.supportedVersions : [];
    report.add(
      "ok",
      `The upstream server answers server/discover; it speaks revision ${
        versions.filter((v) => typeof v === "string").join(", ") || "(none named)"
      }.`,
    );
    if (!versions.includes(UPSTREAM_PROTOCOL_VERSION)) {
      report.add(
        "note",
        `Its supportedVersions do not name ${UPSTREAM_PROTOCOL_VERSION}: the bridge asks in that revision.`,
      );
    }
    const icons = session.link.isRemote ? "data_only" : "all";
    const info = serverInfo(discover, { name: options.name, version: options.version }, icons);
    report.add("ok", `VS Code sees the server as '${info.name}' ${info.version}.`);
    const meta = isObject(discover._meta) ? discover._meta : {};
    const rawInfo = meta["io.modelcontextprotocol/serverInfo"];
    const rawIcons = isObject(rawInfo) && Array.isArray(rawInfo.icons) ? rawInfo.icons.length : 0;
    const keptIcons = Array.isArray(info.icons) ? info.icons.length : 0;
    if (keptIcons < rawIcons) {
      report.add(
        "repair",
        `serverInfo: dropped ${
          rawIcons - keptIcons
        } of ${rawIcons} icons (only data: icons of a remote server reach VS Code)`,
      );
    }
    const capabilities = initializeCapabilities(discover.capabilities);
    report.add("ok", `Capabilities: ${capabilityWords(capabilities)}.`);
    if (options.tools && !isObject(capabilities.tools)) {
      report.add("note", "The server declares no tools: --tool and --ignore-tool hide nothing.");
    }
    for (const method of listsOf(capabilities)) {
      await checkList(session, method, options, report);
    }
  } finally {
    await session.close();
  }
  return { ready: true };
}
