/**
 * The globs of `--tool` and `--ignore-tool`, the filter of a tools/list
 * page (as a result rule, on every path), the name in the refusal, and the
 * refusal of a call of a hidden tool. Pure functions: no process.
 */

import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import {
  globMatches,
  SHOWN_NAME_CHARS,
  shownToolName,
  ToolFilter,
} from "../../lib/translate/tool_filter.ts";
import { applyResultRules } from "../../lib/translate/results.ts";
import { parseLargeMessage } from "../../lib/jsonrpc/skeleton.ts";
import type { JsonObject } from "../../lib/jsonrpc/message.ts";
import { VSCODE_PROFILE } from "../../lib/vscode/profile.ts";
import { SILENT_LOGGER } from "../../lib/log.ts";

Deno.test("glob: * matches any run of characters, none too, at the start, the end and both ends", () => {
  const cases: [string, string, boolean][] = [
    ["echo", "echo", true],
    ["echo", "echo2", false],
    ["echo", "ech", false],
    ["*", "", true],
    ["*", "anything", true],
    ["get_*", "get_", true], // the star matches no character
    ["get_*", "get_user", true],
    ["get_*", "xget_user", false],
    ["*_user", "_user", true],
    ["*_user", "get_user", true],
    ["*_user", "get_users", false],
    ["*issue*", "issue", true], // a star at both ends, both empty
    ["*issue*", "github_issue_create", true],
    ["*issue*", "github_isue", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "axxbyyc", true],
    ["a*b*c", "acb", false],
    ["a*a", "a", false], // the parts may not overlap
    ["a*a", "aa", true],
    ["ab*ab", "abab", true],
    ["ab*ab", "aba", false],
    ["**", "", true],
    ["a**b", "ab", true],
    ["*x*x*", "xx", true],
    ["*x*x*", "x", false],
  ];
  for (const [glob, name, want] of cases) {
    strictEqual(globMatches(glob, name), want, `${glob} ${name}`);
  }
});

Deno.test("glob: every character but * is itself: the metacharacters of regular expressions and of shell globs", () => {
  const cases: [string, string, boolean][] = [
    ["a.c", "a.c", true],
    ["a.c", "abc", false],
    ["a?c", "abc", false],
    ["a?c", "a?c", true],
    ["[ab]", "a", false],
    ["[ab]", "[ab]", true],
    ["x+", "xx", false],
    ["(a|b)*", "(a|b)_tool", true],
    ["(a|b)*", "a", false],
    ["^get$*", "^get$x", true],
    ["\\d*", "\\d1", true],
    ["\\d*", "1", false],
    ["{a,b}", "a", false],
    ["tool.*", "tool.x", true],
    ["tool.*", "toolx", false],
  ];
  for (const [glob, name, want] of cases) {
    strictEqual(globMatches(glob, name), want, `${glob} ${name}`);
  }
});

Deno.test("glob: the match is case-sensitive, as MCP tool names are; non-ASCII names match by their characters", () => {
  strictEqual(globMatches("Echo", "echo"), false);
  strictEqual(globMatches("echo*", "ECHO_X"), false);
  strictEqual(globMatches("*ü*", "grüße"), true);
  strictEqual(globMatches("😀*", "😀_tool"), true);
  strictEqual(globMatches("*😀", "tool_😀"), true);
});

Deno.test("filter: --tool only these, --ignore-tool never these; both: some --tool and no --ignore-tool", () => {
  const only = ToolFilter.of({ tools: ["get_*", "echo"] })!;
  deepStrictEqual(["get_a", "echo", "set_a", "echo2"].map((n) => only.shows(n)), [
    true,
    true,
    false,
    false,
  ]);
  const never = ToolFilter.of({ ignoreTools: ["*delete*"] })!;
  deepStrictEqual(["get_a", "delete_all", "x_delete"].map((n) => never.shows(n)), [
    true,
    false,
    false,
  ]);
  const both = ToolFilter.of({ tools: ["github_*"], ignoreTools: ["github_delete_*"] })!;
  deepStrictEqual(
    ["github_get", "github_delete_repo", "slack_post"].map((n) => both.shows(n)),
    [true, false, false],
  );
  strictEqual(ToolFilter.of({}), undefined);
  strictEqual(ToolFilter.of({ tools: [], ignoreTools: [] }), undefined);
  throws(() => ToolFilter.of({ tools: [""] }), TypeError);
  throws(() => ToolFilter.of({ ignoreTools: ["ok", ""] }), TypeError);
});

Deno.test("filter: a tool without a string name matches no glob", () => {
  strictEqual(ToolFilter.of({ tools: ["*"] })!.shows(undefined), false);
  strictEqual(ToolFilter.of({ ignoreTools: ["*"] })!.shows(7), true);
});

const ctx = (tools?: ToolFilter) => ({
  quirks: VSCODE_PROFILE.quirks,
  icons: "all" as const,
  log: SILENT_LOGGER,
  ...(tools && { tools }),
});

Deno.test("tools/list rule: the hidden tools leave every page; an empty page keeps its nextCursor", () => {
  const filter = ToolFilter.of({ tools: ["keep_*"], ignoreTools: ["keep_secret"] })!;
  const pages: JsonObject[] = [
    {
      tools: [{ name: "keep_a", inputSchema: { type: "object" } }, {
        name: "drop_b",
        inputSchema: { type: "object" },
      }],
      nextCursor: "p2",
    },
    {
      tools: [{ name: "drop_c", inputSchema: { type: "object" } }, {
        name: "keep_secret",
        inputSchema: { type: "object" },
      }],
      nextCursor: "p3",
    },
    { tools: [{ name: "keep_d", inputSchema: { type: "object" } }] },
  ];
  const out = pages.map((page) => applyResultRules("tools/list", page, ctx(filter)) as JsonObject);
  deepStrictEqual(out.map((p) => (p.tools as { name: string }[]).map((t) => t.name)), [
    ["keep_a"],
    [],
    ["keep_d"],
  ]);
  deepStrictEqual(out.map((p) => p.nextCursor), ["p2", "p3", undefined]);
  // Without the lists, the rule changes nothing.
  const whole = { tools: [{ name: "drop_b", inputSchema: { type: "object" } }], nextCursor: "x" };
  deepStrictEqual(applyResultRules("tools/list", structuredClone(whole), ctx()), whole);
  // Other lists are not tools.
  const prompts = { prompts: [{ name: "drop_b" }] };
  deepStrictEqual(applyResultRules("prompts/list", structuredClone(prompts), ctx(filter)), prompts);
});

Deno.test("tools/list rule: a hidden tool gets no repair log line; a shown one does", () => {
  const lines: string[] = [];
  const log = {
    ...SILENT_LOGGER,
    enabled: () => true,
    info: (line: string) => void lines.push(line),
  };
  const filter = ToolFilter.of({ ignoreTools: ["hidden"] })!;
  const arraySchema = { type: "object", properties: { a: { type: "array" } } };
  applyResultRules("tools/list", {
    tools: [{ name: "hidden", inputSchema: structuredClone(arraySchema) }, {
      name: "shown",
      inputSchema: structuredClone(arraySchema),
    }],
  }, { ...ctx(filter), log });
  strictEqual(lines.length, 1);
  ok(lines[0]!.includes("'shown'"), lines[0]);
});

Deno.test("tools/list rule: a tool name of 64 KiB or more (a placeholder of the large line) is matched whole", () => {
  const long = "a".repeat(70_000) + "_secret";
  const line = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: { tools: [{ name: long, inputSchema: { type: "object" } }, { name: "b" }] },
  });
  const message = parseLargeMessage(new TextEncoder().encode(line), 64);
  if (message === undefined || message === "invalid") throw new Error("not a large message");
  const filter = ToolFilter.of({ ignoreTools: ["*_secret"] })!;
  const out = applyResultRules("tools/list", message.result!, ctx(filter)) as JsonObject;
  deepStrictEqual((out.tools as { name: string }[]).map((t) => t.name), ["b"]);
});

Deno.test("refusal: a hidden tool gets -32602, tool_not_allowed and its name; a shown one goes on", () => {
  const filter = ToolFilter.of({ ignoreTools: ["rm_*"] })!;
  strictEqual(filter.refusal({ name: "ls", arguments: {} }), undefined);
  const error = filter.refusal({ name: "rm_rf", arguments: {} })!.toJSON();
  strictEqual(error.code, -32602);
  deepStrictEqual(error.data, { cause: "tool_not_allowed" });
  strictEqual(
    error.message,
    'The tool "rm_rf" is not available: the --tool and --ignore-tool options of the bridge hide it.',
  );
  // A call that names no tool cannot be checked: invalid_params.
  for (const params of [undefined, {}, { name: 3 }]) {
    const e = filter.refusal(params)!.toJSON();
    deepStrictEqual([e.code, e.data], [-32602, { cause: "invalid_params" }]);
  }
});

Deno.test("refusal: a hostile name is quoted, escaped and cut: no flood, no bidi override, no line break, no $ pattern", () => {
  const filter = ToolFilter.of({ tools: ["safe"] })!;
  const message = (name: string) => filter.refusal({ name })!.message;
  const long = message("x".repeat(1_000_000));
  ok(long.length < 300, `${long.length}`);
  ok(long.includes(`"${"x".repeat(SHOWN_NAME_CHARS)}…"`));
  const hostile = message('a"b\\c\nd\u202ee\u2028f\u200bg\u0085h');
  ok(
    hostile.startsWith('The tool "a\\"b\\\\c\\nd\\u202ee\\u2028f\\u200bg\\u0085h" is not'),
    hostile,
  );
  ok(!/[\n\u202e\u2028\u200b\u0085]/.test(hostile));
  // A replacement pattern of String.replace is text of the name.
  ok(message("$&$'$`").includes(`"$&$'$\`"`), message("$&$'$`"));
  // A cut never splits a character of two UTF-16 units.
  strictEqual(shownToolName("😀".repeat(200)), `"${"😀".repeat(SHOWN_NAME_CHARS)}…"`);
});
