/**
 * The values of `--protocol` (LEGACY.md): `2026-07-28`, the default, and
 * `auto`. The command line reads them from this module, which loads nothing
 * of the pass-through of `--protocol auto` (`auto.ts`).
 *
 * @module
 */

/** The values of `--protocol`. */
export const PROTOCOLS = ["2026-07-28", "auto"] as const;

/**
 * A value of `--protocol`.
 */
export type Protocol = typeof PROTOCOLS[number];

/**
 * True for a value of `--protocol`.
 *
 * @example
 * ```ts
 * import { isProtocol } from "./protocol.ts";
 * if (!isProtocol("auto") || !isProtocol("2026-07-28")) throw new Error();
 * if (isProtocol("2025-11-25")) throw new Error("not a value of --protocol");
 * ```
 */
export function isProtocol(value: unknown): value is Protocol {
  return (PROTOCOLS as readonly unknown[]).includes(value);
}
