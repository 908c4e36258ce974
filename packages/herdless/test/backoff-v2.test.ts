import { describe, expect, it } from 'vitest';
import { ManualClock, constantBackoff, decorrelatedJitterV2Backoff, retry, type Rng } from 'herdless';
import { PyRandom, backoffFromSpec } from 'herdless/sim';

/** Polly's DecorrelatedJitterBackoffV2, transcribed (its state is the curve's previous value). */
function polly(base: number, draws: number[]): number[] {
  let prev = 0;
  return draws.map((r, attempt) => {
    const t = attempt + r;
    const next = 2 ** t * Math.tanh(Math.sqrt(4 * t));
    const delay = (next - prev) * (1 / 1.4) * base;
    prev = next;
    return delay;
  });
}

const sequence = (xs: number[]): Rng => {
  let i = 0;
  return { random: () => xs[i++ % xs.length]! };
};

describe('decorrelated jitter V2 (Polly)', () => {
  const draws = [0.5, 0.1, 0.9, 0.3, 0.7, 0.05, 0.95, 0.5];

  it('waits equal Polly\'s, draw for draw, below the cap (the state carried is the total so far)', () => {
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: 1e9 });
    const rng = sequence(draws);
    let state = 0;
    const ours = draws.map((_, i) => {
      const d = b.delay(i + 1, state, rng);
      state = b.carry!(state, d);
      return d;
    });
    const theirs = polly(100, draws);
    ours.forEach((d, i) => expect(d).toBeCloseTo(theirs[i]!, 6));
    expect(theirs[0]).toBeCloseTo(89.74, 2);
  });

  it('through retry(): the same waits (decide carries the state)', async () => {
    const clock = new ManualClock();
    const waits: number[] = [];
    const call = retry(() => Promise.reject(Object.assign(new Error('x'), { code: 'ECONNRESET' })), {
      clock,
      maxAttempts: 6,
      random: sequence(draws),
      backoff: decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: 1e9 }),
      onRetry: (e) => void waits.push(e.delayMs),
    }).catch(() => undefined);
    await clock.runAll();
    await call;
    const theirs = polly(100, draws.slice(0, 5));
    waits.forEach((d, i) => expect(d).toBeCloseTo(theirs[i]!, 6));
    expect(waits).toHaveLength(5);
  });

  it('medians grow smoothly (×2 per retry from the third); no wait sits exactly on the cap', () => {
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: 10_000 });
    const rng = new PyRandom(1);
    const by: number[][] = Array.from({ length: 13 }, () => []);
    for (let c = 0; c < 4000; c++) {
      let state = 0;
      for (let n = 1; n <= 12; n++) {
        const d = b.delay(n, state, rng);
        by[n]!.push(d);
        state = b.carry!(state, d);
      }
    }
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    const m = by.slice(1).map(median);
    [90, 114, 201, 402, 807, 1595, 3200].forEach((expected, i) => expect(Math.abs(m[i]! / expected - 1), `retry ${i + 1}`).toBeLessThan(0.05));
    expect(by.flat().filter((d) => d === 10_000)).toHaveLength(0);
    const late = by.slice(10).flat();
    expect(late.every((d) => d >= 5000 && d < 10_000)).toBe(true);
    expect(late.filter((d) => d === 10_000)).toHaveLength(0);
  });

  it('any retry number: finite, in [0, maxBackoffMs)', () => {
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 50, maxBackoffMs: 2000 });
    for (const retry of [1, 2, 30, 1023, 1024, 1e6]) {
      const d = b.delay(retry, 0, sequence([0.999999]));
      expect(Number.isFinite(d) && d >= 0 && d < 2000).toBe(true);
    }
  });

  it('a spec kind, round-trips; options are validated', () => {
    const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 200, maxBackoffMs: 5000 });
    expect(b.toJSON()).toEqual({ kind: 'decorrelated jitter v2', medianFirstDelayMs: 200, maxBackoffMs: 5000 });
    expect(backoffFromSpec(b.toJSON()).toJSON()).toEqual(b.toJSON());
    expect(b.name).toBe('decorrelated jitter v2');
    expect(() => decorrelatedJitterV2Backoff({ medianFirstDelayMs: 0 })).toThrow('decorrelatedJitterV2Backoff: medianFirstDelayMs must be > 0, got 0');
    expect(() => decorrelatedJitterV2Backoff({ medianFirstDelayMs: 500, maxBackoffMs: 100 })).toThrow('decorrelatedJitterV2Backoff: maxBackoffMs must be ≥ medianFirstDelayMs (500), got 100');
    expect(() => backoffFromSpec({ kind: 'decorrelated jitter v2', baseMs: 5 })).toThrow(/baseMs/);
  });

  it('a backoff without carry still gets its last wait back (decorrelated jitter\'s state is unchanged)', async () => {
    const seen: number[] = [];
    const backoff = { ...constantBackoff({ delayMs: 0 }), name: 'spy', maxDelayMs: 7, delay: (_n: number, previous: number) => (seen.push(previous), 7), toJSON: () => ({ kind: 'constant', delayMs: 7 }) as const };
    const clock = new ManualClock();
    const call = retry(() => Promise.reject(Object.assign(new Error('x'), { code: 'ECONNRESET' })), { clock, maxAttempts: 3, backoff }).catch(() => undefined);
    await clock.runAll();
    await call;
    expect(seen).toEqual([0, 7]);
  });
});
