/**
 * The command lines, parsed: the bridge's (the server name, the command
 * after --, a URL upstream and its sign-in), login's and logout's. A usage
 * error names an option, never its value or the URL (tests/cli/run_test.ts
 * runs the command line with its exit codes).
 */

import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { parseCommandLine, parseLogin, parseLogout } from "../../lib/cli/command_line.ts";

const SECRET_URL = "https://mcp.example/secret-path?key=sekrit-query";

Deno.test("usage: logout names the option of a usage error, never its value or the URL", () => {
  const cases: [string[], string][] = [
    [[SECRET_URL, "--bogus=v4lue-s3cr3t"], "the option --bogus is not known"],
    [[SECRET_URL, "--token-store"], "--token-store needs a value"],
    [[SECRET_URL, "--token-store", "--v4lue-s3cr3t"], "--token-store needs a value"],
  ];
  for (const [args, reason] of cases) {
    throws(() => parseLogout(args), (error: Error) => {
      ok(error.message.startsWith(reason), error.message);
      for (const secret of ["secret-path", "sekrit-query", "v4lue-s3cr3t"]) {
        ok(!error.message.includes(secret), error.message);
      }
      return true;
    });
  }
  strictEqual(parseLogout([SECRET_URL, "--token-store", "/tmp/s"]).tokenStore, "/tmp/s");
});

const NO_ENV = () => undefined;

Deno.test("parseCommandLine: the server name is --name, else the URL's host, else the command's file name without its extension", () => {
  const nameOf = (argv: string[]) => {
    const cli = parseCommandLine(argv, NO_ENV);
    return cli.kind === "run" ? cli.name : cli.kind;
  };
  strictEqual(nameOf(["--", "/usr/local/bin/my-server.js", "--port", "1"]), "my-server");
  strictEqual(nameOf(["--", "node"]), "node");
  strictEqual(nameOf(["https://mcp.example:8443/secret-path?key=k"]), "mcp.example");
  strictEqual(nameOf(["--name", "Notes", "--", "node", "x.js"]), "Notes");
  throws(() => parseCommandLine(["--name", " ", "--", "node"], NO_ENV), /--name needs a name/);
});

Deno.test("parseCommandLine: after -- everything is the command's, flags of the bridge too", () => {
  const cli = parseCommandLine(["--log-level", "debug", "--", "srv", "--help", "--version", "--"]);
  deepStrictEqual(
    cli.kind === "run" ? [cli.command, cli.args, cli.logLevel, cli.protocol] : cli.kind,
    ["srv", ["--help", "--version", "--"], "debug", "2026-07-28"],
  );
  strictEqual(parseCommandLine(["--help", "--", "srv"]).kind, "help");
  strictEqual(parseCommandLine(["--version"]).kind, "version");
  throws(() => parseCommandLine(["--log-level", "info"]), /the upstream COMMAND is missing/);
  throws(() => parseCommandLine(["--", ""]), /the upstream COMMAND is missing/);
  throws(() => parseCommandLine(["--protocol", "2025-11-25", "--", "srv"]), /--protocol needs/);
});

Deno.test("parseCommandLine: a URL upstream has no command; its defaults: info, 2026-07-28, no sign-in options when a header signs", () => {
  const cli = parseCommandLine(["https://mcp.example/mcp"], NO_ENV);
  ok(cli.kind === "run");
  deepStrictEqual([cli.command, cli.args, cli.logLevel, cli.protocol], [
    "",
    [],
    "info",
    "2026-07-28",
  ]);
  strictEqual(cli.remote?.url.href, "https://mcp.example/mcp");
  ok(cli.auth !== undefined, "a URL without an Authorization header may sign in");
  const header = parseCommandLine(
    ["--header-env", "Authorization=TOKEN", "https://mcp.example/mcp"],
    (name) => name === "TOKEN" ? "Bearer t" : undefined,
  );
  ok(header.kind === "run");
  strictEqual(header.auth, undefined);
});

Deno.test("parseLogin: one URL, the sign-in and HTTP flags; not with an Authorization header", () => {
  const login = parseLogin(["https://mcp.example/mcp", "--redirect-port", "40000"], NO_ENV);
  strictEqual(login.remote.url.href, "https://mcp.example/mcp");
  strictEqual(login.auth.redirectPort, 40000);
  throws(() => parseLogin([], NO_ENV), /login needs the URL of the server/);
  throws(() => parseLogin(["not a url"], NO_ENV), /login needs the URL of the server/);
  throws(
    () => parseLogin(["https://a.example/", "https://b.example/"], NO_ENV),
    /login takes one URL/,
  );
  throws(
    () =>
      parseLogin(
        ["https://mcp.example/mcp", "--header-env", "Authorization=TOKEN"],
        (name) => name === "TOKEN" ? "Bearer t" : undefined,
      ),
    /login does not go with an Authorization header/,
  );
});

Deno.test("parseCommandLine: --tool and --ignore-tool are repeatable, in every mode; neither: no filter", () => {
  for (const upstream of [["--", "node", "s.js"], [SECRET_URL]]) {
    for (const extra of [[], ["--protocol", "auto"]]) {
      const cli = parseCommandLine([
        ...extra,
        "--tool",
        "get_*",
        "--ignore-tool=*secret*",
        "--tool",
        "echo",
        "--ignore-tool=-dash*",
        ...upstream,
      ], () => undefined);
      if (cli.kind !== "run" || !cli.tools) throw new Error("no filter");
      deepStrictEqual(cli.tools.tools, ["get_*", "echo"]);
      deepStrictEqual(cli.tools.ignoreTools, ["*secret*", "-dash*"]);
      strictEqual(cli.tools.shows("get_x"), true);
      strictEqual(cli.tools.shows("get_secret"), false);
    }
  }
  const plain = parseCommandLine(["--", "node", "s.js"]);
  strictEqual(plain.kind === "run" && plain.tools, undefined);
  // After -- they are the command's.
  const after = parseCommandLine(["--", "node", "--tool", "x"]);
  if (after.kind !== "run") throw new Error();
  strictEqual(after.tools, undefined);
  deepStrictEqual(after.args, ["--tool", "x"]);
});

Deno.test("parseCommandLine: an empty glob of --tool or --ignore-tool is a usage error that names the flag", () => {
  for (const args of [["--tool", ""], ["--tool="], ["--tool", "a", "--ignore-tool", ""]]) {
    const flag = args.at(-1) === "--tool=" || args.length === 2 ? "--tool" : "--ignore-tool";
    throws(
      () => parseCommandLine([...args, "--", "node"]),
      (error: Error) =>
        error.name === "UsageError" &&
        error.message === `${flag} needs a tool name or a glob with *, not an empty value`,
    );
  }
});
