import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInvalidOptionError, proportionalJitterBackoff, retryRatioBudget, type RetryRatioBudget } from 'herdless';
import { ARTICLE_RETRY_RATIO, PyRandom } from 'herdless/sim';

describe('retryRatioBudget: counting at decision (the default)', () => {
  it('defaults: 10%, floor 1, 1000 ms in 10 buckets, counted at decision', () => {
    expect(retryRatioBudget().toJSON()).toEqual({
      kind: 'retry ratio',
      ratio: 0.1,
      minRetriesPerWindow: 1,
      windowMs: 1000,
      buckets: 10,
      countAt: 'decision',
    });
  });

  it('counts a granted retry at once, as a retry and a request, and not again when it is sent', () => {
    const b = retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 0 });
    for (let i = 0; i < 9; i++) b.onAttempt(0, false);
    b.onFailure(0);
    expect(b.allowRetry(0)).toBe(true); // (0 + 1) ≤ 0.1 × (9 + 1)
    expect([b.requestsInWindow(0), b.retriesInWindow(0)]).toEqual([10, 1]);
    b.onFailure(0);
    expect(b.allowRetry(0)).toBe(false); // the first retry has not been sent yet, but it counts
    b.onAttempt(50, true); // the granted retry goes out: no double count
    expect([b.requestsInWindow(50), b.retriesInWindow(50)]).toEqual([10, 1]);
    for (let i = 0; i < 10; i++) b.onAttempt(150, false);
    expect(b.allowRetry(150)).toBe(true); // 2 ≤ 0.1 × 21
    expect([b.requestsInWindow(999), b.retriesInWindow(999)]).toEqual([21, 2]);
    // At 1000 ms the bucket [0, 100) has left the window; [100, 200) is still in it.
    expect([b.requestsInWindow(1000), b.retriesInWindow(1000)]).toEqual([11, 1]);
    expect([b.requestsInWindow(1100), b.retriesInWindow(1100)]).toEqual([0, 0]);
  });

  it('the floor lets a quiet client retry once per window', () => {
    const b = retryRatioBudget(); // floor 1
    b.onAttempt(0, false);
    b.onFailure(0);
    expect(b.allowRetry(0)).toBe(true);
    b.onFailure(10);
    expect(b.allowRetry(10)).toBe(false);
    expect(b.allowRetry(999)).toBe(false);
    expect(b.allowRetry(1000)).toBe(true); // the bucket of t = 0 has left the window
  });

  it('property: at every grant, retries ≤ ratio × requests + floor over the window, and decisions match a full log', () => {
    const ops = fc.array(
      fc.record({
        dt: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3000 })),
        op: fc.constantFrom('first', 'first', 'first', 'decide', 'send-retry'),
      }),
      { maxLength: 300 },
    );
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0.05, 0.1, 0.25, 0.5, 1),
        fc.constantFrom(0, 0.5, 1, 3),
        fc.constantFrom(100, 250, 1000, 1500),
        fc.constantFrom(1, 3, 10, 100),
        ops,
        (ratio, floor, windowMs, buckets, events) => {
          const b = retryRatioBudget({ ratio, minRetriesPerWindow: floor, windowMs, buckets });
          const width = windowMs / buckets;
          const log: { bucket: number; retry: boolean }[] = []; // counted events, by bucket
          let now = 0;
          let pending = 0;
          for (const { dt, op } of events) {
            now += dt;
            const k = Math.floor(now / width);
            const inWindow = log.filter((e) => e.bucket > k - buckets && e.bucket <= k);
            const S = inWindow.length;
            const R = inWindow.filter((e) => e.retry).length;
            if (op === 'first') {
              b.onAttempt(now, false);
              log.push({ bucket: k, retry: false });
            } else if (op === 'send-retry') {
              if (pending > 0) {
                pending--;
                b.onAttempt(now, true); // counted at decision: adds nothing
              }
            } else {
              b.onFailure(now);
              const granted = b.allowRetry(now);
              expect(granted).toBe(R + 1 <= ratio * (S + 1) + floor);
              if (granted) {
                pending++;
                log.push({ bucket: k, retry: true });
                expect(R + 1).toBeLessThanOrEqual(ratio * (S + 1) + floor + 1e-9);
              }
            }
            expect(b.requestsInWindow(now)).toBe(log.filter((e) => e.bucket > k - buckets && e.bucket <= k).length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('retryRatioBudget: counting at send (the article’s variant)', () => {
  it('ARTICLE_RETRY_RATIO is 10%, floor 0, 1000 ms in 10 ms buckets, counted at send', () => {
    expect(ARTICLE_RETRY_RATIO).toEqual({ ratio: 0.1, minRetriesPerWindow: 0, windowMs: 1000, buckets: 100, countAt: 'send' });
    expect(Object.isFrozen(ARTICLE_RETRY_RATIO)).toBe(true);
  });

  it('property: on 10 ms ticks it decides exactly as the article — R < 0.1 × S over sends at ticks (t − 100, t]', () => {
    const ops = fc.array(
      fc.record({
        dt: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 250 })),
        op: fc.constantFrom('first', 'first', 'retry', 'decide'),
      }),
      { maxLength: 400 },
    );
    fc.assert(
      fc.property(ops, (events) => {
        const b = retryRatioBudget(ARTICLE_RETRY_RATIO);
        const sends: { tick: number; retry: boolean }[] = [];
        let tick = 0;
        for (const { dt, op } of events) {
          tick += dt;
          const now = tick * 10;
          if (op === 'decide') {
            const recent = sends.filter((s) => s.tick > tick - 100 && s.tick <= tick);
            const S = recent.length;
            const R = recent.filter((s) => s.retry).length;
            b.onFailure(now);
            expect(b.allowRetry(now)).toBe(R < 0.1 * S);
          } else {
            b.onAttempt(now, op === 'retry');
            sends.push({ tick, retry: op === 'retry' });
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('does not count a retry until it is sent', () => {
    const b = retryRatioBudget(ARTICLE_RETRY_RATIO);
    for (let i = 0; i < 10; i++) b.onAttempt(0, false);
    // Two failures in a row are both granted: the first grant is not counted yet.
    expect(b.allowRetry(0)).toBe(true);
    expect(b.allowRetry(0)).toBe(true);
    b.onAttempt(10, true);
    b.onAttempt(10, true);
    expect(b.allowRetry(10)).toBe(false); // 2 < 0.1 × 12 is false
  });
});

/**
 * A client in a total outage: `perTick` new requests every 10 ms tick, every attempt fails,
 * maxAttempts 4, gRPC's backoff (0.1 s × 2^(n−1), cap 1 s, ±20%); a retry decided at tick t with
 * wait w ms goes out at tick t + 1 + round(w / 10). Returns the share of retries among sends in
 * ticks [100, 1100) (after warm-up).
 */
function outageRetryShare(budget: RetryRatioBudget, perTick: number): number {
  const rng = new PyRandom(0);
  const backoff = proportionalJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000 });
  const queue = new Map<number, number[]>(); // tick → attempt numbers of the retries due then
  let sends = 0;
  let retries = 0;
  for (let t = 0; t < 1100; t++) {
    const batch = [...Array<number>(perTick).fill(1), ...(queue.get(t) ?? [])];
    queue.delete(t);
    for (const attempt of batch) {
      const now = t * 10;
      budget.onAttempt(now, attempt > 1);
      if (t >= 100) {
        sends++;
        if (attempt > 1) retries++;
      }
      budget.onFailure(now);
      if (attempt < 4 && budget.allowRetry(now)) {
        const at = t + 1 + Math.round(backoff.delay(attempt, 0, rng) / 10);
        const due = queue.get(at) ?? [];
        due.push(attempt + 1);
        queue.set(at, due);
      }
    }
  }
  return retries / sends;
}

describe('retryRatioBudget in an outage (30 new requests per second per client, as in the article)', () => {
  it('counted at decision, retries stay within 10% of arrivals (9.9%); counted at send, they reach 21%', () => {
    const atDecision = outageRetryShare(retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 0, buckets: 100 }), 3);
    const atSend = outageRetryShare(retryRatioBudget(ARTICLE_RETRY_RATIO), 3);
    expect(atDecision).toBeLessThanOrEqual(0.1);
    expect(atDecision).toBeGreaterThan(0.09);
    // The article measured about 20% of arrivals with its send-time count.
    expect(atSend).toBeGreaterThan(0.18);
    expect(atSend).toBeLessThan(0.25);
  });
});

describe('retryRatioBudget options', () => {
  it.each([
    { input: { ratio: -0.1 }, field: 'ratio' },
    { input: { ratio: 1.5 }, field: 'ratio' },
    { input: { minRetriesPerWindow: -1 }, field: 'minRetriesPerWindow' },
    { input: { minRetriesPerWindow: Infinity }, field: 'minRetriesPerWindow' },
    { input: { windowMs: 0 }, field: 'windowMs' },
    { input: { windowMs: Infinity }, field: 'windowMs' },
    { input: { buckets: 0 }, field: 'buckets' },
    { input: { buckets: 10.5 }, field: 'buckets' },
    { input: { buckets: 10_001 }, field: 'buckets' },
    { input: { countAt: 'sent' }, field: 'countAt' },
  ])('rejects $input', ({ input, field }) => {
    let caught: unknown;
    try {
      retryRatioBudget(input as never);
    } catch (error) {
      caught = error;
    }
    expect(isInvalidOptionError(caught)).toBe(true);
    expect((caught as { field: string }).field).toBe(field);
    expect((caught as Error).message).toMatch(new RegExp(`^retryRatioBudget: ${field} `));
  });
});
