/**
 * The report of `doctor`: plain lines, each marked with what it means for
 * VS Code. A line never holds a token, a header value or the path and query
 * of the upstream URL: the checks write only what they choose to.
 *
 * @module
 */

/** What a line of the report means for VS Code. */
export type Mark =
  /** It works. */
  | "ok"
  /** The bridge repairs it for VS Code: nothing to do. */
  | "repair"
  /** Worth knowing; it does not break anything. */
  | "note"
  /** It would break in VS Code: `doctor` exits 1. */
  | "break";

/** One line of the report. */
export interface Finding {
  readonly mark: Mark;
  readonly text: string;
}

/** The width of the mark column. */
const MARK_WIDTH = 8;

/**
 * The findings of one `doctor` run, in the order of the checks.
 */
export class Report {
  readonly findings: Finding[] = [];

  /** Adds a line; a text with line breaks stays one line. */
  add(mark: Mark, text: string): void {
    this.findings.push({ mark, text: text.replaceAll(/\s*[\r\n]+\s*/g, " ") });
  }

  /** How many lines would break in VS Code. */
  get breaks(): number {
    return this.findings.filter((f) => f.mark === "break").length;
  }

  /** How many lines the bridge repairs. */
  get repairs(): number {
    return this.findings.filter((f) => f.mark === "repair").length;
  }

  /** The verdict: what would break, or that nothing would. */
  verdict(): string {
    return this.breaks > 0
      ? `Result: ${this.breaks} ${this.breaks === 1 ? "thing" : "things"} would break in VS Code.`
      : `Result: nothing would break in VS Code${
        this.repairs > 0 ? ` (the bridge repairs ${this.repairs})` : ""
      }.`;
  }

  /** The text of the report, one finding per line, and the verdict. */
  text(): string {
    const lines = this.findings.map((f) => `${f.mark.padEnd(MARK_WIDTH)}${f.text}`);
    return [...lines, "", this.verdict(), ""].join("\n");
  }

  /** The report as a JSON value (`doctor --json`): the findings, the counts and the verdict. */
  json(): { findings: Finding[]; breaks: number; repairs: number; result: string } {
    return {
      findings: this.findings.map((f) => ({ ...f })),
      breaks: this.breaks,
      repairs: this.repairs,
      result: this.verdict(),
    };
  }
}
