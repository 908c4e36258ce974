import { describe, expect, it } from 'vitest';
import { backoffFromSpec } from 'herdless/sim';
import { constantBackoff, decorrelatedJitterBackoff, decorrelatedJitterV2Backoff, equalJitterBackoff, exponentialBackoff, fullJitterBackoff, proportionalJitterBackoff, type Rng } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';

// The edges of the backoff options and formulas that the value tables in backoff.test.ts do not
// reach: a default cap below a large first wait, a cap equal to the first wait, a shrinking series,
// the first retry number past the lookup table, and a Polly wait landing exactly on the cap.
const fixed = (x: number): Rng => ({ random: () => x });

describe('the default cap never sits below the first wait', () => {
  it('exponential family: maxBackoffMs defaults to max(10 000, initialBackoffMs)', () => {
    for (const make of [exponentialBackoff, fullJitterBackoff, equalJitterBackoff, proportionalJitterBackoff]) {
      const b = make({ initialBackoffMs: 20_000 });
      expect(b.toJSON()).toMatchObject({ initialBackoffMs: 20_000, maxBackoffMs: 20_000 });
    }
    expect(exponentialBackoff({ initialBackoffMs: 20_000 }).delay(3, 0, fixed(0))).toBe(20_000);
    expect(exponentialBackoff({ initialBackoffMs: 500 }).maxDelayMs).toBe(10_000);
  });

  it('decorrelated jitter (both forms): maxBackoffMs defaults to max(10 000, the base)', () => {
    expect(decorrelatedJitterBackoff({ baseMs: 20_000 }).maxDelayMs).toBe(20_000);
    expect(decorrelatedJitterBackoff({ baseMs: 500 }).maxDelayMs).toBe(10_000);
    expect(decorrelatedJitterV2Backoff({ medianFirstDelayMs: 20_000 }).maxDelayMs).toBe(20_000);
    expect(decorrelatedJitterV2Backoff({ medianFirstDelayMs: 500 }).maxDelayMs).toBe(10_000);
  });
});

describe('a cap equal to the first wait is valid', () => {
  it('exponential: every wait is that value', () => {
    const b = exponentialBackoff({ initialBackoffMs: 500, maxBackoffMs: 500 });
    expect([1, 2, 3, 100].map((n) => b.delay(n, 0, fixed(0)))).toEqual([500, 500, 500, 500]);
  });

  it('decorrelated jitter: uniform(500, 1500) held to 500', () => {
    expect(decorrelatedJitterBackoff({ baseMs: 500, maxBackoffMs: 500 }).delay(1, 0, fixed(0.5))).toBe(500);
  });

  it('decorrelated jitter V2: accepted, and its cap is that value', () => {
    expect(decorrelatedJitterV2Backoff({ medianFirstDelayMs: 500, maxBackoffMs: 500 }).maxDelayMs).toBe(500);
  });
});

describe('exponential: the looked-up values', () => {
  it('a multiplier below 1 shrinks the waits even when the first wait is the cap', () => {
    // The lookup stops filling once a non-decreasing series reaches the cap; a shrinking one that
    // starts on it must not stop there.
    const b = exponentialBackoff({ initialBackoffMs: 1000, backoffMultiplier: 0.5, maxBackoffMs: 1000 });
    expect([1, 2, 3, 4].map((n) => b.delay(n, 0, fixed(0)))).toEqual([1000, 500, 250, 125]);
  });

  it('retries 63 and 64 (the last looked up, the first computed) of a slow series below its cap', () => {
    const b = exponentialBackoff({ initialBackoffMs: 100, backoffMultiplier: 1.01, maxBackoffMs: 1e9 });
    expect(b.delay(63, 0, fixed(0))).toBe(100 * 1.01 ** 62);
    expect(b.delay(64, 0, fixed(0))).toBe(100 * 1.01 ** 63);
    expect(b.delay(65, 0, fixed(0))).toBe(100 * 1.01 ** 64);
  });
});

describe('proportional jitter: its largest delay', () => {
  it('maxBackoffMs × (1 + jitter), held to 2^31 − 1 ms; the cap itself with capAfterJitter', () => {
    expect(proportionalJitterBackoff({ maxBackoffMs: 1000, jitter: 0.5 }).maxDelayMs).toBe(1500);
    expect(proportionalJitterBackoff({ maxBackoffMs: Infinity }).maxDelayMs).toBe(MAX_DELAY_MS);
    expect(proportionalJitterBackoff({ maxBackoffMs: MAX_DELAY_MS }).delay(40, 0, fixed(0.999999))).toBe(MAX_DELAY_MS);
    expect(proportionalJitterBackoff({ maxBackoffMs: 1000, jitter: 0.5, capAfterJitter: true }).maxDelayMs).toBe(1000);
  });
});

describe('constant backoff', () => {
  it('names its wait, and that wait is its largest', () => {
    const b = constantBackoff({ delayMs: 1000 });
    expect(b.name).toBe('constant 1000 ms');
    expect(b.maxDelayMs).toBe(1000);
    expect(b.toJSON()).toEqual({ kind: 'constant', delayMs: 1000 });
  });
});

describe('decorrelated jitter V2: a wait the curve puts exactly on the cap', () => {
  it('is placed in [cap / 2, cap) by the same draw, like any wait past the cap', () => {
    // With draw 0 before retry 3 the curve's total is X = 2^2 × tanh(√8) / 1.4 × 100. Carrying X / 2
    // with a cap of X / 2 makes the raw wait X − X / 2 = X / 2: exactly the cap (all exact halvings).
    const x = 2 ** 2 * Math.tanh(Math.sqrt(4 * 2)) * (1 / 1.4) * 100;
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: x / 2 });
    expect(b.delay(3, x / 2, fixed(0))).toBe(x / 4);
  });
});

describe('decorrelated jitter V2: a carried total above the curve', () => {
  it('gives a wait of 0, never a negative one', () => {
    // The curve's total before retry 1 with draw 0.5 is about 89.7 ms: a call that has already
    // waited 1000 ms in all (a value passed in by hand) waits 0.
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: 10_000 });
    expect(b.delay(1, 1000, fixed(0.5))).toBe(0);
  });

  it('maxBackoffMs Infinity means no cap, held to 2^31 − 1 ms', () => {
    expect(decorrelatedJitterV2Backoff({ maxBackoffMs: Infinity }).maxDelayMs).toBe(MAX_DELAY_MS);
    expect(decorrelatedJitterBackoff({ maxBackoffMs: Infinity }).maxDelayMs).toBe(MAX_DELAY_MS);
  });
});

describe('the option errors name the factory and the field', () => {
  it.each([
    [() => exponentialBackoff(5 as never), 'exponentialBackoff: options must be an object, got 5'],
    [() => proportionalJitterBackoff(5 as never), 'proportionalJitterBackoff: options must be an object, got 5'],
    [() => constantBackoff('x' as never), 'constantBackoff: options must be an object, got "x"'],
    [() => decorrelatedJitterBackoff(5 as never), 'decorrelatedJitterBackoff: options must be an object, got 5'],
    [() => decorrelatedJitterV2Backoff(5 as never), 'decorrelatedJitterV2Backoff: options must be an object, got 5'],
    [() => decorrelatedJitterBackoff({ maxBackoffMs: -1 }), 'decorrelatedJitterBackoff: maxBackoffMs must be ≥ 0, got -1'],
    [() => decorrelatedJitterV2Backoff({ maxBackoffMs: -1 }), 'decorrelatedJitterV2Backoff: maxBackoffMs must be ≥ 0, got -1'],
    [() => backoffFromSpec({ kind: 'constant', delayMs: -1 }), 'backoffFromSpec: backoff.delayMs must be ≥ 0, got -1'],
  ])('case %#', (make, message) => {
    expect(make).toThrow(message);
  });
});

describe('the exponential family exposes its normalised options', () => {
  it('initialBackoffMs, backoffMultiplier, maxBackoffMs; jitter and capAfterJitter for the proportional form', () => {
    const b = proportionalJitterBackoff({ initialBackoffMs: 50, backoffMultiplier: 1.6, maxBackoffMs: Infinity, jitter: 0.3, capAfterJitter: true });
    expect({ ...pick(b, ['initialBackoffMs', 'backoffMultiplier', 'maxBackoffMs', 'jitter', 'capAfterJitter']) }).toEqual({
      initialBackoffMs: 50,
      backoffMultiplier: 1.6,
      maxBackoffMs: MAX_DELAY_MS,
      jitter: 0.3,
      capAfterJitter: true,
    });
  });
});

function pick(o: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]));
}
