import fc from 'fast-check';
import { fullJitterBackoff } from 'herdless';
import { PyRandom } from 'herdless/sim';
import { herdBackoff, herdScenario, runScenario, type RunResult } from 'herdless/sim';
import { describe, expect, it } from 'vitest';
import { arrivalBins, rowsToCsv, waitPoints } from '../src/charts/series.js';

describe('arrivalBins', () => {
  it('sums the ticks of a run into 100 ms bins, up to the run’s end', () => {
    const run = runScenario(herdScenario('full jitter'), 0, { perTick: true });
    const bins = arrivalBins('full jitter', run, 10);
    expect(bins).toHaveLength(run.ticks / 10);
    expect(bins.reduce((n, b) => n + b.arrivals, 0)).toBe(run.requests);
    expect(bins[0]).toEqual({ series: 'full jitter', t: 0, t2: 0.1, arrivals: 1453 });
    expect(bins.at(-1)!.t2).toBe(run.finishS);
  });

  it('keeps a partial last bin', () => {
    const perTick = { arrivals: Int32Array.from([1, 2, 3]), retries: new Int32Array(3), successes: new Int32Array(3), fresh: new Int32Array(3) };
    const run = { ticks: 3, perTick } as unknown as RunResult;
    expect(arrivalBins('x', run, 10, 20)).toEqual([
      { series: 'x', t: 0, t2: 0.02, arrivals: 3 },
      { series: 'x', t: 0.02, t2: 0.04, arrivals: 3 },
    ]);
  });

  it.each([
    [{ ticks: 3 } as RunResult, 10, 100, 'no per-tick series'],
    [runScenario(herdScenario('immediate', { horizonMs: 100 }), 0, { perTick: true }), 10, 15, 'not a whole number of 10 ms ticks'],
  ])('refuses %#', (run, tickMs, binMs, message) => {
    expect(() => arrivalBins('x', run, tickMs, binMs)).toThrow(message);
  });
});

describe('waitPoints', () => {
  it('draws each client’s waits in order from one generator per strategy', () => {
    const points = waitPoints([{ label: 'fj', backoff: fullJitterBackoff({ initialBackoffMs: 200 }) }], herdBackoff('exponential'), { clients: 2, failures: 3, seed: 0 });
    const rng = new PyRandom(0);
    const expected = [0, 1].flatMap((client) => [1, 2, 3].map((failure) => ({ client, failure, waitS: (rng.random() * 200 * 2 ** (failure - 1)) / 1000 })));
    expect(points.map(({ client, failure, waitS }) => ({ client, failure, waitS }))).toEqual(expected);
    expect(points.map((p) => p.noJitterS)).toEqual([0.2, 0.4, 0.8, 0.2, 0.4, 0.8]);
  });

  it('feeds each wait back as the previous one (decorrelated jitter stays within [base, 3 × previous])', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 }), (seed) => {
        const points = waitPoints([{ label: 'd', backoff: herdBackoff('decorrelated') }], herdBackoff('exponential'), { clients: 1, failures: 8, seed });
        let previous = 0.1;
        for (const p of points) {
          expect(p.waitS).toBeGreaterThanOrEqual(0.1);
          expect(p.waitS).toBeLessThanOrEqual(Math.min(10, 3 * previous));
          previous = p.waitS;
        }
      }),
      { numRuns: 50 },
    );
  });
});

describe('rowsToCsv', () => {
  it('writes a header and quotes what needs it', () => {
    expect(rowsToCsv([{ a: 'x,y', b: 1 }, { a: 'say "hi"', b: 2.5 }])).toBe('a,b\n"x,y",1\n"say ""hi""",2.5');
    expect(rowsToCsv([])).toBe('');
  });
});
