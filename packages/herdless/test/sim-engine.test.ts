import { describe, expect, it } from 'vitest';
import { constantBackoff, fullJitterBackoff, type Backoff, type RetryBudget } from 'herdless';
import { inFreshProcess } from './support/fresh-process.js';
import { ARTICLE_SERVER, runScenario, type Scenario } from 'herdless/sim';

const base = (over: Partial<Scenario> = {}): Scenario => ({
  clients: 3,
  arrivals: { kind: 'together', spreadMs: 0 },
  server: { ...ARTICLE_SERVER, capacityPerTick: 1, startupMs: 0 },
  policy: { name: 'constant 10 ms', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: Infinity },
  horizonMs: 1000,
  stopWhenIdle: true,
  ...over,
});

describe('engine rules', () => {
  it('capacity 1 per tick, 3 clients at t=0, retry after 10 ms: one success per tick', () => {
    // tick 0: 3 arrive, 1 succeeds; the 2 failures retry at 0 + 1 + round(10/10) = tick 2;
    // tick 2: 2 arrive, 1 succeeds, 1 retries at tick 4; tick 4: the last succeeds.
    const r = runScenario(base(), 0, { perTick: true });
    expect(r.finished).toBe(true);
    expect(r.finishMs).toBe(50);
    expect(r.requests).toBe(6);
    expect(Array.from(r.perTick!.arrivals.slice(0, 5))).toEqual([3, 0, 2, 0, 1]);
    expect(Array.from(r.perTick!.successes.slice(0, 5))).toEqual([1, 0, 1, 0, 1]);
    expect(Array.from(r.perTick!.retries.slice(0, 5))).toEqual([0, 0, 2, 0, 1]);
    expect(r.crashes).toBe(0);
  });

  it('a wait rounds half to even: 15 ms → 2 ticks, 25 ms → 2 ticks, 35 ms → 4 ticks', () => {
    for (const [delayMs, tick] of [[15, 3], [25, 3], [35, 5]] as const) {
      const r = runScenario(base({ clients: 2, policy: { name: 'c', backoff: constantBackoff({ delayMs }), maxAttempts: Infinity } }), 0, { perTick: true });
      expect(r.perTick!.arrivals[tick]).toBe(1);
    }
  });

  it('crashes when the window holds more than crashLimit, and stays down for restartMs', () => {
    const r = runScenario(base({ clients: 101, server: { ...ARTICLE_SERVER, startupMs: 0 } }), 0, { perTick: true });
    expect(r.crashTicks[0]).toBe(0);
    // Down for ticks 0..99: no success before tick 100.
    expect(r.perTick!.successes.slice(0, 100).every((x) => x === 0)).toBe(true);
  });

  it('an outage is downtime, not a crash', () => {
    const r = runScenario(base({ clients: 1, server: { ...ARTICLE_SERVER, startupMs: 0, outages: [{ startMs: 0, endMs: 300 }] } }), 0);
    expect(r.crashes).toBe(0);
    expect(r.finishMs).toBe(310);
  });

  it('maxAttempts caps attempts per request and counts give-ups', () => {
    const r = runScenario(base({ clients: 10, server: { ...ARTICLE_SERVER, startupMs: 10_000 }, policy: { name: 'x', backoff: constantBackoff(), maxAttempts: 4 } }), 0);
    expect(r.requests).toBe(40);
    expect(r.gaveUp).toBe(10);
    expect(r.finished).toBe(true);
  });

  it('retries scheduled past the horizon are never sent and leave the run unfinished', () => {
    const r = runScenario(base({ clients: 1, server: { ...ARTICLE_SERVER, startupMs: 10_000 }, policy: { name: 'x', backoff: constantBackoff({ delayMs: 5000 }), maxAttempts: Infinity } }), 0);
    expect(r.finished).toBe(false);
    expect(r.requests).toBe(1);
    expect(r.outstanding).toBe(1);
  });

  it('waits come from the policy’s backoff object, with per-request state', () => {
    const calls: [number, number][] = [];
    const spy: Backoff = {
      name: 'spy',
      maxDelayMs: 1000,
      delay: (retry, previous) => {
        calls.push([retry, previous]);
        return retry * 10;
      },
      toJSON: () => ({ kind: 'constant', delayMs: 0 }),
    };
    runScenario(base({ clients: 1, server: { ...ARTICLE_SERVER, startupMs: 100 }, policy: { name: 'spy', backoff: spy, maxAttempts: Infinity } }), 0);
    expect(calls).toEqual([[1, 0], [2, 10], [3, 20], [4, 30]]);
  });

  it('tells the budget about every send and outcome, and obeys its refusal', () => {
    const log: string[] = [];
    const budget: RetryBudget = {
      name: 'log',
      onAttempt: (now, isRetry) => log.push(`send ${now} ${isRetry}`),
      onSuccess: (now) => log.push(`ok ${now}`),
      onFailure: (now) => log.push(`fail ${now}`),
      allowRetry: (now) => (log.push(`ask ${now}`), log.filter((l) => l.startsWith('ask')).length < 2),
    };
    const r = runScenario(base({ clients: 1, server: { ...ARTICLE_SERVER, startupMs: 100 }, policy: { name: 'b', backoff: constantBackoff(), maxAttempts: 5, budget: () => budget } }), 0);
    expect(log).toEqual(['send 0 false', 'fail 0', 'ask 0', 'send 10 true', 'fail 10', 'ask 10']);
    expect(r.budgetRefusals).toBe(1);
    expect(r.gaveUp).toBe(1);
  });

  it('is deterministic per seed: two fresh processes (other Math.random seeds, time zones) and this one agree', () => {
    // Full jitter draws on every retry, so any draw that did not come from the seed would show.
    const code = `import { fullJitterBackoff } from 'herdless';
import { ARTICLE_SERVER, runScenario } from 'herdless/sim';
const s = { clients: 500, arrivals: { kind: 'together', spreadMs: 300 }, server: ARTICLE_SERVER, policy: { name: 'j', backoff: fullJitterBackoff(), maxAttempts: Infinity }, horizonMs: 30_000, stopWhenIdle: true };
const r = runScenario(s, 4, { perTick: true });
console.log(JSON.stringify({ ...r, perTick: Object.fromEntries(Object.entries(r.perTick).map(([k, v]) => [k, Array.from(v)])) }));`;
    const a = inFreshProcess(code, { randomSeed: 1, timeZone: 'UTC' });
    const b = inFreshProcess(code, { randomSeed: 2, timeZone: 'America/Los_Angeles' });
    expect(b).toBe(a);
    const s: Scenario = { clients: 500, arrivals: { kind: 'together', spreadMs: 300 }, server: ARTICLE_SERVER, policy: { name: 'j', backoff: fullJitterBackoff(), maxAttempts: Infinity }, horizonMs: 30_000, stopWhenIdle: true };
    const r = runScenario(s, 4, { perTick: true });
    const parsed = JSON.parse(a) as { requests: number; perTick: { arrivals: number[] } };
    expect(parsed.requests).toBe(r.requests);
    expect(parsed.perTick.arrivals).toEqual(Array.from(r.perTick!.arrivals));
    expect(r.requests).toBeGreaterThan(500); // retries happened: the draws were exercised
  });
});

describe('a backoff that carries its own per-call value (decorrelated jitter V2)', () => {
  it('the engine passes back carry(previous, wait), not the wait', () => {
    const seen: number[] = [];
    const carrying: Backoff = {
      name: 'carrying',
      maxDelayMs: 10,
      delay: (_n, previous) => {
        seen.push(previous);
        return 10;
      },
      carry: (previous, wait) => previous + wait + 1000,
      toJSON: () => ({ kind: 'constant', delayMs: 10 }),
    };
    const r = runScenario(
      base({ clients: 1, server: { ...ARTICLE_SERVER, startupMs: 0, outages: [{ startMs: 0, endMs: 50 }] }, policy: { name: 'carrying', backoff: carrying, maxAttempts: Infinity } }),
      0,
    );
    expect(r.finished).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual(seen.map((_, i) => i * 1010));
  });
});
