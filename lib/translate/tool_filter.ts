/**
 * The tool lists of `--tool` and `--ignore-tool`: which tools of the
 * upstream server the client sees and may call. A glob is a tool name in
 * which `*` matches any run of characters (none too); every other character
 * is itself (`.`, `?`, `[` and `\` too), and the match is case-sensitive, as
 * the tool names of MCP are. A tool is shown when it matches some `--tool`
 * glob (or there is none) and no `--ignore-tool` glob.
 *
 * The list filter is one of the result rules (`results.ts`), so the modern
 * path and the pass-through hide the same tools; a call of a hidden tool is
 * answered by the bridge before anything goes upstream.
 *
 * @module
 */

import { isObject, type Json, type JsonObject } from "../jsonrpc/message.ts";
import { isPlaceholder, materializeJson, skeletonOf } from "../jsonrpc/skeleton.ts";
import { BridgeError } from "../errors/errors.ts";

/** The code points of a tool name that a message or a log line shows (MCP: names of 1 to 128). */
export const SHOWN_NAME_CHARS = 128;

/**
 * True when `name` matches `glob`: `*` matches any run of characters, each
 * other character only itself, case-sensitive. Linear in the name for each
 * part between stars; no regular expression is made.
 *
 * @example
 * ```ts
 * import { globMatches } from "./tool_filter.ts";
 * if (!globMatches("github_*", "github_create_issue")) throw new Error();
 * if (globMatches("github_*", "GitHub_create_issue")) throw new Error("case-sensitive");
 * if (globMatches("a.c", "abc")) throw new Error("a dot is a dot");
 * if (!globMatches("*", "")) throw new Error("a star matches no character too");
 * ```
 */
export function globMatches(glob: string, name: string): boolean {
  const parts = glob.split("*");
  if (parts.length === 1) return name === glob;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (name.length < first.length + last.length) return false;
  if (!name.startsWith(first) || !name.endsWith(last)) return false;
  // The leftmost place of each middle part leaves the most room for the next.
  let position = first.length;
  const end = name.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i]!;
    if (part === "") continue;
    const at = name.indexOf(part, position);
    if (at === -1 || at + part.length > end) return false;
    position = at + part.length;
  }
  return true;
}

/**
 * A tool name as a message or a log line shows it: in double quotes, with
 * JSON's escapes, every control and format character (C1, bidi overrides,
 * zero-width characters, line separators) as `\uXXXX`, and cut after
 * {@linkcode SHOWN_NAME_CHARS} code points with `…`. A hostile name can
 * then neither flood the message nor reorder or hide its text.
 *
 * @example
 * ```ts
 * import { shownToolName } from "./tool_filter.ts";
 * if (shownToolName('say"hi') !== '"say\\"hi"') throw new Error();
 * if (shownToolName("a\u202eb") !== '"a\\u202eb"') throw new Error();
 * if (shownToolName("x".repeat(500)).length !== 128 + 3) throw new Error();
 * ```
 */
export function shownToolName(name: string): string {
  // The end of the first SHOWN_NAME_CHARS code points, without reading the rest of a long name.
  let end = 0;
  for (let n = 0; n < SHOWN_NAME_CHARS && end < name.length; n++) {
    end += name.codePointAt(end)! > 0xffff ? 2 : 1;
  }
  const cut = end < name.length ? name.slice(0, end) + "…" : name;
  return JSON.stringify(cut).replace(
    /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\u2028\u2029]/gu,
    (char) => {
      let out = "";
      for (let i = 0; i < char.length; i++) {
        out += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
      }
      return out;
    },
  );
}

/** The values of the two flags (or of the embedded bridge's options). */
export interface ToolLists {
  /** `--tool`: only the tools that match one of these (none: every tool). */
  readonly tools?: readonly string[] | undefined;
  /** `--ignore-tool`: never the tools that match one of these. */
  readonly ignoreTools?: readonly string[] | undefined;
}

/** Why a glob is not valid, or undefined for a valid one. */
export function globProblem(glob: string): string | undefined {
  return glob === "" ? "needs a tool name or a glob with *, not an empty value" : undefined;
}

/**
 * The filter of one connection, made from the two lists.
 *
 * @example
 * ```ts
 * import { ToolFilter } from "./tool_filter.ts";
 * const filter = ToolFilter.of({ tools: ["github_*"], ignoreTools: ["*_delete_*"] })!;
 * if (!filter.shows("github_get_issue")) throw new Error();
 * if (filter.shows("github_delete_repo") || filter.shows("slack_post")) throw new Error();
 * if (ToolFilter.of({ tools: [], ignoreTools: [] }) !== undefined) throw new Error("no filter");
 * ```
 */
export class ToolFilter {
  readonly tools: readonly string[];
  readonly ignoreTools: readonly string[];

  private constructor(tools: readonly string[], ignoreTools: readonly string[]) {
    this.tools = tools;
    this.ignoreTools = ignoreTools;
  }

  /** The filter of the lists; undefined when both are empty (every tool is shown). */
  static of(lists: ToolLists): ToolFilter | undefined {
    const tools = [...lists.tools ?? []];
    const ignoreTools = [...lists.ignoreTools ?? []];
    for (const glob of [...tools, ...ignoreTools]) {
      const problem = globProblem(glob);
      if (problem) throw new TypeError(`a tool glob ${problem}`);
    }
    if (tools.length === 0 && ignoreTools.length === 0) return undefined;
    return new ToolFilter(tools, ignoreTools);
  }

  /** True when the tool `name` is shown; a name that is not a string matches no glob. */
  shows(name: Json | undefined): boolean {
    if (typeof name !== "string") return this.tools.length === 0;
    return (this.tools.length === 0 || this.tools.some((glob) => globMatches(glob, name))) &&
      !this.ignoreTools.some((glob) => globMatches(glob, name));
  }

  /**
   * Removes the hidden tools from one page of a tools/list result, in
   * place; every other member (`nextCursor` too) stays, so an empty page
   * still leads to the next. Returns the names of the tools it removed.
   */
  filterList(result: JsonObject): string[] {
    const tools = result.tools;
    if (!Array.isArray(tools)) return [];
    const sk = skeletonOf(result);
    const hidden: string[] = [];
    const kept = tools.filter((tool) => {
      let name = isObject(tool) ? tool.name : undefined;
      // A name of 64 KiB or more is still bytes of the line: the globs see it whole.
      if (sk && typeof name === "string" && isPlaceholder(name, sk)) {
        name = JSON.parse(materializeJson(JSON.stringify(name), sk)) as string;
      }
      if (this.shows(name)) return true;
      hidden.push(typeof name === "string" ? name : "");
      return false;
    });
    if (hidden.length > 0) result.tools = kept;
    return hidden;
  }

  /**
   * The answer of the bridge to a tools/call of a hidden tool (-32602,
   * `tool_not_allowed`, the name shown by {@linkcode shownToolName}), or
   * undefined when the call may go upstream. A call whose name is not a
   * string names no tool: it gets `invalid_params`.
   */
  refusal(params: Json | undefined): BridgeError | undefined {
    const name = isObject(params) ? params.name : undefined;
    if (typeof name !== "string") return BridgeError.of("invalid_params");
    if (this.shows(name)) return undefined;
    return BridgeError.of("tool_not_allowed", undefined, { name: shownToolName(name) });
  }
}
