/**
 * The usage errors of `parseArgs` (`node:util`) in words of our own, for the
 * command line and for `logout`: a usage error names an option, never a
 * value, a positional argument or the URL of the upstream server.
 *
 * @module
 */

import { parseArgs } from "node:util";

/** The line after the reason of a usage error: a pointer to the usage, not the usage itself. */
export const HELP_POINTER = "Run 'mcp-bridge-vscode --help' for the usage.\n";

/** An option name that the reason of an unknown option may quote: no URL, no value. */
const QUOTABLE_OPTION = /^--?[A-Za-z][A-Za-z0-9-]{0,39}$/;

/**
 * The reason of a `parseArgs` error of `node:util`, from its `code`. Its
 * message is never passed on: it quotes the argument, which can be the URL
 * of the upstream server (its path and query can hold a key) or a value.
 * The reason names an option of ours, or an unknown option by its name
 * only, never a value or a positional argument. `positional` is the reason
 * of a positional argument where the command takes none.
 */
export function usageReason(
  error: unknown,
  args: readonly string[],
  options: Readonly<Record<string, { readonly type: "string" | "boolean" }>>,
  positional = "an argument is not valid",
): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return positional;
  // The tokens, without the checks, find the option that the error is for.
  let tokens: ReturnType<typeof parseArgs>["tokens"] = [];
  try {
    tokens = parseArgs({
      args: [...args],
      options,
      strict: false,
      allowPositionals: true,
      tokens: true,
    }).tokens;
  } catch {
    // No option then: the general reason below.
  }
  for (const token of tokens ?? []) {
    if (token.kind !== "option") continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) {
      if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") continue;
      return QUOTABLE_OPTION.test(token.rawName)
        ? `the option ${token.rawName} is not known`
        : "an option is not known";
    }
    if (code !== "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") continue;
    const flag = `--${token.name}`;
    if (option.type === "boolean" && token.value !== undefined) return `${flag} takes no value`;
    if (option.type === "string" && token.value === undefined) return `${flag} needs a value`;
    if (option.type === "string" && !token.inlineValue && token.value?.startsWith("-")) {
      return `${flag} needs a value; for a value that starts with -, write ${flag}=VALUE`;
    }
  }
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return "an option is not known";
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return "an option has a value that is not valid";
    default:
      return "the arguments are not valid";
  }
}
