import { describe, expect, it } from 'vitest';
import { circuitBreaker, consecutiveFailures, failureRatio, fullJitterBackoff } from 'herdless';
import { circuitBreakerMachine, type BreakerPermit, type CircuitBreakerMachine } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

function run(m: CircuitBreakerMachine, failed: boolean, now: number): boolean {
  const p = m.acquire(now) as BreakerPermit;
  expect(p.kind).toBe('permit');
  return m.release(p, failed ? 'failure' : 'success', now);
}

describe('consecutiveFailures', () => {
  it('opens on the threshold-th failure in a row; a success resets the count', () => {
    const c = consecutiveFailures({ threshold: 3 }).create();
    expect([true, true, false, true, true].map((f) => c.record(f, 0))).toEqual([false, false, false, false, false]);
    expect(c.snapshot(0)).toEqual({ strategy: 'consecutive failures', consecutiveFailures: 2, threshold: 3 });
    expect(c.record(true, 0)).toBe(true);
    c.reset(0);
    expect(c.snapshot(0).consecutiveFailures).toBe(0);
  });

  it('defaults to 5', () => {
    expect(consecutiveFailures().toJSON()).toEqual({ kind: 'consecutive failures', threshold: 5 });
  });
});

describe('failureRatio', () => {
  it('with minimumCalls 10, the first failure alone does not open the breaker', () => {
    const m = circuitBreakerMachine({ counting: failureRatio({ ratio: 0.5, minimumCalls: 10 }) });
    expect(run(m, true, 0)).toBe(false);
    expect(m.state(0)).toBe('closed');
    expect(m.snapshot(0).counts).toMatchObject({ calls: 1, failures: 1 });
  });

  it('nine failures out of nine do not open it; the tenth call does', () => {
    const c = failureRatio({ ratio: 0.5, minimumCalls: 10 }).create();
    for (let i = 0; i < 9; i++) expect(c.record(true, i)).toBe(false);
    expect(c.record(true, 9)).toBe(true);
  });

  it('opens exactly when failures ÷ calls reaches the ratio (7 of 10 meets 0.7)', () => {
    const c = failureRatio({ ratio: 0.7, minimumCalls: 10 }).create();
    const outcomes = [false, false, false, true, true, true, true, true, true];
    expect(outcomes.map((f, i) => c.record(f, i))).toEqual(Array(9).fill(false));
    expect(c.record(true, 9)).toBe(true); // 7 / 10
    const d = failureRatio({ ratio: 0.7, minimumCalls: 10 }).create();
    for (let i = 0; i < 4; i++) d.record(false, 0);
    for (let i = 0; i < 6; i++) expect(d.record(true, 0)).toBe(false); // 6 / 10
  });

  it('a success never opens it, even at a ratio above the threshold', () => {
    const c = failureRatio({ ratio: 0.5, minimumCalls: 2 }).create();
    expect(c.record(true, 0)).toBe(false);
    c.reset(0);
    for (let i = 0; i < 5; i++) c.record(true, 0);
    c.reset(0);
    c.record(true, 0);
    expect(c.record(false, 0)).toBe(false); // 1 of 2 failed, but the call that ended was a success
  });

  it('the window slides one bucket at a time', () => {
    // windowMs 1000, 10 buckets of 100 ms: a call ending at t stays in the window until the bucket
    // of t + 1000 begins.
    const c = failureRatio({ windowMs: 1000, buckets: 10, minimumCalls: 100 }).create();
    c.record(true, 0);
    c.record(false, 50);
    c.record(true, 150);
    expect(c.snapshot(999)).toMatchObject({ calls: 3, failures: 2 });
    expect(c.snapshot(1000)).toMatchObject({ calls: 1, failures: 1 });
    expect(c.snapshot(1099.9)).toMatchObject({ calls: 1, failures: 1 });
    expect(c.snapshot(1100)).toMatchObject({ calls: 0, failures: 0 });
  });

  it('old failures leave the window and stop counting towards opening', () => {
    const c = failureRatio({ ratio: 0.5, windowMs: 1000, buckets: 10, minimumCalls: 4 }).create();
    for (let i = 0; i < 3; i++) c.record(true, 0);
    expect(c.record(true, 2000)).toBe(false); // the first three have left: 1 call in the window
    expect(c.snapshot(2000)).toMatchObject({ calls: 1, failures: 1 });
  });

  it('a jump far ahead clears everything; a clock stepping back counts in the latest bucket', () => {
    const c = failureRatio({ windowMs: 1000, buckets: 4 }).create();
    c.record(true, 100);
    c.record(true, 1e12);
    expect(c.snapshot(1e12)).toMatchObject({ calls: 1, failures: 1 });
    c.record(false, 5);
    expect(c.snapshot(1e12)).toMatchObject({ calls: 2, failures: 1 });
  });

  it('negative clock readings work (slots wrap correctly)', () => {
    const c = failureRatio({ windowMs: 1000, buckets: 10, minimumCalls: 100 }).create();
    c.record(true, -850); // bucket −9
    c.record(true, -50); // bucket −1
    expect(c.snapshot(0)).toMatchObject({ calls: 2 }); // buckets −9 … 0
    expect(c.snapshot(99)).toMatchObject({ calls: 2 });
    expect(c.snapshot(100)).toMatchObject({ calls: 1 }); // buckets −8 … 1
  });

  it('reset forgets every bucket', () => {
    const c = failureRatio({ minimumCalls: 2 }).create();
    c.record(true, 0);
    c.reset(0);
    expect(c.snapshot(0)).toMatchObject({ calls: 0, failures: 0 });
    expect(c.record(true, 1)).toBe(false);
  });

  it('two breakers built from one strategy do not share counts', () => {
    const s = failureRatio({ minimumCalls: 2, ratio: 1 });
    const a = circuitBreakerMachine({ counting: s });
    const b = circuitBreakerMachine({ counting: s });
    run(a, true, 0);
    expect(run(b, true, 0)).toBe(false);
    expect(run(a, true, 0)).toBe(true);
  });

  it('defaults', () => {
    expect(failureRatio().toJSON()).toEqual({ kind: 'failure ratio', ratio: 0.5, windowMs: 10_000, minimumCalls: 10, buckets: 10 });
  });
});

describe('validation names the field and the value', () => {
  const cases: [string, () => unknown, string][] = [
    ['threshold 0', () => consecutiveFailures({ threshold: 0 }), 'consecutiveFailures: threshold must be ≥ 1, got 0'],
    ['threshold 2.5', () => consecutiveFailures({ threshold: 2.5 }), 'consecutiveFailures: threshold must be an integer, got 2.5'],
    ['ratio 0', () => failureRatio({ ratio: 0 }), 'failureRatio: ratio must be > 0, got 0'],
    ['ratio 1.5', () => failureRatio({ ratio: 1.5 }), 'failureRatio: ratio must be ≤ 1, got 1.5'],
    ['ratio NaN', () => failureRatio({ ratio: Number.NaN }), 'failureRatio: ratio must be a number, got NaN'],
    ['window 0', () => failureRatio({ windowMs: 0 }), 'failureRatio: windowMs must be > 0, got 0'],
    ['window ∞', () => failureRatio({ windowMs: Infinity }), 'failureRatio: windowMs must be finite, got Infinity'],
    ['minimumCalls 0', () => failureRatio({ minimumCalls: 0 }), 'failureRatio: minimumCalls must be ≥ 1, got 0'],
    ['buckets 1001', () => failureRatio({ buckets: 1001 }), 'failureRatio: buckets must be ≤ 1000, got 1001'],
    ['buckets 1.5', () => failureRatio({ buckets: 1.5 }), 'failureRatio: buckets must be an integer, got 1.5'],
    ['options not object', () => failureRatio(3 as never), 'failureRatio: options must be an object, got 3'],
    ['counting', () => circuitBreakerMachine({ counting: {} as never }), 'circuitBreaker: counting must be a counting strategy'],
    ['openDurationMs -1', () => circuitBreakerMachine({ openDurationMs: -1 }), 'circuitBreaker: openDurationMs must be ≥ 0, got -1'],
    ['openDurationMs 2^31', () => circuitBreakerMachine({ openDurationMs: 2 ** 31 }), 'openDurationMs must be ≤ 2147483647, got 2147483648'],
    ['openDurationMs object', () => circuitBreakerMachine({ openDurationMs: {} as never }), 'openDurationMs must be a number of ms or a Backoff'],
    ['openDurationMs string', () => circuitBreakerMachine({ openDurationMs: '5s' as never }), 'openDurationMs must be a number, got "5s"'],
    ['backoff without random', () => circuitBreakerMachine({ openDurationMs: fullJitterBackoff() }), 'circuitBreaker: random is required when openDurationMs is a Backoff'],
    ['halfOpenMaxCalls 0', () => circuitBreakerMachine({ halfOpenMaxCalls: 0 }), 'circuitBreaker: halfOpenMaxCalls must be ≥ 1, got 0'],
    ['halfOpenMaxCalls 1.5', () => circuitBreakerMachine({ halfOpenMaxCalls: 1.5 }), 'halfOpenMaxCalls must be an integer, got 1.5'],
    ['successThreshold 0', () => circuitBreakerMachine({ successThreshold: 0 }), 'circuitBreaker: successThreshold must be ≥ 1, got 0'],
    ['random', () => circuitBreakerMachine({ random: {} as never }), 'circuitBreaker: random must be an object with a random() method'],
    ['onListenerError', () => circuitBreakerMachine({ onListenerError: 1 as never }), 'circuitBreaker: onListenerError must be a function, got 1'],
    ['event type', () => circuitBreakerMachine().on('opened' as never, () => {}), `circuitBreaker.on: type must be 'open', 'half-open' or 'close', got "opened"`],
    ['shell options', () => circuitBreaker(null as never), 'circuitBreaker: options must be an object, got null'],
    ['clock', () => circuitBreaker({ clock: { now: 1 } as never }), 'circuitBreaker: clock must be an object with a now() method'],
    ['isFailure', () => circuitBreaker({ isFailure: true as never }), 'circuitBreaker: isFailure must be a function, got true'],
    ['isResultFailure', () => circuitBreaker({ isResultFailure: 'x' as never }), 'circuitBreaker: isResultFailure must be a function, got "x"'],
  ];
  it.each(cases)('%s', (_name, make, message) => {
    expect(invalidOption(() => make()).message).toContain(message);
  });
});
