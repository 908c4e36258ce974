/**
 * The adaptive in-flight limit's arithmetic (Netflix concurrency-limits' GradientLimit), one rule
 * at a time with latencies the test chooses: it is pure, so no clock and no server are needed. The
 * limit under real load, against the best fixed limit, is in server-adaptive-limit.test.ts.
 *
 *     gradient = clamp(tolerance × minLatency / mean, 0.5, 1)
 *     limit ← (1 − smoothing) × limit + smoothing × (limit × gradient + queue)
 *     queue = queueSize, or 0 when the window's peak in flight stayed below the limit (app-limited, RFC 7661)
 */
import { describe, expect, it } from 'vitest';
import { GradientLimit, loadShedder } from 'herdless/server';
import { invalidOption } from './support/invalid-option.js';

/** Feeds one window: each sample is [latency ms, in flight]. */
function window(limit: GradientLimit, samples: readonly (readonly [number, number])[]): number {
  for (const [latency, inFlight] of samples) limit.onSample(latency, inFlight);
  return limit.estimate;
}

describe('GradientLimit: the defaults', () => {
  it('start at 10 within [1, maxInFlight], tolerance 1, queueSize 1, windows of 20 answers, smoothing 0.2', () => {
    const limit = new GradientLimit(undefined, 64);
    expect([limit.estimate, limit.limit, limit.minLimit, limit.maxLimit, limit.tolerance, limit.queueSize, limit.windowSize, limit.smoothing]).toEqual([10, 10, 1, 64, 1, 1, 20, 0.2]);
    expect(limit.minLatencyMs).toBe(Infinity);
    // 19 answers change nothing; the 20th closes the window: gradient 1, 10 in use → 0.8 × 10 + 0.2 × 11.
    for (let i = 0; i < 19; i++) limit.onSample(5, 10);
    expect(limit.estimate).toBe(10);
    limit.onSample(5, 10);
    expect(limit.estimate).toBeCloseTo(10.2, 12);
    expect(limit.limit).toBe(10);
  });

  it('the initial limit is held within [minLimit, maxInFlight]; a minLimit above maxInFlight is maxInFlight', () => {
    expect(new GradientLimit({ initialLimit: 50 }, 8).estimate).toBe(8);
    expect(new GradientLimit({ initialLimit: 2, minLimit: 5 }, 8).estimate).toBe(5);
    const tight = new GradientLimit({ minLimit: 20 }, 8);
    expect([tight.minLimit, tight.estimate]).toEqual([8, 8]);
  });
});

describe('GradientLimit: one window', () => {
  it('latency at its lowest: the limit grows by queueSize × smoothing', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 0.5, queueSize: 3 }, 100);
    expect(window(limit, [[10, 9], [10, 10]])).toBe(11.5); // 0.5 × 10 + 0.5 × (10 + 3)
  });

  it('latency doubled: the gradient is 0.5 (mean 20 against the fastest 10)', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 0.5, queueSize: 2 }, 100);
    expect(window(limit, [[10, 6], [30, 10]])).toBe(8.5); // 0.5 × 10 + 0.5 × (10 × 0.5 + 2)
    expect(limit.limit).toBe(8);
    expect(limit.minLatencyMs).toBe(10);
  });

  it('the gradient is never below 0.5, however slow the window', () => {
    const limit = new GradientLimit({ initialLimit: 40, windowSize: 2, smoothing: 1, queueSize: 0 }, 100);
    expect(window(limit, [[10, 40], [1000, 40]])).toBe(20); // 10 / 505 → 0.5
  });

  it('tolerance: latency may rise that many times before the limit shrinks', () => {
    const tolerant = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 0, tolerance: 1.5 }, 100);
    expect(window(tolerant, [[10, 10], [30, 10]])).toBe(7.5); // 1.5 × 10 / 20 = 0.75
    const more = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 0, tolerance: 2 }, 100);
    expect(window(more, [[10, 10], [14, 10]])).toBe(10); // 2 × 10 / 12 → capped at 1
  });

  it('app-limited: a window whose peak in flight stayed below the limit does not grow it; one that filled it does', () => {
    const idle = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 1 }, 100);
    expect(window(idle, [[10, 9], [10, 1]])).toBe(10); // peak 9 < 10
    const full = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 1 }, 100);
    expect(window(full, [[10, 1], [10, 10]])).toBe(11); // peak 10 = the limit
  });

  it('the peak in flight is the window\'s own: the next window starts from 0', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 1 }, 100);
    expect(window(limit, [[10, 10], [10, 10]])).toBe(11);
    expect(window(limit, [[10, 2], [10, 2]])).toBe(11); // 2 < 11: no growth, 10 is forgotten
  });

  it('the mean is the window\'s own: the sum restarts with each window', () => {
    const limit = new GradientLimit({ initialLimit: 20, windowSize: 2, smoothing: 1, queueSize: 0 }, 100);
    expect(window(limit, [[10, 20], [30, 20]])).toBe(10); // mean 20: × 0.5
    expect(window(limit, [[10, 20], [10, 20]])).toBe(10); // mean 10 (not 15 over four): × 1
  });

  it('the fastest answer is kept for the object\'s life', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 1, smoothing: 1, queueSize: 0 }, 100);
    window(limit, [[8, 10]]);
    window(limit, [[40, 10]]); // × 0.5
    window(limit, [[16, 10]]); // × 0.5: against 8, not 40
    expect([limit.minLatencyMs, limit.estimate]).toEqual([8, 2.5]);
  });

  it('stays within [minLimit, maxInFlight]', () => {
    const limit = new GradientLimit({ initialLimit: 10, minLimit: 3, windowSize: 1, smoothing: 1, queueSize: 5 }, 12);
    expect(window(limit, [[10, 10]])).toBe(12); // 15 → the ceiling
    expect(window(limit, [[10, 12]])).toBe(12);
    // Slow and app-limited (1 in use): halved each window, 12 → 6 → 3, and not below minLimit.
    expect(window(limit, [[1000, 1]])).toBe(6);
    expect(window(limit, [[1000, 1]])).toBe(3);
    expect(window(limit, [[1000, 1]])).toBe(3);
  });

  it('answers without a usable latency (NaN, negative, infinite) are not counted', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 2, smoothing: 1, queueSize: 1 }, 100);
    for (const bad of [Number.NaN, -1, Infinity]) limit.onSample(bad, 10);
    expect([limit.estimate, limit.minLatencyMs]).toEqual([10, Infinity]);
    limit.onSample(10, 10);
    expect(limit.estimate).toBe(10); // one answer of two
    limit.onSample(10, 10);
    expect(limit.estimate).toBe(11);
  });

  it('a latency of 0 ms counts', () => {
    const limit = new GradientLimit({ initialLimit: 10, windowSize: 1, smoothing: 1, queueSize: 1 }, 100);
    limit.onSample(0, 10);
    expect(limit.minLatencyMs).toBe(0);
  });
});

describe('GradientLimit: options', () => {
  it.each([
    [{ minLimit: 0 }, 'adaptiveLimit.minLimit', 0],
    [{ minLimit: 1.5 }, 'adaptiveLimit.minLimit', 1.5],
    [{ initialLimit: 0.5 }, 'adaptiveLimit.initialLimit', 0.5],
    [{ tolerance: 0.9 }, 'adaptiveLimit.tolerance', 0.9],
    [{ tolerance: 10.5 }, 'adaptiveLimit.tolerance', 10.5],
    [{ queueSize: -1 }, 'adaptiveLimit.queueSize', -1],
    [{ queueSize: 1001 }, 'adaptiveLimit.queueSize', 1001],
    [{ windowSize: 0 }, 'adaptiveLimit.windowSize', 0],
    [{ windowSize: 10_001 }, 'adaptiveLimit.windowSize', 10_001],
    [{ windowSize: 2.5 }, 'adaptiveLimit.windowSize', 2.5],
    [{ smoothing: 0 }, 'adaptiveLimit.smoothing', 0],
    [{ smoothing: 1.01 }, 'adaptiveLimit.smoothing', 1.01],
  ])('%o is refused, naming %s', (options, field, value) => {
    const error = invalidOption(() => new GradientLimit(options, 64));
    expect([error.field, error.value]).toEqual([field, value]);
    expect(error.message).toContain('loadShedder');
  });

  it('the edges of each range are accepted', () => {
    const low = new GradientLimit({ minLimit: 1, initialLimit: 1, tolerance: 1, queueSize: 0, windowSize: 1, smoothing: 1 }, 64);
    expect([low.minLimit, low.estimate, low.tolerance, low.queueSize, low.windowSize, low.smoothing]).toEqual([1, 1, 1, 0, 1, 1]);
    const high = new GradientLimit({ tolerance: 10, queueSize: 1000, windowSize: 10_000, smoothing: 1e-9 }, 64);
    expect([high.tolerance, high.queueSize, high.windowSize, high.smoothing]).toEqual([10, 1000, 10_000, 1e-9]);
  });

  it('an unknown option is refused as adaptiveLimit\'s, with the closest and the known ones listed; a non-object adaptiveLimit is refused', () => {
    const typo = invalidOption(() => new GradientLimit({ tolerence: 2 } as never, 64));
    expect([typo.field, typo.value]).toEqual(['tolerence', 2]);
    expect(typo.message).toBe('adaptiveLimit: tolerence is not an option of adaptiveLimit (did you mean tolerance? options: minLimit, initialLimit, tolerance, queueSize, windowSize, smoothing), got 2');
    // Through the shedder, the same: the key is adaptiveLimit's, not loadShedder's.
    expect(invalidOption(() => loadShedder({ maxInFlight: 4, adaptiveLimit: { windowsize: 5 } as never })).message).toBe(
      'adaptiveLimit: windowsize is not an option of adaptiveLimit (did you mean windowSize? options: minLimit, initialLimit, tolerance, queueSize, windowSize, smoothing), got 5',
    );
    expect(invalidOption(() => loadShedder({ maxInFlight: 4, adaptiveLimit: 5 as never })).field).toBe('adaptiveLimit');
    const direct = invalidOption(() => new GradientLimit(5 as never, 64));
    expect(direct.message).toBe('adaptiveLimit: adaptiveLimit must be an object, got 5');
  });
});
