/**
 * The upstream part of `doctor`, in process: the probe starts the upstream
 * as the bridge does with VS Code's capabilities and reads its lists. An SDK
 * v2 server over the memory link (the R6 repair of a tool), a raw server at
 * a URL (the icons of a remote server, the pages of a list, a list that
 * fails, a supportedVersions without 2026-07-28), an upstream that does not
 * start. tests/doctor/main_test.ts probes a server of revision 2025-11-25
 * (with and without --protocol auto) in a child process.
 */

import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { probeUpstream, VSCODE_CLIENT } from "../../lib/doctor/probe.ts";
import { Report } from "../../lib/doctor/report.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";
import { DEFAULT_LIMITS } from "../../lib/settings/limits.ts";
import { createHttpLink } from "../../lib/upstream/http.ts";
import type { Connect } from "../../lib/upstream/link.ts";
import { connectMemoryLink } from "../../lib/upstream/memory.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { buildServer } from "../../scripts/embed_server.ts";
import { json, result, serveMcp } from "../fixtures/http_raw.ts";
import { ToolFilter } from "../../lib/translate/tool_filter.ts";

async function probe(
  connect: Connect,
  tools?: ToolFilter,
): Promise<{ ready: boolean; cause?: string; lines: string[] }> {
  const report = new Report();
  const outcome = await probeUpstream({
    ...(tools && { tools }),
    connect,
    limits: DEFAULT_LIMITS,
    profile: VSCODE_PROFILE,
    name: "fallback",
    version: "0.0.0",
    log: SILENT_LOGGER,
  }, report);
  return { ...outcome, lines: report.findings.map((f) => `${f.mark} ${f.text}`) };
}

Deno.test("probe: an SDK v2 server: its revision, its name, its capabilities in words, each list and the repairs", async () => {
  const { ready, lines } = await probe(() => connectMemoryLink(buildServer));
  strictEqual(ready, true);
  deepStrictEqual(lines, [
    "ok The upstream server answers server/discover; it speaks revision 2026-07-28.",
    "ok VS Code sees the server as 'embedded-example' 1.0.0.",
    "ok Capabilities: tools (listChanged), prompts (listChanged), resources (subscribe, listChanged), completion, log messages.",
    "repair tool 'echo': gave the array schema at /properties/tags an items schema",
    "ok tools/list: 6 items.",
    "ok prompts/list: 1 item.",
    "ok resources/list: 1 item.",
    "ok resources/templates/list: 1 item.",
  ]);
});

Deno.test("probe: a remote server: icons of the server dropped, a list read page by page, a list that fails is a break", async () => {
  const seen: { method: string; params: unknown; client: unknown }[] = [];
  await using upstream = serveMcp((m) => {
    seen.push({
      method: String(m.method),
      params: m.params,
      client: (m.params?._meta as Record<string, unknown> | undefined)?.[
        "io.modelcontextprotocol/clientCapabilities"
      ],
    });
    if (m.method === "server/discover") {
      return result(m, {
        resultType: "complete",
        supportedVersions: ["2026-12-01"],
        capabilities: { tools: {}, prompts: {} },
        _meta: {
          "io.modelcontextprotocol/serverInfo": {
            name: "remote",
            version: "2",
            icons: [{ src: "data:image/png;base64,AA==" }, { src: "https://example.com/i.png" }],
          },
        },
      });
    }
    if (m.method === "tools/list") {
      const second = m.params?.cursor === "p2";
      return result(m, {
        tools: [{ name: second ? "b" : "a", inputSchema: { type: "object" } }],
        ...(!second && { nextCursor: "p2" }),
      });
    }
    if (m.method === "prompts/list") return new Response("down", { status: 503 });
    return undefined;
  });
  const { ready, lines } = await probe(() =>
    createHttpLink({ url: new URL(upstream.url), maxResponseBytes: 1 << 20 })
  );
  strictEqual(ready, true);
  deepStrictEqual(lines, [
    "ok The upstream server answers server/discover; it speaks revision 2026-12-01.",
    "note Its supportedVersions do not name 2026-07-28: the bridge asks in that revision.",
    "ok VS Code sees the server as 'remote' 2.",
    "repair serverInfo: dropped 1 of 2 icons (only data: icons of a remote server reach VS Code)",
    "ok Capabilities: tools, prompts.",
    "ok tools/list: 2 items.",
    "break prompts/list failed (transport_failed: HTTP status 503): VS Code shows an error for it.",
  ]);
  deepStrictEqual(seen.map((s) => s.method), [
    "server/discover",
    "tools/list",
    "tools/list",
    "prompts/list",
  ]);
  // The probe asks as VS Code does: its capabilities, translated for the upstream server.
  deepStrictEqual(
    Object.keys(seen[0]!.client as object).sort(),
    Object.keys(VSCODE_CLIENT.capabilities).sort(),
  );
});

Deno.test("probe: a list that the server answers with a JSON-RPC error is a break with its code and message", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method === "tools/list") {
      return json({
        jsonrpc: "2.0",
        id: m.id,
        error: { code: -32001, message: "index not ready" },
      });
    }
    return undefined;
  });
  const { ready, lines } = await probe(() =>
    createHttpLink({ url: new URL(upstream.url), maxResponseBytes: 1 << 20 })
  );
  strictEqual(ready, true);
  strictEqual(
    lines.at(-1),
    "break tools/list failed (error -32001: index not ready): VS Code shows an error for it.",
  );
});

Deno.test("probe: an upstream that does not start is a break with the cause", async () => {
  const { ready, cause, lines } = await probe(() => Promise.reject(new Error("no such file")));
  deepStrictEqual({ ready, cause }, { ready: false, cause: "spawn_failed" });
  deepStrictEqual(lines, ["break The upstream server does not start or answer: spawn_failed."]);
});

Deno.test("probe: --tool and --ignore-tool: the hidden tools named, a glob that matches none, the repairs of the shown tools only", async () => {
  const tools = ToolFilter.of({ tools: ["*"], ignoreTools: ["echo", "sl*", "nothing_*"] })!;
  const { ready, lines } = await probe(() => connectMemoryLink(buildServer), tools);
  strictEqual(ready, true);
  deepStrictEqual(lines.slice(2, 7), [
    "ok Capabilities: tools (listChanged), prompts (listChanged), resources (subscribe, listChanged), completion, log messages.",
    // No repair of 'echo': VS Code does not see it.
    "ok tools/list: 6 items.",
    'note --tool and --ignore-tool hide 2 of 6 tools, which VS Code does not see: "echo", "slow".',
    'note --ignore-tool "nothing_*" matches no tool of the server.',
    "ok prompts/list: 1 item.",
  ]);
});

Deno.test("probe: the hidden tools of every page of a URL upstream", async () => {
  await using upstream = serveMcp((m) => {
    if (m.method === "tools/list") {
      const second = m.params?.cursor === "p2";
      return result(m, {
        resultType: "complete",
        tools: (second ? ["c_drop"] : ["a", "b_drop"]).map((name) => ({ name, inputSchema: {} })),
        ...(!second && { nextCursor: "p2" }),
      });
    }
    return undefined;
  }, { tools: {} });
  const tools = ToolFilter.of({ ignoreTools: ["*_drop"] })!;
  const { lines } = await probe(
    () => createHttpLink({ url: new URL(upstream.url), maxResponseBytes: 1 << 20 }),
    tools,
  );
  deepStrictEqual(lines.slice(-2), [
    "ok tools/list: 3 items.",
    'note --tool and --ignore-tool hide 2 of 3 tools, which VS Code does not see: "b_drop", "c_drop".',
  ]);
});
