import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constantBackoff, decorrelatedJitterBackoff, equalJitterBackoff, exponentialBackoff, fullJitterBackoff, proportionalJitterBackoff, type Backoff, type Rng } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';
import { PyRandom, backoffFromSpec } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

const fixed = (x: number): Rng => ({ random: () => x });

describe('values', () => {
  it('constant', () => {
    expect(constantBackoff().delay(5, 0, fixed(0.5))).toBe(0);
    expect(constantBackoff({ delayMs: 1000 }).delay(1, 0, fixed(0.5))).toBe(1000);
    expect(constantBackoff().name).toBe('immediate');
  });

  it('exponential: initial × multiplier^(n−1), capped', () => {
    const b = exponentialBackoff({ initialBackoffMs: 200, maxBackoffMs: 10_000 });
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => b.delay(n, 0, fixed(0)))).toEqual([200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
  });

  it('full jitter is v × random()', () => {
    const b = fullJitterBackoff({ initialBackoffMs: 200 });
    expect(b.delay(3, 0, fixed(0.25))).toBe(200);
    expect(b.delay(3, 0, fixed(0))).toBe(0);
  });

  it('equal jitter is v/2 + v/2 × random()', () => {
    const b = equalJitterBackoff({ initialBackoffMs: 200 });
    expect(b.delay(2, 0, fixed(0))).toBe(200);
    expect(b.delay(2, 0, fixed(0.5))).toBe(300);
  });

  it('proportional jitter is gRPC ±20%', () => {
    const b = proportionalJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000 });
    expect(b.delay(2, 0, fixed(0))).toBeCloseTo(160, 9);
    expect(b.delay(2, 0, fixed(0.5))).toBeCloseTo(200, 9);
    expect(b.delay(10, 0, fixed(0.999999))).toBeCloseTo(1200, 3);
    expect(b.maxDelayMs).toBe(1200);
  });

  it('equal jitter never exceeds v, even where v/2 rounds (subnormal values)', () => {
    const b = equalJitterBackoff({ initialBackoffMs: 7.4e-323, maxBackoffMs: 7.4e-323 });
    expect(b.delay(1, 0, fixed(0.999999))).toBeLessThanOrEqual(7.4e-323);
  });

  it('decorrelated: uniform(base, 3 × previous), capped; the state is the caller’s', () => {
    const b = decorrelatedJitterBackoff({ baseMs: 100, maxBackoffMs: 10_000 });
    expect(b.delay(1, 0, fixed(0.5))).toBe(200); // previous starts at base: uniform(100, 300)
    expect(b.delay(2, 200, fixed(0.5))).toBe(350); // uniform(100, 600)
    expect(b.delay(9, 9000, fixed(0.9))).toBe(10_000);
    // Two calls sharing the object do not share state.
    expect(b.delay(1, 0, fixed(0.5))).toBe(200);
  });

  it('edge cases: no cap at retry 25, multiplier 100 at retry 200', () => {
    const noCap = exponentialBackoff({ initialBackoffMs: 100, maxBackoffMs: Infinity });
    expect(noCap.delay(25, 0, fixed(0))).toBe(1_677_721_600);
    expect(noCap.delay(26, 0, fixed(0))).toBe(MAX_DELAY_MS);
    expect(noCap.delay(1e6, 0, fixed(0))).toBe(MAX_DELAY_MS);
    expect(exponentialBackoff({ initialBackoffMs: 100, backoffMultiplier: 100, maxBackoffMs: 5000 }).delay(200, 0, fixed(0))).toBe(5000);
    expect(exponentialBackoff({ initialBackoffMs: 0, maxBackoffMs: Infinity }).delay(2000, 0, fixed(0))).toBe(0);
  });

  it('matches CPython for the article’s formulas (seconds × 1000)', () => {
    // python: r = random.Random(0); [min(10, 0.1*2**n) * r.random() ... ] computed in ms here.
    const r = new PyRandom(0);
    const b = fullJitterBackoff({ initialBackoffMs: 200, maxBackoffMs: 10_000 });
    expect(b.delay(1, 0, r)).toBeCloseTo(200 * 0.8444218515250481, 9);
  });
});

const strategies: [string, (p: { initial: number; mult: number; cap: number }) => Backoff][] = [
  ['exponential', (p) => exponentialBackoff({ initialBackoffMs: p.initial, backoffMultiplier: p.mult, maxBackoffMs: p.cap })],
  ['full jitter', (p) => fullJitterBackoff({ initialBackoffMs: p.initial, backoffMultiplier: p.mult, maxBackoffMs: p.cap })],
  ['equal jitter', (p) => equalJitterBackoff({ initialBackoffMs: p.initial, backoffMultiplier: p.mult, maxBackoffMs: p.cap })],
  ['proportional jitter', (p) => proportionalJitterBackoff({ initialBackoffMs: p.initial, backoffMultiplier: p.mult, maxBackoffMs: p.cap })],
  ['decorrelated jitter', (p) => decorrelatedJitterBackoff({ baseMs: Math.max(p.initial, 1), maxBackoffMs: Math.max(p.cap, p.initial, 1) })],
  ['constant', (p) => constantBackoff({ delayMs: Math.min(p.initial, MAX_DELAY_MS) })],
];

describe('bounds (property)', () => {
  const params = fc
    .record({
      initial: fc.double({ min: 0, max: 1e7, noNaN: true }),
      mult: fc.double({ min: 0.01, max: 1000, noNaN: true }),
      extra: fc.oneof(fc.double({ min: 0, max: 1e12, noNaN: true }), fc.constant(Infinity)),
    })
    .map(({ initial, mult, extra }) => ({ initial, mult, cap: initial + extra }));
  const retry = fc.oneof(fc.constantFrom(1, 30, 1100, 1_000_000), fc.integer({ min: 1, max: 2 ** 31 }));
  const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it.each(strategies)('%s: every delay finite, ≥ 0, ≤ maxDelayMs ≤ 2^31−1', (_name, make) => {
    fc.assert(
      fc.property(params, retry, unit, fc.double({ min: 0, max: 1e10, noNaN: true }), (p, n, u, previous) => {
        const b = make(p);
        const d = b.delay(n, previous, fixed(u));
        expect(Number.isFinite(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(b.maxDelayMs);
        expect(b.maxDelayMs).toBeLessThanOrEqual(MAX_DELAY_MS);
        if (['exponential', 'full jitter', 'equal jitter'].includes(b.name)) expect(d).toBeLessThanOrEqual(Math.min(p.cap, MAX_DELAY_MS));
      }),
      { numRuns: 300 },
    );
  });

  it('toJSON round-trips through backoffFromSpec', () => {
    fc.assert(
      fc.property(params, fc.integer({ min: 0, max: strategies.length - 1 }), (p, i) => {
        const b = strategies[i]![1](p);
        expect(backoffFromSpec(JSON.parse(JSON.stringify(b.toJSON()))).toJSON()).toEqual(b.toJSON());
      }),
    );
  });
});

describe('validation names the field and the value', () => {
  const cases: [string, () => unknown, string][] = [
    ['negative initial', () => exponentialBackoff({ initialBackoffMs: -1 }), 'exponentialBackoff: initialBackoffMs must be ≥ 0, got -1'],
    ['NaN initial', () => fullJitterBackoff({ initialBackoffMs: Number.NaN }), 'fullJitterBackoff: initialBackoffMs must be a number, got NaN'],
    ['infinite initial', () => equalJitterBackoff({ initialBackoffMs: Infinity }), 'equalJitterBackoff: initialBackoffMs must be finite, got Infinity'],
    ['cap below base', () => exponentialBackoff({ initialBackoffMs: 500, maxBackoffMs: 100 }), 'exponentialBackoff: maxBackoffMs must be ≥ initialBackoffMs (500), got 100'],
    ['zero multiplier', () => exponentialBackoff({ backoffMultiplier: 0 }), 'exponentialBackoff: backoffMultiplier must be > 0, got 0'],
    ['string', () => exponentialBackoff({ initialBackoffMs: '100' as never }), 'initialBackoffMs must be a number, got "100"'],
    ['jitter > 1', () => proportionalJitterBackoff({ jitter: 1.5 }), 'proportionalJitterBackoff: jitter must be ≤ 1, got 1.5'],
    ['decorrelated base 0', () => decorrelatedJitterBackoff({ baseMs: 0 }), 'decorrelatedJitterBackoff: baseMs must be > 0, got 0'],
    ['decorrelated cap', () => decorrelatedJitterBackoff({ baseMs: 50, maxBackoffMs: 10 }), 'maxBackoffMs must be ≥ baseMs (50), got 10'],
    ['constant negative', () => constantBackoff({ delayMs: -5 }), 'constantBackoff: delayMs must be ≥ 0, got -5'],
    ['constant too long', () => constantBackoff({ delayMs: 2 ** 31 }), 'delayMs must be ≤ 2147483647, got 2147483648'],
    ['spec kind', () => backoffFromSpec({ kind: 'jittery' }), 'backoff.kind must be one of'],
    ['spec unknown field', () => backoffFromSpec({ kind: 'full jitter', base: 3 }), 'backoff.base is not an option of "full jitter"'],
    ['spec nested', () => backoffFromSpec({ kind: 'full jitter', maxBackoffMs: -1 }, 'policy.backoff'), 'policy.backoff.maxBackoffMs must be ≥ 0, got -1'],
    ['spec not object', () => backoffFromSpec(3), 'backoff must be an object with a "kind", got 3'],
  ];
  it.each(cases)('%s', (_name, make, message) => {
    expect(invalidOption(() => make()).message).toContain(message);
  });
});

describe('proportional jitter: capAfterJitter', () => {
  const hi: Rng = { random: () => 0.999999 };
  it('gRPC\'s form exceeds maxBackoffMs by up to 20% by design; capAfterJitter never does', () => {
    const grpc = proportionalJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000 });
    const capped = proportionalJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 1000, capAfterJitter: true });
    expect(grpc.delay(10, 0, hi)).toBeCloseTo(1199.9996, 3);
    expect(grpc.maxDelayMs).toBe(1200);
    expect(capped.delay(10, 0, hi)).toBe(1000);
    expect(capped.maxDelayMs).toBe(1000);
    // Below the cap, the two agree to the bit.
    expect(capped.delay(2, 0, hi)).toBe(grpc.delay(2, 0, hi));
  });

  it('round-trips through its spec; the spec of gRPC\'s form is unchanged', () => {
    const capped = proportionalJitterBackoff({ maxBackoffMs: 1000, capAfterJitter: true });
    expect(capped.toJSON()).toEqual({ kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 1000, jitter: 0.2, capAfterJitter: true });
    expect(backoffFromSpec(capped.toJSON()).maxDelayMs).toBe(1000);
    expect(proportionalJitterBackoff().toJSON()).toEqual({ kind: 'proportional jitter', initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 10_000, jitter: 0.2 });
    expect(() => proportionalJitterBackoff({ capAfterJitter: 'yes' as never })).toThrow('proportionalJitterBackoff: capAfterJitter must be a boolean, got "yes"');
  });
});
