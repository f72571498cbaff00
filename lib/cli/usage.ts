/**
 * The options of a command line, parsed, and the usage errors in words of
 * our own, for the bridge, `login` and `logout`: a usage error names an
 * option, never a value, a positional argument or the URL of the upstream
 * server (its path and query can hold a key).
 *
 * The options are long ones only: `--name`, `--name=VALUE`, `--name VALUE`;
 * a boolean takes no value; a string option can be repeated where it is
 * `multiple`, else the last one counts; `--` ends the options. The rules are
 * those of `parseArgs` of `node:util` in its strict mode, which this replaces:
 * importing any `node:` module starts Deno's Node.js compatibility layer,
 * about 30 ms and 5 MiB of every start (`deno task bench:start`).
 *
 * @module
 */

/** The line after the reason of a usage error: a pointer to the usage, not the usage itself. */
export const HELP_POINTER = "Run 'mcp-bridge-vscode --help' for the usage.\n";

/** An option name that the reason of an unknown option may quote: no URL, no value. */
const QUOTABLE_OPTION = /^--?[A-Za-z][A-Za-z0-9-]{0,39}$/;

/** The kind of an option: a string or a boolean, and whether a string option repeats. */
export interface OptionKind {
  readonly type: "string" | "boolean";
  readonly multiple?: boolean;
}

/** The options of a command line and its positional arguments. */
export interface ParsedOptions {
  readonly values: Record<string, string | boolean | string[]>;
  readonly positionals: string[];
}

/** An argument that the options do not take; the message is the reason, safe to show. */
export class OptionError extends Error {
  override name = "OptionError";
}

/**
 * Parses `args` with `options`. Positional arguments are an error unless
 * `positionals` is given, as the reason of that error, or `true` for a
 * command that takes them.
 *
 * @example
 * ```ts
 * import { parseOptions } from "./usage.ts";
 * const { values, positionals } = parseOptions(
 *   ["--name", "x", "https://mcp.example/", "--tool=a", "--tool", "b"],
 *   { name: { type: "string" }, tool: { type: "string", multiple: true } },
 *   true,
 * );
 * if (values.name !== "x" || positionals[0] !== "https://mcp.example/") throw new Error();
 * if (JSON.stringify(values.tool) !== '["a","b"]') throw new Error();
 * ```
 */
export function parseOptions(
  args: readonly string[],
  options: Readonly<Record<string, OptionKind>>,
  positionals: true | string = "an argument is not valid",
): ParsedOptions {
  const values: Record<string, string | boolean | string[]> = {};
  const rest: string[] = [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!;
    if (arg === "--" || !arg.startsWith("-") || arg === "-") {
      // The first positional that the command does not take is the error, where it stands.
      const found = arg === "--" ? args.slice(at + 1) : [arg];
      if (positionals !== true && found.length > 0) throw new OptionError(positionals);
      rest.push(...found);
      if (arg === "--") break;
      continue;
    }
    const long = arg.startsWith("--");
    const equals = long ? arg.indexOf("=") : -1;
    const name = long ? arg.slice(2, equals === -1 ? undefined : equals) : arg.slice(1, 2);
    const kind = long && Object.hasOwn(options, name) ? options[name] : undefined;
    if (kind === undefined) {
      // A short option (-x, or a group -xyz) is never ours: it is named as node:util did, -x.
      const raw = long ? `--${name}` : `-${name}`;
      throw new OptionError(
        QUOTABLE_OPTION.test(raw) ? `the option ${raw} is not known` : "an option is not known",
      );
    }
    const flag = `--${name}`;
    if (kind.type === "boolean") {
      if (equals !== -1) throw new OptionError(`${flag} takes no value`);
      values[name] = true;
      continue;
    }
    let value: string;
    if (equals !== -1) {
      value = arg.slice(equals + 1);
    } else {
      const next = args[at + 1];
      if (next === undefined) throw new OptionError(`${flag} needs a value`);
      if (next.length > 1 && next.startsWith("-")) {
        throw new OptionError(
          `${flag} needs a value; for a value that starts with -, write ${flag}=VALUE`,
        );
      }
      value = next;
      at++;
    }
    if (kind.multiple) {
      const list = values[name];
      values[name] = Array.isArray(list) ? [...list, value] : [value];
    } else {
      values[name] = value;
    }
  }
  return { values, positionals: rest };
}
