import { describe, expect, it } from 'vitest';
import { HEDGING_SERVER, hedgingCrossover, hedgingRow, meanServiceMs, runHedging } from 'herdless/sim';

describe('the hedging model', () => {
  it('the mean service time is the two lognormal modes’ means, weighted: 0.98 × 4·e^(0.25²/2) + 0.02 × 60·e^(0.25²/2)', () => {
    expect(meanServiceMs(HEDGING_SERVER)).toBeCloseTo((0.98 * 4 + 0.02 * 60) * Math.exp(0.03125), 10);
  });

  it('at 10% load without hedging the latency is the service time: p50 near the fast median, p99 in the slow mode, work ≈ 1 mean service per call', () => {
    const m = runHedging({ policy: 'no hedging', load: 0.1, seed: 1 });
    expect(m.amplification).toBe(1);
    expect(m.p50).toBeGreaterThan(3.8);
    expect(m.p50).toBeLessThan(4.6); // a little queueing at 10%
    expect(m.p99).toBeGreaterThan(45); // 2% of calls take the slow path (median 60 ms)
    expect(m.work).toBeGreaterThan(0.95);
    expect(m.work).toBeLessThan(1.05);
  });

  it('runs are repeatable for a seed, and differ between seeds', () => {
    const a = runHedging({ policy: 'p95 delay', load: 0.5, seed: 3, durationMs: 5000 });
    expect(runHedging({ policy: 'p95 delay', load: 0.5, seed: 3, durationMs: 5000 })).toEqual(a);
    expect(runHedging({ policy: 'p95 delay', load: 0.5, seed: 4, durationMs: 5000 })).not.toEqual(a);
  });

  it('the budget caps the extra attempts at ratio × requests: about 1/(1 − 0.1) attempts per call even when every call would hedge', () => {
    const free = runHedging({ policy: 'fixed delay', load: 1, seed: 0, durationMs: 5000 });
    const budgeted = runHedging({ policy: 'fixed delay + budget', load: 1, seed: 0, durationMs: 5000 });
    expect(free.amplification).toBeGreaterThan(1.9);
    // 1/0.9 = 1.111…, plus the budget's floor of 1 hedge per 1 s window (≈ 2000 calls): ≤ 1.112.
    expect(budgeted.amplification).toBeGreaterThan(1.1);
    expect(budgeted.amplification).toBeLessThanOrEqual(1 / 0.9 + 1 / 1000);
  });

  it('the crossover is the first load where a policy’s p99 exceeds no hedging’s', () => {
    const m = (p99: number) => ({ calls: 1, p50: 1, p99, p999: p99, amplification: 1, work: 1 });
    const rows = [
      hedgingRow('no hedging', 0.1, [m(50)]),
      hedgingRow('fixed delay', 0.1, [m(10)]),
      hedgingRow('no hedging', 0.5, [m(80)]),
      hedgingRow('fixed delay', 0.5, [m(90), m(70)]),
      hedgingRow('no hedging', 0.9, [m(100)]),
      hedgingRow('fixed delay', 0.9, [m(300)]),
    ];
    expect(hedgingCrossover(rows, 'fixed delay')).toBe(0.9); // at 0.5 the mean is 80: not above
    expect(hedgingCrossover(rows, 'p95 delay')).toBeUndefined();
  });

  it('refuses a load outside (0, 1]', () => {
    expect(() => runHedging({ policy: 'no hedging', load: 0, seed: 0 })).toThrow(RangeError);
    expect(() => runHedging({ policy: 'no hedging', load: 1.5, seed: 0 })).toThrow(RangeError);
  });
});
