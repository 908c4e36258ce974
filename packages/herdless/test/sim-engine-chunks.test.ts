import { describe, expect, it } from 'vitest';
import { constantBackoff, type AttemptThrottle, type Backoff, type RetryBudget } from 'herdless';
import { ARTICLE_SERVER, runScenario, type Scenario } from 'herdless/sim';
import { PyRandom } from '../src/core/python-random.js';
import { simulate } from '../src/sim/engine.js';
import { invalidOption } from './support/invalid-option.js';
import { twoClientScenario } from './support/sim-scenario.js';

// The engine's edges that sim-engine-edges.test.ts leaves: the size limits at their bounds, a send
// that lands exactly on the horizon, and the chunk store's reuse of the chunks a tick has read.

describe('runScenario: the checks of a scenario built in code, at their bounds', () => {
  it.each([
    ['a number', 5, 'scenario must be a Scenario object, got 5'],
    ['arrivals missing', { ...twoClientScenario(), arrivals: undefined }, "scenario.arrivals must be { kind: 'together', spreadMs } or { kind: 'poisson', ratePerSecond }, got undefined"],
    ['policy a string', { ...twoClientScenario(), policy: 'fast' }, 'scenario.policy must be a ClientPolicy { name, backoff, maxAttempts, budget? }, got "fast"'],
  ])('a scenario, its arrivals and its policy must be objects: %s is refused', (_what, scenario, message) => {
    expect(invalidOption(() => runScenario(scenario as never, 0)).message).toBe(`runScenario: ${message}`);
  });

  it('a horizon of at most 10,000,000 ticks: exactly 10,000,000 runs, one tick more is refused', () => {
    // The per-tick arrays are zero-filled and untouched past the one tick run: this costs no memory.
    expect(runScenario(twoClientScenario({ clients: 0, horizonMs: 100_000_000 }), 0)).toMatchObject({ ticks: 1, finished: true });
    expect(invalidOption(() => runScenario(twoClientScenario({ horizonMs: 100_000_010 }), 0)).message).toBe(
      'runScenario: scenario.horizonMs must be at most 10000000 ticks (tickMs 10), got 100000010',
    );
  });

  it('a Poisson run of at most 10,000,000 first sends (clients × rate × horizon s): exactly that many passes the check, more is refused', () => {
    // 1000 clients × 10/s × 1000 s = 10,000,000 exactly. Drawing them would take seconds and hundreds
    // of MB, so the policy is left out: the check after the arrivals' is the one that refuses the run.
    const poisson = (clients: number) => ({ ...twoClientScenario(), clients, arrivals: { kind: 'poisson', ratePerSecond: 10 }, horizonMs: 1_000_000, policy: null });
    expect(invalidOption(() => runScenario(poisson(1000) as never, 0)).message).toBe(
      'runScenario: scenario.policy must be a ClientPolicy { name, backoff, maxAttempts, budget? }, got null',
    );
    expect(invalidOption(() => runScenario(poisson(1001) as never, 0)).message).toBe(
      'runScenario: scenario.arrivals.ratePerSecond gives about 10010000 first sends (clients × rate × horizon); keep it ≤ 10000000, got 10',
    );
  });

  it('the Poisson bound multiplies by the horizon: 1 client at 20,000/s over 1 ms (about 20 first sends) runs', () => {
    const r = runScenario(twoClientScenario({ clients: 1, server: { ...ARTICLE_SERVER, tickMs: 1 }, horizonMs: 1, arrivals: { kind: 'poisson', ratePerSecond: 20_000 } }), 0);
    // Start-up lasts the whole millisecond: each of the 17 drawn first sends fails and stays outstanding.
    expect(r).toMatchObject({ ticks: 1, requests: 17, succeeded: 0, outstanding: 17 });
  });
});

describe('runScenario: a send that lands exactly on the horizon is never sent (ticks run from 0 to horizon − 1)', () => {
  /** A budget per client that logs what it is told, with its client. */
  const logged = (log: string[]) => (client: number): RetryBudget => ({
    name: 'log',
    onAttempt: (now, isRetry) => log.push(`client ${client} sends at ${now} ms${isRetry ? ' (retry)' : ''}`),
    onSuccess: (now) => log.push(`client ${client} served at ${now} ms`),
    onFailure: (now) => log.push(`client ${client} fails at ${now} ms`),
    allowRetry: () => true,
  });

  it('a Poisson first send drawn exactly at the horizon is not drawn into the run', () => {
    // Seed 0's first draw at rate λ is −ln(1 − u) / λ: with λ = −ln(1 − u), it is 1 s exactly, the horizon.
    const rate = -Math.log(1 - new PyRandom(0).random());
    const r = runScenario(twoClientScenario({ clients: 1, arrivals: { kind: 'poisson', ratePerSecond: rate }, horizonMs: 1000 }), 0);
    expect(r).toMatchObject({ requests: 0, outstanding: 0, finished: true });
  });

  it('a first send at the horizon tick is not queued: the request queued before it is still the one sent', () => {
    // Seed 1, spread 20 ms: client 0 at tick 0, client 1 at tick 1 — the horizon of this one-tick run.
    const log: string[] = [];
    const r = runScenario(
      twoClientScenario({
        arrivals: { kind: 'together', spreadMs: 20 },
        horizonMs: 10,
        policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: Infinity, budget: logged(log) },
      }),
      1,
      { perTick: true },
    );
    expect(log).toEqual(['client 0 sends at 0 ms', 'client 0 served at 0 ms']);
    expect(r).toMatchObject({ requests: 1, succeeded: 1, outstanding: 1, finished: false });
  });

  it('a retry due at the horizon is not queued: the request queued before it keeps its client and attempt', () => {
    // Seed 10, spread 20 ms: client 1 at tick 0, client 0 at tick 1. Nothing is served; client 1's retry
    // is due at 0 + 1 + 1 = tick 2, the horizon, and client 0's at tick 3: both stay outstanding.
    const log: string[] = [];
    const r = runScenario(
      twoClientScenario({
        arrivals: { kind: 'together', spreadMs: 20 },
        server: { ...ARTICLE_SERVER, capacityPerTick: 0, startupMs: 0 },
        horizonMs: 20,
        policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: 2, budget: logged(log) },
      }),
      10,
      { perTick: true },
    );
    expect(log).toEqual(['client 1 sends at 0 ms', 'client 1 fails at 0 ms', 'client 0 sends at 10 ms', 'client 0 fails at 10 ms']);
    expect(r).toMatchObject({ requests: 2, succeeded: 0, gaveUp: 0, outstanding: 2, finished: false });
    expect(Array.from(r.perTick!.retries)).toEqual([0, 0]);
  });
});

describe('runScenario: a tick hands the chunks it has read back to the store, which reuses them', () => {
  // 100 clients at tick 0 (4 chunks of 32), a constant 10 ms backoff (a retry joins tick t + 2), no crash.
  const crowd = (capacityPerTick: number, over: Partial<Scenario> = {}): Scenario =>
    twoClientScenario({ clients: 100, server: { ...ARTICLE_SERVER, capacityPerTick, startupMs: 0, crashLimit: Infinity }, ...over });
  const run = (scenario: Scenario) => {
    const { result, chunks } = simulate(scenario, 0, { perTick: true });
    return { result, arrivals: Array.from(result.perTick!.arrivals.slice(0, 5)), chunks: chunks() };
  };

  it('100 first sends in one tick fill 4 chunks; all served, the 4 are free again', () => {
    const r = run(crowd(100));
    expect(r.result).toMatchObject({ ticks: 1, succeeded: 100, outstanding: 0 });
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('64 of 100 served: the 36 retries move into 2 of the batch\'s chunks and the 2 others are freed', () => {
    const r = run(crowd(64));
    expect(r.arrivals).toEqual([100, 0, 36, 0, 0]);
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('10 served per tick over 19 ticks: the retries keep moving in the same 4 chunks', () => {
    const r = run(crowd(10));
    expect(r.result).toMatchObject({ ticks: 19, requests: 550, succeeded: 100 });
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('3 attempts: the third tick\'s 70 failures give up and its 3 chunks are freed', () => {
    const r = run(crowd(10, { policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: 3 } }));
    expect(r.result).toMatchObject({ ticks: 5, succeeded: 30, gaveUp: 70, outstanding: 0 });
    expect(r.arrivals).toEqual([100, 0, 90, 0, 80]);
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('none served and every retry due exactly at the horizon: the batch\'s chunks are freed, the requests stay outstanding', () => {
    const r = run(crowd(0, { horizonMs: 20, stopWhenIdle: false }));
    expect(r.result).toMatchObject({ ticks: 2, requests: 100, outstanding: 100, finished: false });
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('request by request (a budget): each chunk read is freed and reused by the retries that follow — 1 chunk more than the first sends', () => {
    const budget = (): RetryBudget => ({ name: 'any', onAttempt: () => {}, onSuccess: () => {}, onFailure: () => {}, allowRetry: () => true });
    const r = run(crowd(10, { policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts: Infinity, budget } }));
    expect(r.result).toMatchObject({ ticks: 19, requests: 550, succeeded: 100 });
    expect(r.chunks).toEqual({ allocated: 5, free: 5 });
  });
});

describe('runScenario: a throttle asked about a tick\'s batch packs the admitted requests to the front of its chunks', () => {
  /** One throttle per client that admits by `rule(client)` and logs what it is told, with its client. */
  const logged = (log: string[], rule: (client: number) => boolean) => (client: number): AttemptThrottle => ({
    name: 'log',
    admit: (now, _rng, isRetry) => {
      const ok = rule(client);
      if (!ok) log.push(`client ${client} refused at ${now} ms${isRetry ? ' (retry)' : ''}`);
      return ok;
    },
    onAnswer: (now, accepted) => log.push(`client ${client} ${accepted ? 'served' : 'failed'} at ${now} ms`),
  });
  // 100 clients at tick 0 (4 chunks of 32), a constant 10 ms backoff (a retry joins tick t + 2).
  const crowd = (capacityPerTick: number, throttle: Scenario['policy']['throttle'], maxAttempts = Infinity): Scenario =>
    twoClientScenario({
      clients: 100,
      server: { ...ARTICLE_SERVER, capacityPerTick, startupMs: 0, crashLimit: Infinity },
      policy: { name: 'c', backoff: constantBackoff({ delayMs: 10 }), maxAttempts, throttle },
    });
  const run = (scenario: Scenario) => {
    const { result, chunks } = simulate(scenario, 0, { perTick: true });
    return { result, arrivals: Array.from(result.perTick!.arrivals.slice(0, 5)), chunks: chunks() };
  };

  it('the even clients admitted: 50 reach the server and are answered in client order (0, 2, …, 98); the 2 chunks left empty are freed', () => {
    const log: string[] = [];
    const r = run(crowd(100, logged(log, (c) => c % 2 === 0), 1));
    expect(r.result).toMatchObject({ ticks: 1, requests: 50, throttled: 50, succeeded: 50, gaveUp: 50, outstanding: 0 });
    expect(r.arrivals).toEqual([50, 0, 0, 0, 0]);
    expect(log.filter((line) => line.includes('served'))).toEqual(Array.from({ length: 50 }, (_, i) => `client ${2 * i} served at 0 ms`));
    expect(log.filter((line) => line.includes('refused'))).toHaveLength(50);
    // First sends are asked as first tries.
    expect(log).toContain('client 1 refused at 0 ms');
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('only the last 4 clients admitted: they move from the 4th chunk to the front of the 1st, and the 3 others are freed', () => {
    const log: string[] = [];
    const r = run(crowd(100, logged(log, (c) => c >= 96)));
    expect(r.result).toMatchObject({ ticks: 1, requests: 4, throttled: 96, succeeded: 4, gaveUp: 96 });
    expect(log.filter((line) => line.includes('served'))).toEqual(['client 96 served at 0 ms', 'client 97 served at 0 ms', 'client 98 served at 0 ms', 'client 99 served at 0 ms']);
    expect(r.chunks).toEqual({ allocated: 4, free: 4 });
  });

  it('a retry refused: it ends there, counted as throttled and given up, and its tick is empty', () => {
    // 64 served at tick 0; the 36 retries due at tick 2 ask again as retries and are refused.
    const log: string[] = [];
    let asked = 0;
    const r = run(crowd(64, logged(log, () => asked++ < 100)));
    expect(r.result).toMatchObject({ ticks: 3, requests: 100, throttled: 36, succeeded: 64, gaveUp: 36, outstanding: 0 });
    expect(r.arrivals).toEqual([100, 0, 0, 0, 0]);
    expect(log.filter((line) => line.endsWith('at 20 ms (retry)'))).toHaveLength(36);
    // A throttled batch is answered request by request, as with a budget: 1 chunk more than the first sends.
    expect(r.chunks).toEqual({ allocated: 5, free: 5 });
  });

  it('every request admitted: the batch is served as without a throttle, and empty ticks ask nothing', () => {
    const log: string[] = [];
    const r = run(crowd(64, logged(log, () => true)));
    expect(r.result).toMatchObject({ ticks: 3, requests: 136, throttled: 0, succeeded: 100, outstanding: 0 });
    expect(r.arrivals).toEqual([100, 0, 36, 0, 0]);
    expect(log.filter((line) => line.includes('failed'))).toHaveLength(36);
    expect(log.filter((line) => line.includes('refused'))).toHaveLength(0);
    expect(r.chunks).toEqual({ allocated: 5, free: 5 });
  });

  it('without a throttle the result has no throttled field; a throttle that is not a function is refused by name', () => {
    expect('throttled' in run(crowd(100, undefined)).result).toBe(false);
    expect(invalidOption(() => runScenario(crowd(100, 5 as never), 0)).message).toBe(
      'runScenario: scenario.policy.throttle must be a function (client) => AttemptThrottle, got 5',
    );
  });

  it('a moved retry keeps its own attempt number and its previous wait', () => {
    // Each wait is unique (10 ms + n µs, all joining tick t + 2), so a wait read back as `previousMs`
    // tells which request it belonged to. Tick 2's 90 retries are asked in batch order, which is the
    // order their waits were drawn; the even-numbered asks are refused, so the others move forward.
    const waits: number[] = [];
    const previous: number[] = [];
    const attempts: number[] = [];
    const backoff: Backoff = {
      name: 'unique',
      maxDelayMs: 20,
      delay: (retry, previousMs) => {
        if (retry === 2) previous.push(previousMs);
        attempts.push(retry);
        waits.push(10 + waits.length / 1000);
        return waits[waits.length - 1]!;
      },
      toJSON: () => ({ kind: 'constant', delayMs: 10 }),
    };
    let asked = 0;
    const throttle = (): AttemptThrottle => ({ name: 'odd asks', admit: (now) => now !== 20 || asked++ % 2 === 1, onAnswer: () => {} });
    const scenario = twoClientScenario({
      clients: 100,
      server: { ...ARTICLE_SERVER, capacityPerTick: 10, startupMs: 0, crashLimit: Infinity },
      policy: { name: 'c', backoff, maxAttempts: 3, throttle },
    });
    const { result } = simulate(scenario, 0, { perTick: true });
    expect(Array.from(result.perTick!.arrivals.slice(0, 3))).toEqual([100, 0, 45]);
    // Tick 2: 45 admitted, 10 served, 35 fail and wait again, as second retries (a moved request
    // read as a first try would wait as retry 1; its third attempt is its last).
    expect(previous).toHaveLength(35);
    expect(attempts.filter((a) => a === 1)).toHaveLength(90);
    const admittedWaits = new Set(waits.slice(0, 90).filter((_, i) => i % 2 === 1));
    expect(previous.every((p) => admittedWaits.has(p))).toBe(true);
    expect(new Set(previous).size).toBe(35);
    // Tick 4: 10 of the 35 served, 25 fail their third and last attempt.
    expect(result).toMatchObject({ throttled: 45, succeeded: 30, gaveUp: 70, outstanding: 0 });
  });
});
