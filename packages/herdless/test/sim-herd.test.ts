import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backoffFromSpec } from 'herdless/sim';
import { HERD_STRATEGIES, formatFixed, herdRow, herdScenario, runHerd, runScenario } from 'herdless/sim';

const seeds = [...Array(20).keys()];

// The article's herd table (seeds 0–19), as printed: finish s, requests, crashes per strategy.
const ARTICLE = [
  'immediate      120.00 (120.00-120.00)   12000000 (12000000-12000000)   119.0 (20 unfinished)',
  'fixed 1s       120.00 (120.00-120.00)     119000 (  119000-  119000)   118.0 (20 unfinished)',
  'exponential    120.00 (120.00-120.00)      17000 (   17000-   17000)    14.0 (20 unfinished)',
  'full jitter     12.03 (  9.97- 14.10)       6148 (    6046-    6571)     1.1',
  'equal jitter    11.99 ( 11.39- 18.75)       6138 (    6084-    6182)     2.0',
  'decorrelated    12.86 ( 10.41- 15.20)       8151 (    7404-    8500)     2.9',
];

const f = (x: number, d: number, w: number) => formatFixed(x, d).padStart(w);

describe('herd experiment — the article to the digit', () => {
  const rows = runHerd(HERD_STRATEGIES, seeds);

  it('prints the article’s six rows', () => {
    const printed = rows.map(
      (r) =>
        `${r.strategy.padEnd(14)} ${f(r.finish.mean, 2, 6)} (${f(r.finish.min, 2, 6)}-${f(r.finish.max, 2, 6)})   ` +
        `${f(r.requests.mean, 0, 8)} (${f(r.requests.min, 0, 8)}-${f(r.requests.max, 0, 8)})   ${f(r.crashes.mean, 1, 5)}` +
        (r.unfinished ? ` (${r.unfinished} unfinished)` : ''),
    );
    expect(printed).toEqual(ARTICLE);
  });

  it('has the unrounded means of the JSON contract', () => {
    const full = rows.find((r) => r.strategy === 'full jitter')!;
    expect(full.finish.mean).toBeCloseTo(12.0305, 10);
    expect(full.requests.mean).toBe(6148.05);
    expect(full.crashes.mean).toBe(1.15);
    expect(rows[0]).toEqual({
      strategy: 'immediate',
      finish: { mean: 120, min: 120, max: 120 },
      requests: { mean: 12_000_000, min: 12_000_000, max: 12_000_000 },
      crashes: { mean: 119, min: 119, max: 119 },
      unfinished: 20,
      gaveUp: { mean: 0, min: 0, max: 0 },
    });
    // No cap and no budget: nobody ever gives up.
    expect(rows.map((r) => r.gaveUp.max)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('matches the reference run by run (120 runs)', () => {
    const text = readFileSync(new URL('./fixtures/herd-main-per-seed.txt', import.meta.url), 'utf8');
    const expected = text
      .trim()
      .split('\n')
      .map((line) => {
        const m = /^(.+) seed (\d+): finish ([\d.]+) requests (\d+) crashes (\d+)( unfinished)?$/.exec(line)!;
        return { strategy: m[1]!, seed: Number(m[2]), finish: m[3]!, requests: Number(m[4]), crashes: Number(m[5]), finished: !m[6] };
      });
    expect(expected).toHaveLength(120);
    // The cheap strategies in full; `immediate` is checked by the table above.
    for (const strategy of HERD_STRATEGIES.slice(1)) {
      const scenario = herdScenario(strategy);
      for (const e of expected.filter((x) => x.strategy === strategy)) {
        const r = runScenario(scenario, e.seed);
        expect({ strategy, seed: e.seed, finish: formatFixed(r.finishS, 2), requests: r.requests, crashes: r.crashes, finished: r.finished }).toEqual(e);
      }
    }
  });
});

describe('herd with first sends spread over 0.9 s', () => {
  const [fixed, expo] = runHerd(['fixed 1s', 'exponential'], seeds, { spreadMs: 900 });

  it('fixed 1s finishes every run: mean 16.89 s, 11.65 crashes (printed 11.7)', () => {
    expect(fixed!.unfinished).toBe(0);
    expect(formatFixed(fixed!.finish.mean, 2)).toBe('16.89');
    expect(fixed!.crashes.mean).toBe(11.65);
    expect(formatFixed(fixed!.crashes.mean, 1)).toBe('11.7');
  });

  it('seed 0 of fixed 1s finishes at 16.20 s', () => {
    expect(formatFixed(runScenario(herdScenario('fixed 1s', { spreadMs: 900 }), 0).finishS, 2)).toBe('16.20');
  });

  it('exponential without jitter never finishes', () => {
    expect(expo!.unfinished).toBe(20);
  });
});

describe('herd with capped attempts (docs/lab.md\'s example scenario)', () => {
  // 1,000 clients, capacity 3 per tick, gRPC's default policy: maxAttempts 5, 0.1 s × 2^n ± 20%.
  const backoff = backoffFromSpec({ kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2 });
  const scenario = herdScenario({ name: 'gRPC default', backoff, maxAttempts: 5 }, { server: { capacityPerTick: 3 } });
  const runs = [0, 1].map((seed) => runScenario(scenario, seed));

  it('seed 0: 31 succeed and 969 give up during start-up; the run ends when the last gives up, at 1.84 s', () => {
    expect(runs[0]).toMatchObject({ succeeded: 31, gaveUp: 969, outstanding: 0, finished: true, requests: 5000, finishS: 1.84 });
    expect(runs[1]).toMatchObject({ succeeded: 27, gaveUp: 973, finishS: 1.83 });
  });

  it('the row counts them: 971 gave up per run on average, and no run is unfinished', () => {
    const row = herdRow('gRPC default', runs);
    expect(row.gaveUp).toEqual({ mean: 971, min: 969, max: 973 });
    expect(row.unfinished).toBe(0);
    expect(row.finish.min).toBe(1.83);
    expect(row.finish.max).toBe(1.84);
  });
});
