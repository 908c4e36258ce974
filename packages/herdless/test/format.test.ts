import { describe, expect, it } from 'vitest';
import { formatFixed, summarize } from 'herdless/sim';

describe('formatFixed is Python’s %.Nf', () => {
  it.each([
    [0.125, 2, '0.12'], // exact tie → even (toFixed gives 0.13)
    [0.375, 2, '0.38'],
    [2.5, 0, '2'],
    [3.5, 0, '4'],
    [16.895, 2, '16.89'], // the double just below 16.895
    [11.65, 1, '11.7'], // the double just above 11.65
    [1.15, 1, '1.1'],
    [6148.05, 0, '6148'],
    [0.25, 1, '0.2'],
    [-0.125, 2, '-0.12'],
    [-0.001, 1, '-0.0'],
    [120, 2, '120.00'],
  ])('%s with %s decimals → %s', (x, d, s) => {
    expect(formatFixed(x, d)).toBe(s);
  });
});

describe('summarize', () => {
  it('plain left-to-right mean, min, max', () => {
    expect(summarize([1, 2, 6])).toEqual({ mean: 3, min: 1, max: 6 });
    expect(() => summarize([])).toThrow('no values');
  });
});
