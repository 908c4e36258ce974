import { UsageError } from '../usage-error.js';

/** The largest seed the lab accepts (CPython accepts any integer; we keep to safe integers). */
const MAX_SEED = Number.MAX_SAFE_INTEGER;

/**
 * Parses a seed list such as `0-19`, `3`, `1,5,9` or `0-4,10-12`: ranges are inclusive and must
 * go up; seeds are non-negative integers; duplicates are an error (they would weigh a seed twice).
 * @throws UsageError naming the flag and the value.
 */
export function parseSeeds(text: string, flag = '--seeds'): number[] {
  const fail = (why: string): never => {
    throw new UsageError(`${flag} ${JSON.stringify(text)}: ${why}`);
  };
  if (text.trim() === '') fail('expected seeds such as 0-19 or 1,5,9');
  const seeds: number[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) fail(`"${part}" is not a seed or a range (use 0-19 or 1,5,9)`);
    const from = Number(m![1]);
    const to = m![2] === undefined ? from : Number(m![2]);
    if (from > MAX_SEED || to > MAX_SEED) fail(`seeds must be ≤ ${MAX_SEED}`);
    if (to < from) fail(`the range ${from}-${to} goes down; write ${to}-${from}`);
    if (to - from >= 100_000) fail(`the range ${from}-${to} has more than 100000 seeds`);
    for (let s = from; s <= to; s++) seeds.push(s);
  }
  const seen = new Set<number>();
  for (const s of seeds) {
    if (seen.has(s)) fail(`seed ${s} is listed twice`);
    seen.add(s);
  }
  return seeds;
}
