import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { equalJitterBackoff, exponentialBackoff, fullJitterBackoff, type Rng } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';

// The exponential family looks the capped value up for small retry numbers instead of computing
// `initial × multiplier^(retry − 1)` each time; the lookup must return the very same double.
const formula = (initial: number, mult: number, cap: number, retry: number): number => {
  const v = initial * mult ** (retry - 1);
  return v < cap ? v : initial === 0 ? 0 : cap;
};
const half: Rng = { random: () => 0.5 };

describe('exponential family: looked-up values equal the formula to the bit (property)', () => {
  it('for every retry 0..80, and fractional and negative retry numbers', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.oneof(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.constant(Infinity)),
        fc.double({ min: -5, max: 70, noNaN: true }),
        (initial, mult, extra, odd) => {
          const cap = Math.min(initial + extra, MAX_DELAY_MS);
          const options = { initialBackoffMs: initial, backoffMultiplier: mult, maxBackoffMs: initial + extra };
          const [expo, full, equal] = [exponentialBackoff(options), fullJitterBackoff(options), equalJitterBackoff(options)];
          for (const retry of [...Array(81).keys(), odd]) {
            const v = formula(initial, mult, cap, retry);
            expect(Object.is(expo.delay(retry, 0, half), v)).toBe(true);
            expect(Object.is(full.delay(retry, 0, half), v * 0.5)).toBe(true);
            expect(Object.is(equal.delay(retry, 0, half), v / 2 + (v / 2) * 0.5)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
