/**
 * The text of `--help`, made from the table of flags (`flags.ts`): the
 * forms of the command line, then each flag with its value and its help
 * wrapped at 80 columns, then the subcommands.
 *
 * @module
 */

import { type Flag, type FlagGroup, FLAGS } from "./flags.ts";

/** Where the help of a flag starts. */
const COLUMN = 30;
const WIDTH = 80;

/** The lines of one flag: its name and value, then its help wrapped at {@linkcode WIDTH}. */
function flagLines(head: string, help: string): string[] {
  const lines: string[] = [];
  let line = `  ${head}`;
  let empty = true;
  if (line.length >= COLUMN) {
    lines.push(line);
    line = "";
  }
  line = line.padEnd(COLUMN);
  // "(default: x)" stays on one line with its value.
  const words = help.replace(/\(default: /g, "(default:\u0000").split(" ")
    .map((word) => word.replace("\u0000", " "));
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = " ".repeat(COLUMN);
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

function groupLines(groups: readonly FlagGroup[]): string[] {
  return FLAGS.filter((flag: Flag) => groups.includes(flag.group)).flatMap((flag) =>
    flagLines(`--${flag.name}${flag.value ? ` ${flag.value}` : ""}`, flag.help)
  );
}

/**
 * The usage text of the program.
 */
export function usageText(): string {
  return [
    "Usage: mcp-bridge-vscode [options] -- COMMAND [ARG...]",
    "       mcp-bridge-vscode [options] URL",
    "       mcp-bridge-vscode serve [serve options] [options] (-- COMMAND | URL)",
    "       mcp-bridge-vscode serve [serve options] --config FILE",
    "       mcp-bridge-vscode doctor [--json] [options] (-- COMMAND | URL)",
    "",
    "Runs COMMAND, an MCP server of revision 2026-07-28 on stdio (or connects to",
    "the MCP server of revision 2026-07-28 at URL, over Streamable HTTP), and",
    "serves it to VS Code as an MCP server of revision 2025-11-25 on stdin and",
    "stdout. `doctor` says in plain words what would break in VS Code (exit 1",
    "when something would); with --json, its report and the sandbox snippet of",
    "mcp.json as one JSON document. `serve` is the same bridge on Streamable HTTP",
    "(revision 2025-11-25) at http://HOST:PORT/mcp, or /NAME/mcp for each server of",
    "FILE: one process for every window and client, each session private; `doctor",
    "serve` with its options checks its upstreams, its port and its mcp.json.",
    "",
    "Options:",
    ...groupLines(["bridge", "http", "general"]),
    "",
    "Serve options:",
    ...groupLines(["serve"]),
    "",
    "Sign-in options (an upstream at a URL):",
    ...groupLines(["sign-in"]),
    "",
    "Login (outside VS Code's sandbox; a bridge with SANDBOX_RUNTIME=1 then uses",
    "the stored tokens):",
    "  mcp-bridge-vscode login URL [sign-in options] [--ca-file PATH]",
    "                              [--header-env NAME=VARIABLE]",
    "                              Sign in now and store the tokens of URL. With",
    "                              --no-browser it prints the authorization URL:",
    "                              open it in a browser anywhere (SSH, WSL, a",
    "                              container), sign in, and paste back the address",
    "                              that the browser ends on",
    "",
    "Logout:",
    "  mcp-bridge-vscode logout URL [--token-store DIR]",
    "                              Forget (and revoke) the tokens and the client",
    "                              of URL",
    "",
  ].join("\n");
}
