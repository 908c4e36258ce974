import { describe, expect, it } from 'vitest';
import { constantBackoff, type RetryBudget } from 'herdless';
import { ARTICLE_SERVER, herdScenario, runScenario, type Scenario } from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';
import { twoClientScenario } from './support/sim-scenario.js';

// The edges of the simulator engine that sim-engine*.test.ts do not reach: every field of a
// scenario built in code, checked with its rule and named with its value.
const base = herdScenario('full jitter');
const server = base.server;

describe('runScenario: each field of a scenario is checked with its rule', () => {
  it.each([
    ['not an object', null, 'scenario must be a Scenario object, got null'],
    ['clients 1.5', { ...base, clients: 1.5 }, 'scenario.clients must be an integer, got 1.5'],
    ['server null', { ...base, server: null }, 'scenario.server must be a ServerModel object (e.g. ARTICLE_SERVER), got null'],
    ['server a string', { ...base, server: 'article' }, 'scenario.server must be a ServerModel object (e.g. ARTICLE_SERVER), got "article"'],
    ['tickMs 0', { ...base, server: { ...server, tickMs: 0 } }, 'scenario.server.tickMs must be > 0, got 0'],
    ['capacityPerTick -1', { ...base, server: { ...server, capacityPerTick: -1 } }, 'scenario.server.capacityPerTick must be ≥ 0, got -1'],
    ['capacityPerTick 2.5', { ...base, server: { ...server, capacityPerTick: 2.5 } }, 'scenario.server.capacityPerTick must be an integer, got 2.5'],
    ['crashWindowTicks 0', { ...base, server: { ...server, crashWindowTicks: 0 } }, 'scenario.server.crashWindowTicks must be ≥ 1, got 0'],
    ['crashWindowTicks 1.5', { ...base, server: { ...server, crashWindowTicks: 1.5 } }, 'scenario.server.crashWindowTicks must be an integer, got 1.5'],
    ['crashLimit -1', { ...base, server: { ...server, crashLimit: -1 } }, 'scenario.server.crashLimit must be ≥ 0, got -1'],
    ['restartMs -1', { ...base, server: { ...server, restartMs: -1 } }, 'scenario.server.restartMs must be ≥ 0, got -1'],
    ['restartMs Infinity', { ...base, server: { ...server, restartMs: Infinity } }, 'scenario.server.restartMs must be finite, got Infinity'],
    ['startupMs -1', { ...base, server: { ...server, startupMs: -1 } }, 'scenario.server.startupMs must be ≥ 0, got -1'],
    ['startupMs missing', { ...base, server: { ...server, startupMs: undefined } }, 'scenario.server.startupMs is required, got undefined'],
    ['outage startMs -1', { ...base, server: { ...server, outages: [{ startMs: -1, endMs: 10 }] } }, 'scenario.server.outages[0].startMs must be ≥ 0, got -1'],
    ['an outage that is a number', { ...base, server: { ...server, outages: [5] } }, 'scenario.server.outages[0] must be an object { startMs, endMs }, got 5'],
    ['outages an object', { ...base, server: { ...server, outages: {} } }, 'scenario.server.outages must be an array of { startMs, endMs } (empty for none), got an object (Object)'],
    ['horizonMs 0', { ...base, horizonMs: 0 }, 'scenario.horizonMs must be > 0, got 0'],
    ['stopWhenIdle "yes"', { ...base, stopWhenIdle: 'yes' }, 'scenario.stopWhenIdle must be a boolean, got "yes"'],
    ['arrivals null', { ...base, arrivals: null }, "scenario.arrivals must be { kind: 'together', spreadMs } or { kind: 'poisson', ratePerSecond }, got null"],
    ['spreadMs -1', { ...base, arrivals: { kind: 'together', spreadMs: -1 } }, 'scenario.arrivals.spreadMs must be ≥ 0, got -1'],
    ['ratePerSecond -1', { ...base, arrivals: { kind: 'poisson', ratePerSecond: -1 } }, 'scenario.arrivals.ratePerSecond must be ≥ 0, got -1'],
    ['policy null', { ...base, policy: null }, 'scenario.policy must be a ClientPolicy { name, backoff, maxAttempts, budget? }, got null'],
    ['maxAttempts 1.5', { ...base, policy: { ...base.policy, maxAttempts: 1.5 } }, 'scenario.policy.maxAttempts must be an integer, got 1.5'],
    ['backoff null', { ...base, policy: { ...base.policy, backoff: null } }, 'scenario.policy.backoff must be a Backoff (e.g. fullJitterBackoff()), got null'],
    ['backoff without delay()', { ...base, policy: { ...base.policy, backoff: { delay: 5 } } }, 'scenario.policy.backoff must be a Backoff (e.g. fullJitterBackoff()), got an object (Object)'],
    ['budget not a function', { ...base, policy: { ...base.policy, budget: 5 } }, 'scenario.policy.budget must be a function (client) => RetryBudget, got 5'],
  ])('%s', (_what, scenario, message) => {
    expect(invalidOption(() => runScenario(scenario as never, 0)).message).toBe(`runScenario: ${message}`);
  });

  it.each([
    ['a string', 'x', 'seed must be a number, got "x"'],
    ['missing', undefined, 'seed is required, got undefined'],
    ['negative', -1, 'seed must be ≥ 0, got -1'],
    ['not an integer', 1.5, 'seed must be an integer, got 1.5'],
    ['past the safe integers', 2 ** 53, `seed must be ≤ ${Number.MAX_SAFE_INTEGER}, got ${2 ** 53}`],
  ])('seed %s is refused, named as runScenario\'s own', (_what, seed, message) => {
    expect(invalidOption(() => runScenario(base, seed as never)).message).toBe(`runScenario: ${message}`);
  });

  it('seeds at their bounds run: 0 and Number.MAX_SAFE_INTEGER', () => {
    const small = { ...base, clients: 2 };
    expect(runScenario(small, 0).seed).toBe(0);
    expect(runScenario(small, Number.MAX_SAFE_INTEGER).seed).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('a horizon is counted in ticks: 2 000 000 ms of 10 ms ticks (200 000 ticks) is accepted', () => {
    expect(runScenario({ ...base, clients: 0, horizonMs: 2_000_000 }, 0).ticks).toBe(1);
  });

  it('accepted at their bounds: crashLimit Infinity, maxAttempts Infinity, 0 clients, capacity 0', () => {
    const r = runScenario({ ...base, clients: 0, server: { ...server, crashLimit: Infinity, capacityPerTick: 0 }, policy: { ...base.policy, maxAttempts: Infinity } }, 0);
    expect(r).toMatchObject({ ticks: 1, finished: true, requests: 0 });
  });
});

describe('runScenario: what a run reports', () => {
  // twoClientScenario: one client served at tick 0, the other retried at tick 0 + 1 + 1 = 2 and served there.
  const small = twoClientScenario;

  it('onTick is called once per processed tick, in order; the run ends after the tick of the last success', () => {
    const seen: number[] = [];
    const r = runScenario(small(), 0, { perTick: true, onTick: (t) => seen.push(t) });
    expect(seen).toEqual([0, 1, 2]);
    expect(r).toMatchObject({ ticks: 3, finished: true, finishMs: 30, finishS: 0.03, requests: 3, succeeded: 2, gaveUp: 0, outstanding: 0 });
    expect(Array.from(r.perTick!.fresh.slice(0, 4))).toEqual([2, 0, 0, 0]);
    expect(Array.from(r.perTick!.arrivals.slice(0, 4))).toEqual([2, 0, 1, 0]);
    expect(Array.from(r.perTick!.retries.slice(0, 4))).toEqual([0, 0, 1, 0]);
    expect(Array.from(r.perTick!.successes.slice(0, 4))).toEqual([1, 0, 1, 0]);
  });

  it('without stopWhenIdle the run goes on to the horizon', () => {
    const seen: number[] = [];
    const r = runScenario(small({ stopWhenIdle: false }), 0, { onTick: (t) => seen.push(t) });
    expect(seen).toHaveLength(100);
    expect(r).toMatchObject({ ticks: 100, finished: true, finishMs: 1000, finishS: 1 });
    expect(r.perTick).toBeUndefined();
  });

  it('a first send drawn at or past the horizon is never sent and stays outstanding', () => {
    const r = runScenario(small({ clients: 1, arrivals: { kind: 'together', spreadMs: 1e9 } }), 0, { perTick: true });
    expect(r).toMatchObject({ ticks: 100, finished: false, requests: 0, outstanding: 1 });
    expect(r.perTick!.fresh.every((n) => n === 0)).toBe(true);
  });
});

describe('runScenario: the request-by-request path (budgets, any backoff)', () => {
  const logBudget = (log: string[]): RetryBudget => ({
    name: 'log',
    onAttempt: (now, isRetry) => log.push(`send ${now} ${isRetry}`),
    onSuccess: (now, isRetry) => log.push(`ok ${now} ${isRetry}`),
    onFailure: (now) => log.push(`fail ${now}`),
    allowRetry: () => true,
  });
  const run = (log: string[]) =>
    runScenario(twoClientScenario({ policy: { name: 'b', backoff: constantBackoff({ delayMs: 20 }), maxAttempts: Infinity, budget: () => logBudget(log) } }), 0, { perTick: true });

  it('a constant 20 ms backoff with a budget: the retry decided at tick 0 is sent at tick 3; onSuccess says whether it was a retry', () => {
    const log: string[] = [];
    const r = run(log);
    expect(log.filter((l) => l.startsWith('ok'))).toEqual(['ok 0 false', 'ok 30 true']);
    expect(Array.from(r.perTick!.successes.slice(0, 4))).toEqual([1, 0, 0, 1]);
    expect(Array.from(r.perTick!.retries.slice(0, 4))).toEqual([0, 0, 0, 1]);
    expect(r.finishMs).toBe(40);
  });
});

describe('runScenario: the server (S2)', () => {
  const one = (server: Partial<typeof ARTICLE_SERVER>): Scenario =>
    twoClientScenario({
      clients: 1,
      server: { ...ARTICLE_SERVER, startupMs: 0, ...server },
      policy: { name: 'c', backoff: constantBackoff({ delayMs: 0 }), maxAttempts: Infinity },
      horizonMs: 2000,
    });

  it('an outage that ends inside a longer downtime does not shorten it', () => {
    // Down for start-up until 500 ms; an outage from 100 to 200 ms changes nothing: first success at tick 50.
    expect(runScenario(one({ startupMs: 500, outages: [{ startMs: 100, endMs: 200 }] }), 0).finishMs).toBe(510);
    // An outage that ends later does extend it.
    expect(runScenario(one({ startupMs: 500, outages: [{ startMs: 100, endMs: 700 }] }), 0).finishMs).toBe(710);
  });

  it('a batch of 3000 in one tick (past the 1024 marks held at first), capacity 3000: all served at tick 0', () => {
    const r = runScenario({ ...one({ capacityPerTick: 3000, crashLimit: Infinity }), clients: 3000 }, 0);
    expect(r).toMatchObject({ succeeded: 3000, requests: 3000, finishMs: 10 });
  });
});
