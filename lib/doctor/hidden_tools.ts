/**
 * The part of `doctor` that names the tools that `--tool` and
 * `--ignore-tool` hide, over every page of tools/list, and each glob that
 * matches no tool of the server (a typo hides every tool, or none).
 *
 * @module
 */

import { isObject, type JsonObject } from "../jsonrpc/message.ts";
import { globMatches, shownToolName, type ToolFilter } from "../translate/tool_filter.ts";
import type { Report } from "./report.ts";

/** The most hidden tools that the report names one by one. */
export const MAX_NAMED = 50;

/**
 * The hidden tools of one tools/list, page by page.
 *
 * @example
 * ```ts
 * import { HiddenTools } from "./hidden_tools.ts";
 * import { ToolFilter } from "../translate/tool_filter.ts";
 * import { Report } from "./report.ts";
 * const hidden = new HiddenTools(ToolFilter.of({ ignoreTools: ["delete_*", "drop*"] })!);
 * const page = { tools: [{ name: "get" }, { name: "delete_all" }], nextCursor: "2" };
 * hidden.page(page);
 * if (page.tools.length !== 1 || page.nextCursor !== "2") throw new Error();
 * const report = new Report();
 * hidden.report(2, report);
 * const lines = report.findings.map((f) => f.text);
 * if (!lines[0]!.includes('"delete_all"') || !lines[1]!.includes('"drop*"')) throw new Error();
 * ```
 */
export class HiddenTools {
  readonly #filter: ToolFilter;
  readonly #hidden: string[] = [];
  /** The globs that matched a tool of the server. */
  readonly #matched = new Set<string>();

  constructor(filter: ToolFilter) {
    this.#filter = filter;
  }

  /** One page of the result: the hidden tools are noted and removed from it. */
  page(result: JsonObject): void {
    const tools = Array.isArray(result.tools) ? result.tools : [];
    const { tools: only, ignoreTools } = this.#filter;
    for (const tool of tools) {
      const name = isObject(tool) ? tool.name : undefined;
      if (typeof name !== "string") continue;
      for (const glob of [...only, ...ignoreTools]) {
        if (globMatches(glob, name)) this.#matched.add(glob);
      }
    }
    this.#hidden.push(...this.#filter.filterList(result));
  }

  /** The lines of the report: the hidden tools, then each glob that matched none. */
  report(total: number, report: Report): void {
    const count = this.#hidden.length;
    if (count === 0) {
      report.add("note", `--tool and --ignore-tool hide none of the ${total} tools.`);
    } else {
      const named = this.#hidden.slice(0, MAX_NAMED).map(shownToolName).join(", ");
      const more = count > MAX_NAMED ? `, and ${count - MAX_NAMED} more` : "";
      report.add(
        "note",
        `--tool and --ignore-tool hide ${count} of ${total} tools, which VS Code does not see: ` +
          `${named}${more}.`,
      );
    }
    const { tools: only, ignoreTools } = this.#filter;
    for (const [flag, globs] of [["--tool", only], ["--ignore-tool", ignoreTools]] as const) {
      for (const glob of globs) {
        if (!this.#matched.has(glob)) {
          report.add("note", `${flag} ${shownToolName(glob)} matches no tool of the server.`);
        }
      }
    }
  }
}
