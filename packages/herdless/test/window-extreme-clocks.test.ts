import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failureRatio, finagleRetryBudget, retryRatioBudget } from 'herdless';

// Every sliding window must move in bounded work whatever the clock reads: a bucket index past
// 2^53 (where index + 1 rounds back to the index), a jump of any size, a clock that steps back,
// NaN or ±Infinity. Each case below hung (100% CPU) when the ring walked absolute indices. The
// per-test limits (generous: a busy machine is slow, a hang is endless) turn a regression into a
// failure instead of a stuck run.
const EXTREME = [0, 0.5, 1, 2e12, 2e12 + 0.5, 2 ** 53, 2 ** 53 + 2, 2 ** 60, 1e300, Number.MAX_VALUE, -1e300, -0, Infinity, -Infinity, NaN];

// The built library (the test run's global setup builds it): a hang is synchronous, so only a
// separate process with a kill timer can turn it into a failure rather than a stuck test run.
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const HANG_PROBE = `
const { retryRatioBudget, finagleRetryBudget, failureRatio } = await import(process.argv[1]);
const r = retryRatioBudget({ windowMs: 1, buckets: 10000 });
r.onAttempt(2e12, false); r.onAttempt(2e12 + 0.5, false);
const f = finagleRetryBudget({ ttlMs: 1000 });
f.onAttempt(1e18, false); f.balance(1e18 + 500);
const c = failureRatio({ windowMs: 1, buckets: 1000 }).create();
c.record(true, 2e12); c.record(true, 2e12 + 0.5);
console.log(r.requestsInWindow(2e12 + 0.5), f.balance(1e18 + 500), c.snapshot(2e12 + 0.5).calls);
`;

describe('sliding windows advance in bounded work under extreme clocks', () => {
  // 120 s: a hang never returns, and a busy machine can take seconds to start a process and load the
  // library (the probe itself needs milliseconds), so the limit tells a hang from a slow machine.
  it('the three windows return in a separate process (a hang is killed after 120 s, not waited for)', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', HANG_PROBE, DIST], { encoding: 'utf8', timeout: 120_000 });
    expect(run.signal).toBe(null);
    expect(run.stdout.trim()).toBe('2 10.2 2');
  });

  it('retryRatioBudget({ windowMs: 1, buckets: 10000 }) at 2e12 then 2e12 + 0.5', { timeout: 60_000 }, () => {
    const b = retryRatioBudget({ windowMs: 1, buckets: 10_000, ratio: 0.5, minRetriesPerWindow: 0 });
    b.onAttempt(2e12, false);
    b.onAttempt(2e12 + 0.5, false);
    // 0.5 ms later is within the 1 ms window: both first tries count.
    expect(b.requestsInWindow(2e12 + 0.5)).toBe(2);
    expect(b.allowRetry(2e12 + 0.5)).toBe(true); // 1 ≤ 0.5 × 3
    expect(b.retriesInWindow(2e12 + 0.5)).toBe(1);
    // A whole window later, everything has left it.
    expect(b.requestsInWindow(2e12 + 2)).toBe(0);
  });

  it('finagleRetryBudget at bucket indices past 2^53', { timeout: 60_000 }, () => {
    const b = finagleRetryBudget({ ttlMs: 1000, minRetriesPerSec: 0, percentCanRetry: 1 });
    const t = 1e18; // bucket index 1e16 (> 2^53 ≈ 9.007e15) with 100 ms buckets
    b.onAttempt(t, false);
    expect(b.balance(t + 300)).toBe(1);
    expect(b.allowRetry(t + 400)).toBe(true);
    expect(b.balance(t + 400)).toBe(0);
    expect(b.balance(t + 5000)).toBe(0 + 0); // the deposit and the withdrawal both expired
  });

  it('failureRatio at bucket indices past 2^53 still opens on the window’s failures', { timeout: 60_000 }, () => {
    const c = failureRatio({ windowMs: 1, buckets: 1000, minimumCalls: 2, ratio: 0.5 }).create();
    expect(c.record(false, 2e12)).toBe(false);
    expect(c.record(true, 2e12 + 0.5)).toBe(true); // 1 of 2 failed, within 1 ms
    expect(c.snapshot(2e12 + 0.5)).toMatchObject({ calls: 2, failures: 1 });
    expect(c.snapshot(2e12 + 5)).toMatchObject({ calls: 0, failures: 0 });
  });

  it('every window survives any sequence of extreme readings, with counts finite and ≥ 0', { timeout: 120_000 }, () => {
    const reading = fc.oneof(fc.constantFrom(...EXTREME), fc.double(), fc.double({ min: 2e12, max: 2e12 + 10 }));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 1e-6, max: 1e6, noNaN: true }), fc.array(reading, { maxLength: 40 }), (buckets, windowMs, nows) => {
        const ratio = retryRatioBudget({ windowMs, buckets, ratio: 0.5 });
        const fin = finagleRetryBudget({ ttlMs: 1000 + (windowMs % 59_000) });
        const breaker = failureRatio({ windowMs, buckets: Math.min(buckets, 1000), minimumCalls: 1 }).create();
        for (const now of nows) {
          ratio.onAttempt(now, false);
          ratio.allowRetry(now);
          fin.onAttempt(now, false);
          fin.allowRetry(now);
          breaker.record(now > 0, now);
          for (const n of [ratio.requestsInWindow(now), ratio.retriesInWindow(now)]) expect(n >= 0 && Number.isFinite(n)).toBe(true);
          const snap = breaker.snapshot(now) as unknown as { calls: number; failures: number };
          expect(snap.calls >= snap.failures && snap.failures >= 0).toBe(true);
          expect(Number.isFinite(fin.balance(now))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
