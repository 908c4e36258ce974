import { describe, expect, it } from 'vitest';
import { constantBackoff, type Backoff } from 'herdless';
import { ARTICLE_SERVER, runScenario } from 'herdless/sim';
import { twoClientScenario } from './support/sim-scenario.js';

// One focused test per rule of the engine (the lab's model: S1–S4 for the engine, H1–H8 for the
// herd experiment), so that a broken rule is named by the test that catches it, not only by a
// golden table drifting. Each states its rule in its title.

/** A backoff that is not a ConstantBackoff: the engine takes its general path (S3 per request). */
const fixed = (ms: number): Backoff => ({ name: `fixed ${ms} ms`, maxDelayMs: ms, delay: () => ms, toJSON: () => ({ kind: 'constant', delayMs: ms }) });

/** 2 clients at tick 0, capacity 1 per tick, a constant 10 ms backoff (see twoClientScenario). */
const base = twoClientScenario;

/** The tick at which the one retry of a 2-client, capacity-1 run arrives, for a given wait. */
const retryTick = (backoff: Backoff): number => {
  const r = runScenario(base({ policy: { name: 'x', backoff, maxAttempts: Infinity } }), 0, { perTick: true });
  const ticks = Array.from(r.perTick!.retries).flatMap((n, t) => (n > 0 ? [t] : []));
  expect(ticks).toHaveLength(1);
  return ticks[0]!;
};

describe('S3: a retry decided at tick t joins tick t + 1 + round(wait / tick), halves to even', () => {
  it.each([
    [0, 1],
    [4.9, 1],
    [5, 1], // 0.5 → 0 (even)
    [5.1, 2],
    [15, 3], // 1.5 → 2
    [25, 3], // 2.5 → 2 (even), not 3 as Math.round gives
    [35, 5], // 3.5 → 4
    [45, 5], // 4.5 → 4 (even)
    [55, 7], // 5.5 → 6
  ])('a custom backoff of %d ms: the retry arrives at tick %d', (ms, tick) => {
    expect(retryTick(fixed(ms))).toBe(tick);
  });

  it('the constant-backoff path agrees with the general path for every half', () => {
    for (const ms of [5, 15, 25, 35, 45]) expect(retryTick(constantBackoff({ delayMs: ms }))).toBe(retryTick(fixed(ms)));
  });

  it('a retry due at or past the horizon is never sent', () => {
    // Decided at tick 0 with a 980 ms wait: due at tick 99, the last of a 1 s horizon: sent.
    const sent = runScenario(base({ policy: { name: 'x', backoff: fixed(980), maxAttempts: Infinity } }), 0);
    expect(sent.requests).toBe(3 - 0 - 0); // 2 first tries + 1 retry
    // 990 ms: due at tick 100 = the horizon: never sent, the run is unfinished.
    const unsent = runScenario(base({ policy: { name: 'x', backoff: fixed(990), maxAttempts: Infinity } }), 0);
    expect(unsent.requests).toBe(2);
    expect(unsent.finished).toBe(false);
  });
});

describe('S2(b): the server crashes when the last window holds MORE than crashLimit arrivals', () => {
  const crashes = (clients: number, crashLimit: number) =>
    runScenario(base({ clients, server: { ...ARTICLE_SERVER, startupMs: 0, crashLimit }, policy: { name: 'no retry', backoff: constantBackoff(), maxAttempts: 1 } }), 0).crashes;
  it('exactly crashLimit arrivals in one tick: no crash', () => {
    expect(crashes(100, 100)).toBe(0);
    expect(crashes(7, 7)).toBe(0);
  });
  it('crashLimit + 1 arrivals: one crash', () => {
    expect(crashes(101, 100)).toBe(1);
    expect(crashes(8, 7)).toBe(1);
  });
  it('the window spans windowTicks ticks: arrivals spread over it add up', () => {
    // 101 clients spread over 50 ms (5 ticks) all fall in one 100 ms window: one crash.
    const r = runScenario(base({ clients: 101, arrivals: { kind: 'together', spreadMs: 50 }, server: { ...ARTICLE_SERVER, startupMs: 0 }, policy: { name: 'no retry', backoff: constantBackoff(), maxAttempts: 1 } }), 0);
    expect(r.crashes).toBe(1);
  });
});

describe('S2(c): while down every request fails, with no random draw', () => {
  it('a start-up period fails everything before it ends and is not a crash (H2)', () => {
    const r = runScenario(base({ clients: 3, server: { ...ARTICLE_SERVER, capacityPerTick: 5, startupMs: 200 }, policy: { name: 'x', backoff: constantBackoff({ delayMs: 100 }), maxAttempts: Infinity } }), 0, { perTick: true });
    expect(Array.from(r.perTick!.successes.slice(0, 20)).every((n) => n === 0)).toBe(true);
    expect(r.crashes).toBe(0);
    expect(r.perTick!.successes[22]).toBe(3); // tries at 0, 11 (fail), 22 (up): all three succeed
  });
});

describe('S2(d): an up server serves min(capacity, n) of a tick\'s batch', () => {
  it('5 per tick: 12 together take ticks 0, 2 (after 10 ms) and 4', () => {
    const r = runScenario(base({ clients: 12, server: { ...ARTICLE_SERVER, capacityPerTick: 5, startupMs: 0 } }), 0, { perTick: true });
    expect(Array.from(r.perTick!.successes.slice(0, 5))).toEqual([5, 0, 5, 0, 2]);
  });
});

describe('H6: the run stops after the tick in which the last client succeeds; finish = (t + 1) × tick', () => {
  it('one client served at tick 0 finishes at 10 ms', () => {
    const r = runScenario(base({ clients: 1 }), 0);
    expect(r.finishMs).toBe(10);
    expect(r.finished).toBe(true);
  });
});
