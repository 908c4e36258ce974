/*
 * How the lab reads a number typed by a user, on the command line and in the page alike: plain
 * decimal numerals only. `Number()` would also take `0x10`, `1e3`, `Infinity`, `0b1` and an empty
 * string (as 0); a flag or a form field refuses them rather than guess.
 */

/** Plain decimal numerals: `3`, `-2`, `0.9`, `.5`, `5.`. */
export const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)$/;
/** Plain integers: `3`, `-2`. */
export const INTEGER = /^-?\d+$/;
/**
 * A whole count as the lab prints large counts (`2.5e11`, `1.0e10`) or in plain decimal; for
 * `--max-events` only, whose bounds the help and the refusals print that way. The value must still
 * be an integer (`1.23e1` is not).
 */
export const COUNT = /^(?:\d+|\d+(?:\.\d+)?e\+?\d+)$/i;

/** The number `text` spells in plain decimal (surrounding spaces allowed), or undefined when it is not one. */
export function plainNumber(text: string): number | undefined {
  const t = text.trim();
  return DECIMAL.test(t) ? Number(t) : undefined;
}
