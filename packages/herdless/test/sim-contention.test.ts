import { describe, expect, it } from 'vitest';
import { CONTENTION_STRATEGIES, PyRandom, contentionBackoff, contentionRun, runContention } from 'herdless/sim';
import { EventQueue } from '../src/sim/event-queue.js';
import { invalidOption } from './support/invalid-option.js';

// Expected values were computed with scripts/contention-reference.py (CPython 3.11), an independent
// implementation of the same model: `run(strategy, clients, seed)`.
describe('contentionRun: single runs equal the CPython reference to the bit', () => {
  it.each([
    ['exponential', 148.57827395875233, 6, 916.8831953251117, 41],
    ['decorrelated', 161.02589808242647, 6, 392.44641440121615, 39],
    ['equal jitter', 148.52239404018363, 6, 663.5279737559639, 37],
    ['full jitter', 143.92877414501177, 6, 321.82210551873777, 34],
    ['no backoff', 118.57827395875236, 6, 365.72533414408184, 49],
  ] as const)('%s: 3 clients seed 0, 10 clients seed 7', (strategy, time3, calls3, time10, calls10) => {
    expect(contentionRun(strategy, 3, 0)).toEqual({ timeMs: time3, calls: calls3 });
    expect(contentionRun(strategy, 10, 7)).toEqual({ timeMs: time10, calls: calls10 });
  });

  it('one client: four hops, one write, drawn in order from the seed', () => {
    const rng = new PyRandom(0);
    let t = 0;
    for (let i = 0; i < 4; i++) t += Math.abs(rng.normalvariate(10, 2));
    expect(t).toBe(40.90219151244606);
    for (const s of CONTENTION_STRATEGIES) expect(contentionRun(s, 1, 0)).toEqual({ timeMs: t, calls: 1 });
  });

  it('every client succeeds once: calls ≥ clients, and a fixed delay without jitter makes exponential exactly no-backoff plus its waits', () => {
    const rows = runContention(CONTENTION_STRATEGIES, [5], [0, 1, 2]);
    expect(rows.map((r) => r.strategy)).toEqual([...CONTENTION_STRATEGIES]);
    for (const r of rows) expect(r.calls.min).toBeGreaterThanOrEqual(5);
    // Seed 0 of 3 clients: the same draws, the exponential run only adds its waits 10 + 20 ms.
    expect(contentionRun('exponential', 3, 0).timeMs - contentionRun('no backoff', 3, 0).timeMs).toBeCloseTo(30, 9);
  });

  it('the backoffs use the 2015 post\'s formulas: expo(n) = min(2000, 5 × 2^n) ms', () => {
    const rng = new PyRandom(1);
    const expo = contentionBackoff('exponential');
    expect([1, 2, 3, 8, 9, 30].map((n) => expo.delay(n, 0, rng))).toEqual([10, 20, 40, 1280, 2000, 2000]);
    expect(contentionBackoff('no backoff').delay(5, 0, rng)).toBe(0);
    expect(contentionBackoff('decorrelated').toJSON()).toEqual({ kind: 'decorrelated jitter', baseMs: 5, maxBackoffMs: 2000 });
  });

  it.each([
    [() => contentionRun('linear' as never, 3, 0), 'contention: strategy must be one of exponential, decorrelated, equal jitter, full jitter, no backoff, got "linear"'],
    [() => contentionRun('full jitter', 0, 0), 'contention: clients must be'],
    [() => contentionRun('full jitter', 2.5, 0), 'contention: clients must be'],
    [() => contentionRun('full jitter', 3, -1), 'contention: seed must be'],
    [() => contentionRun('full jitter', 3, 0, { capMs: 1 }), 'contention: capMs must be'],
    [() => contentionRun('full jitter', 3, 0, { hopsMs: 1 } as never), 'contention: hopsMs is not an option of contention'],
    [() => runContention(['full jitter'], [3], []), 'contention: seeds must list at least one seed'],
  ])('bad input is refused with the field named (%#)', (fn, message) => {
    expect(invalidOption(fn).message).toContain(message);
  });
});

describe('EventQueue: earliest first, ties in scheduling order', () => {
  it('pops by time, then by the order of push', () => {
    const q = new EventQueue<string>();
    const pushes: [number, string][] = [[5, 'a'], [1, 'b'], [5, 'c'], [3, 'd'], [1, 'e'], [5, 'f'], [0, 'g'], [3, 'h']];
    for (const [t, x] of pushes) q.push(t, x);
    expect(q.size).toBe(8);
    expect(q.peekTime()).toBe(0);
    const out: string[] = [];
    const times: number[] = [];
    while (q.size > 0) {
      out.push(q.pop());
      times.push(q.lastTime);
    }
    expect(out).toEqual(['g', 'b', 'e', 'd', 'h', 'a', 'c', 'f']);
    expect(times).toEqual([0, 1, 1, 3, 3, 5, 5, 5]);
    expect(q.peekTime()).toBe(Infinity);
    expect(() => q.pop()).toThrow(RangeError);
  });

  it('matches a stable sort on 2,000 random pushes interleaved with pops', () => {
    const rng = new PyRandom(3);
    const q = new EventQueue<number>();
    const model: { t: number; id: number }[] = [];
    const popped: number[] = [];
    const expected: number[] = [];
    for (let id = 0; id < 2000; id++) {
      const t = Math.floor(rng.random() * 50) + (id >> 4);
      q.push(t, id);
      model.push({ t, id });
      if (rng.random() < 0.4) {
        popped.push(q.pop());
        model.sort((a, b) => a.t - b.t || a.id - b.id);
        expected.push(model.shift()!.id);
      }
    }
    expect(popped).toEqual(expected);
  });
});
