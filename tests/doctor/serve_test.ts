/**
 * `doctor serve`: the checks of each upstream of a `serve` command line (a
 * line per finding, after the server's name), the `mcp.json` of the http
 * entries, the port (free, a serve already there, or another program: a
 * break), how to start it at login and the sandbox; never an argument of
 * the command line.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { doctorServe, httpEntries } from "../../lib/doctor/serve.ts";
import { parseServeCommandLine, type ServeCommand } from "../../lib/serve/serve_command.ts";
import { VERSION } from "../../lib/version.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { assertExcludes, assertIncludes } from "../assert.ts";
import { freePort } from "../free_port.ts";
import { CONFORMANCE_UPSTREAM } from "../process/serve_helpers.ts";
import { FaceHarness } from "../serve/face_harness.ts";

const env = (name: string) => name === "SECRET_ARG" ? "v4lue-s3cr3t" : Deno.env.get(name);

function command(argv: string[], file?: string): ServeCommand {
  const parsed = parseServeCommandLine(argv, {
    env,
    ...(file !== undefined && { readFile: () => file }),
  });
  if (parsed.kind !== "serve") throw new Error(parsed.kind);
  return parsed;
}

async function doctor(cli: ServeCommand, json = false): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await doctorServe(cli, {
    profile: VSCODE_PROFILE,
    version: VERSION,
    env,
    json,
    write: (text) => out += text,
  });
  return { code, out };
}

Deno.test("doctor serve: the upstream's checks, the mcp.json of the http entry, a free port, login and the sandbox", async () => {
  const port = freePort();
  const { code, out } = await doctor(
    command(["--port", String(port), "--", ...CONFORMANCE_UPSTREAM, "--secret-arg-v4lue-s3cr3t"]),
  );
  strictEqual(code, 0, out);
  assertIncludes(out, "it speaks revision 2026-07-28");
  assertIncludes(
    out,
    `mcp.json: {"servers":{"deno":{"type":"http","url":"http://127.0.0.1:${port}/mcp"}}}`,
  );
  assertIncludes(out, `ok      The port ${port} of 127.0.0.1 is free.`);
  assertIncludes(out, "Start it at login");
  assertIncludes(out, "VS Code's sandbox (sandboxEnabled) applies to stdio entries");
  assertExcludes(out, "v4lue-s3cr3t");
  assertExcludes(out, "conformance_upstream");
});

Deno.test("doctor serve: a serve that answers on the port is a note; another program there is a break", async () => {
  await using face = new FaceHarness();
  const served = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) =>
      face.face.handle(
        new Request(request.url, {
          method: request.method,
          headers: { ...Object.fromEntries(request.headers), host: `127.0.0.1:8770` },
          body: request.body,
        }),
      ),
  );
  const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const upstream = ["--", ...CONFORMANCE_UPSTREAM];
    const taken = await doctor(command(["--port", String(served.addr.port), ...upstream]));
    assertIncludes(taken.out, `A serve already answers on the port ${served.addr.port}.`);
    strictEqual(taken.code, 0);
    // A listener that answers nothing of the kind.
    const held = doctor(command(["--port", String(other.addr.port), ...upstream]));
    const connection = await other.accept();
    connection.close();
    const blocked = await held;
    assertIncludes(blocked.out, `break   Another program listens on the port ${other.addr.port}`);
    strictEqual(blocked.code, 1);
  } finally {
    other.close();
    await served.shutdown();
  }
});

Deno.test("doctor serve --config: each server's findings after its name; an entry per name; --json has the entries", async () => {
  const file = JSON.stringify({
    servers: {
      first: { args: ["--", ...CONFORMANCE_UPSTREAM] },
      second: { args: ["--tool", "pid", "--", ...CONFORMANCE_UPSTREAM] },
    },
  });
  const cli = command(["--config", "f.json", "--port", "0"], file);
  deepStrictEqual(httpEntries(cli), {
    first: { type: "http", url: "http://127.0.0.1:PORT/first/mcp" },
    second: { type: "http", url: "http://127.0.0.1:PORT/second/mcp" },
  });
  const { code, out } = await doctor(cli, true);
  strictEqual(code, 0);
  const parsed = JSON.parse(out);
  deepStrictEqual(Object.keys(parsed.serve.mcpJson.servers), ["first", "second"]);
  const texts: string[] = parsed.report.findings.map((f: { text: string }) => f.text);
  ok(texts.some((t) => t.startsWith("first: ")) && texts.some((t) => t.startsWith("second: ")));
  ok(texts.some((t) => t.includes("--port 0 takes any free port")), texts.join("\n"));
});
