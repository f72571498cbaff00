/**
 * `--protocol auto` in front of `@modelcontextprotocol/server-filesystem` (its
 * allowed directories come only from the roots that the client answers
 * through the bridge) and `@modelcontextprotocol/server-memory`: each result
 * equals the one that the server gives the same client directly.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { waitFor } from "../wait.ts";
import { bridged, direct, nodeServer, type Recorder, type Root } from "./passthrough_helpers.ts";

interface Side {
  readonly client: Client;
  readonly recorder: Recorder;
}

/** A tool call on both sides; the bridged result must equal the direct one. */
async function sameCall(d: Side, b: Side, name: string, args: Record<string, unknown>) {
  const [x, y] = await Promise.all([
    d.client.callTool({ name, arguments: args }),
    b.client.callTool({ name, arguments: args }),
  ]);
  deepStrictEqual(y, x, `tools/call ${name}: the bridged result differs from the direct one`);
  return y as { content: { type: string; text: string }[]; structuredContent?: unknown };
}

const text = (result: { content: { text: string }[] }) =>
  result.content.map((c) => c.text).join("");

Deno.test("pass-through: server-filesystem 2026.8.31 works on the roots that the client answers", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "bridge-fs-" }));
  const other = await Deno.realPath(await Deno.makeTempDir({ prefix: "bridge-fs-other-" }));
  await Deno.writeTextFile(`${dir}/notes.txt`, "first line\nsecond line\n");
  await Deno.mkdir(`${dir}/sub`);
  await Deno.writeTextFile(`${dir}/sub/deep.md`, "# deep\n");
  // No directory on the command line: the server works only on the client's roots.
  const server = nodeServer("filesystem");
  const roots = (): Root[] => [{ uri: `file://${dir}`, name: "project" }];
  const dRoots = roots();
  const bRoots = roots();
  const [d, b] = await Promise.all([
    direct(server, { roots: dRoots }),
    bridged(["--", ...server], { roots: bRoots }),
  ]);
  try {
    deepStrictEqual(b.client.getServerVersion(), d.client.getServerVersion());
    deepStrictEqual(b.client.getServerCapabilities(), d.client.getServerCapabilities());
    const [dTools, bTools] = await Promise.all([d.client.listTools(), b.client.listTools()]);
    deepStrictEqual(bTools, dTools);
    // roots/list of the server reached the client's handler through the bridge.
    await waitFor(
      "roots/list through the bridge",
      () => b.recorder.requests.some((r) => r.method === "roots/list"),
    );
    const allowed = await waitFor("the roots as allowed directories", async () => {
      const result = await b.client.callTool({ name: "list_allowed_directories", arguments: {} });
      return text(result as never).includes(dir) && result;
    });
    deepStrictEqual(
      allowed,
      await d.client.callTool({ name: "list_allowed_directories", arguments: {} }),
    );

    await sameCall(d, b, "list_directory", { path: dir });
    await sameCall(d, b, "read_text_file", { path: `${dir}/notes.txt`, head: 1 });
    await sameCall(d, b, "read_multiple_files", {
      paths: [`${dir}/notes.txt`, `${dir}/sub/deep.md`],
    });
    await sameCall(d, b, "directory_tree", { path: dir });
    await sameCall(d, b, "search_files", { path: dir, pattern: "**/*.md" });
    await sameCall(d, b, "edit_file", {
      path: `${dir}/notes.txt`,
      edits: [{ oldText: "second", newText: "2nd" }],
      dryRun: true,
    });
    // A path outside the roots: the same refusal.
    await sameCall(d, b, "read_text_file", { path: `${other}/nothing.txt` });

    // Writes through the bridge land on the disk.
    const written = await b.client.callTool({
      name: "write_file",
      arguments: { path: `${dir}/from-bridge.txt`, content: "written through the bridge" },
    });
    ok(!written.isError, JSON.stringify(written));
    strictEqual(await Deno.readTextFile(`${dir}/from-bridge.txt`), "written through the bridge");

    // notifications/roots/list_changed goes upstream; the server asks for the roots again.
    bRoots.splice(0, 1, { uri: `file://${other}`, name: "other" });
    const asked = b.recorder.requests.length;
    await b.client.sendRootsListChanged();
    await waitFor(
      "a second roots/list",
      () => b.recorder.requests.slice(asked).some((r) => r.method === "roots/list"),
    );
    await waitFor("the new root as the allowed directory", async () => {
      const result = await b.client.callTool({ name: "list_allowed_directories", arguments: {} });
      const names = text(result as never);
      return names.includes(other) && !names.includes(`${dir}\n`);
    });
  } finally {
    await d.client.close();
    await b.client.close();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("pass-through: server-memory 2026.8.31 keeps the same graph as directly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bridge-memory-" });
  const server = nodeServer("memory");
  const [d, b] = await Promise.all([
    direct(server, { env: { MEMORY_FILE_PATH: `${dir}/direct.jsonl` } }),
    bridged(["--", ...server], { env: { MEMORY_FILE_PATH: `${dir}/bridged.jsonl` } }),
  ]);
  try {
    deepStrictEqual(b.client.getServerVersion(), d.client.getServerVersion());
    const [dTools, bTools] = await Promise.all([d.client.listTools(), b.client.listTools()]);
    deepStrictEqual(bTools, dTools);
    await sameCall(d, b, "create_entities", {
      entities: [
        { name: "Bridge", entityType: "program", observations: ["speaks two revisions"] },
        { name: "VS Code", entityType: "editor", observations: ["speaks 2025-11-25"] },
      ],
    });
    await sameCall(d, b, "create_relations", {
      relations: [{ from: "VS Code", to: "Bridge", relationType: "starts" }],
    });
    await sameCall(d, b, "add_observations", {
      observations: [{ entityName: "Bridge", contents: ["repairs schemas"] }],
    });
    const graph = await sameCall(d, b, "read_graph", {});
    ok(text(graph).includes("repairs schemas"));
    await sameCall(d, b, "search_nodes", { query: "editor" });
    await sameCall(d, b, "open_nodes", { names: ["Bridge"] });
    await sameCall(d, b, "delete_observations", {
      deletions: [{ entityName: "Bridge", observations: ["repairs schemas"] }],
    });
    await sameCall(d, b, "delete_relations", {
      relations: [{ from: "VS Code", to: "Bridge", relationType: "starts" }],
    });
    await sameCall(d, b, "delete_entities", { entityNames: ["VS Code"] });
    await sameCall(d, b, "read_graph", {});
    // The bridged server wrote its own file, as the direct one did.
    deepStrictEqual(
      await Deno.readTextFile(`${dir}/bridged.jsonl`),
      await Deno.readTextFile(`${dir}/direct.jsonl`),
    );
  } finally {
    await d.client.close();
    await b.client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
