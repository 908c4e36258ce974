import { quote } from './text.js';
import { UsageError } from './usage-error.js';

/** The largest seed the lab accepts (CPython accepts any integer; we keep to safe integers). */
const MAX_SEED = Number.MAX_SAFE_INTEGER;

/** The most seeds one list may name (each is a full run per policy): the work a list can cause is bounded. */
export const MAX_SEEDS = 100_000;

/** The longest seed-list text, in characters (200 ranges fit in 3 KB). */
const MAX_TEXT = 10_000;

/**
 * Parses a seed list such as `0-19`, `3`, `1,5,9` or `0-4,10-12`: ranges are inclusive and must
 * go up; seeds are non-negative integers; duplicates are an error (they would weigh a seed twice).
 * At most {@link MAX_SEEDS} seeds in all, counted from the ranges before any is listed, so the work
 * is linear in the text and bounded whatever it says.
 * @throws UsageError naming the flag and the value (quoted by a short prefix).
 */
export function parseSeeds(text: string, flag = '--seeds'): number[] {
  const fail = (why: string): never => {
    throw new UsageError(`${flag} ${quote(text)}: ${why}`);
  };
  if (text.length > MAX_TEXT) fail(`the list is ${text.length} characters; keep it under ${MAX_TEXT}`);
  if (text.trim() === '') fail('expected seeds such as 0-19 or 1,5,9');
  const ranges: [number, number][] = [];
  let total = 0;
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) fail(`${quote(part)} is not a seed or a range (use 0-19 or 1,5,9)`);
    const from = Number(m![1]);
    const to = m![2] === undefined ? from : Number(m![2]);
    if (from > MAX_SEED || to > MAX_SEED) fail(`seeds must be ≤ ${MAX_SEED}`);
    if (to < from) fail(`the range ${from}-${to} goes down; write ${to}-${from}`);
    if (to - from >= MAX_SEEDS) fail(`the range ${from}-${to} has more than ${MAX_SEEDS} seeds`);
    total += to - from + 1;
    if (total > MAX_SEEDS) fail(`more than ${MAX_SEEDS} seeds in all; each seed is a run per policy, so keep the list shorter`);
    ranges.push([from, to]);
  }
  const seeds: number[] = [];
  const seen = new Set<number>();
  for (const [from, to] of ranges) {
    for (let s = from; s <= to; s++) {
      if (seen.size === seen.add(s).size) fail(`seed ${s} is listed twice`);
      seeds.push(s);
    }
  }
  return seeds;
}

/** Seeds as the `--seeds` flag takes them: `0-19` for a contiguous range, else `1,5,9`. */
export function seedText(seeds: readonly number[]): string {
  const contiguous = seeds.every((s, i) => i === 0 || s === seeds[i - 1]! + 1);
  return contiguous && seeds.length > 1 ? `${seeds[0]}-${seeds[seeds.length - 1]}` : seeds.join(',');
}
