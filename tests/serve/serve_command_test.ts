/**
 * The command line of `serve`: its own options and their defaults, the one
 * upstream of the command line (with every option of a stdio bridge), the
 * named upstreams of `--config`, and its usage errors (a reason that names
 * an option, a file or a server, never a value).
 */

import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { UsageError } from "../../lib/cli/command_line.ts";
import {
  parseServeCommandLine,
  SERVE_DEFAULTS,
  type ServeCommand,
} from "../../lib/serve/serve_command.ts";

const env = (vars: Record<string, string> = {}) => ({ env: (name: string) => vars[name] });

function serve(argv: string[], io = env(), file?: string): ServeCommand {
  const parsed = parseServeCommandLine(
    argv,
    file === undefined ? io : { ...io, readFile: () => file },
  );
  if (parsed.kind !== "serve") throw new Error(parsed.kind);
  return parsed;
}

function usage(argv: string[], reason: RegExp, file?: string): void {
  throws(() => serve(argv, env(), file), (error: unknown) => {
    ok(error instanceof UsageError, String(error));
    ok(reason.test(error.message), error.message);
    return true;
  });
}

Deno.test("serve command line: the defaults, and one upstream at /mcp with the options of a stdio bridge", () => {
  const cli = serve([
    "--tool",
    "a*",
    "--request-timeout",
    "7",
    "--log-level",
    "debug",
    "--",
    "node",
    "s.js",
  ]);
  deepStrictEqual(
    [
      cli.host,
      cli.port,
      cli.maxSessions,
      cli.sessionIdleMs,
      cli.upstreamGraceMs,
      cli.shutdownGraceMs,
    ],
    [
      SERVE_DEFAULTS.host,
      SERVE_DEFAULTS.port,
      SERVE_DEFAULTS.maxSessions,
      SERVE_DEFAULTS.sessionIdleMs,
      SERVE_DEFAULTS.upstreamGraceMs,
      5_000,
    ],
  );
  strictEqual(cli.upstreams.length, 1);
  const [one] = cli.upstreams;
  deepStrictEqual([one!.path, one!.name, one!.cli.command, one!.cli.args], [
    "/mcp",
    undefined,
    "node",
    ["s.js"],
  ]);
  deepStrictEqual([one!.cli.limits.list_timeout_ms, one!.cli.logLevel, cli.logLevel], [
    7_000,
    "debug",
    "debug",
  ]);
  ok(one!.cli.tools, "--tool reached the bridge");
});

Deno.test("serve command line: its own options are taken out of the bridge's, in both spellings", () => {
  const cli = serve(
    [
      "--port=0",
      "--host",
      "::1",
      "--replica",
      "r7",
      "--max-sessions",
      "3",
      "--session-idle=1.5",
      "--upstream-grace",
      "0",
      "--allow-origin",
      "https://app.example.com/path",
      "--token-env",
      "T",
      "https://mcp.example.com/mcp",
    ],
    env({ T: "tok" }),
  );
  deepStrictEqual(
    [cli.port, cli.host, cli.replica, cli.maxSessions, cli.sessionIdleMs, cli.upstreamGraceMs],
    [0, "::1", "r7", 3, 1_500, 0],
  );
  deepStrictEqual(cli.allowedOrigins, ["https://app.example.com"]);
  deepStrictEqual(cli.token, { variable: "T", value: "tok" });
  strictEqual(cli.upstreams[0]!.cli.remote?.url.href, "https://mcp.example.com/mcp");
});

Deno.test("serve command line: --config gives each named upstream its own options at /NAME/mcp", () => {
  const file = JSON.stringify({
    servers: {
      github: { args: ["--tool", "get_*", "https://api.example.com/mcp"] },
      "mem.v2": { args: ["--protocol", "auto", "--", "npx", "server-memory"] },
    },
  });
  const cli = serve(
    ["--config", "servers.json", "--log-level", "warn", "--shutdown-grace", "2"],
    env(),
    file,
  );
  deepStrictEqual(cli.upstreams.map((u) => [u.name, u.path]), [
    ["github", "/github/mcp"],
    ["mem.v2", "/mem.v2/mcp"],
  ]);
  strictEqual(cli.upstreams[1]!.cli.protocol, "auto");
  deepStrictEqual([cli.logLevel, cli.shutdownGraceMs], ["warn", 2_000]);
});

Deno.test("serve command line: usage errors name the option, the file or the server, never a value", () => {
  usage(["--host", "0.0.0.0", "--", "x"], /needs --token-env/);
  usage(["--host", "10.0.0.5", "--token-env", "NOPE", "--", "x"], /variable NOPE is not set/);
  usage(["--port", "65536", "--", "x"], /--port needs/);
  usage(["--port", "-1", "--", "x"], /--port needs a value|--port needs/);
  usage(["--replica", "has.dot", "--", "x"], /--replica needs/);
  usage(["--max-sessions", "0", "--", "x"], /--max-sessions needs/);
  usage(["--session-idle", "0", "--", "x"], /--session-idle needs/);
  usage(["--allow-origin", "not a url", "--", "x"], /--allow-origin needs/);
  usage(
    ["--allow-origin", "file:///etc", "--", "x"],
    /--allow-origin needs an http or https origin/,
  );
  usage(["--"], /COMMAND is missing/);
  usage(["--config", "f", "--", "x"], /go into the file/);
  usage(["--config", "f", "--tool", "x"], /go into the file \(--tool\)/);
  usage(["--config", "f"], /not valid JSON/, "{");
  usage(["--config", "f"], /needs an object "servers"/, "[]");
  usage(["--config", "f"], /names no server/, '{"servers":{}}');
  usage(["--config", "f"], /a server name must be/, '{"servers":{"a/b":{"args":["--","x"]}}}');
  usage(["--config", "f"], /"s" needs "args"/, '{"servers":{"s":{"args":"-- x"}}}');
  usage(
    ["--config", "f"],
    /the server "s": --request-timeout needs/,
    '{"servers":{"s":{"args":["--request-timeout","x","--","c"]}}}',
  );
  // A secret in a value never reaches the reason.
  throws(
    () => serve(["--port", "s3cret-value", "--", "x"]),
    (error: Error) => !error.message.includes("s3cret"),
  );
});

Deno.test("serve command line: --help stands alone", () => {
  strictEqual(parseServeCommandLine(["--help"], env()).kind, "help");
});
