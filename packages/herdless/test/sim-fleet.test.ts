import { FLEET_POLICIES, fleetPolicy, fleetRow, fleetScenario, fleetTrace } from 'herdless/sim';
import { describe, expect, it } from 'vitest';
import { PYTHON3, inFreshProcess, simReference } from './support/fresh-process.js';
import { invalidOption } from './support/invalid-option.js';

describe('the fleet experiment (200 processes of 2 s, the downstream down 5–15 s)', () => {
  const load = (name: (typeof FLEET_POLICIES)[number]) => fleetRow(name, [0, 1]).load;

  // The per-process loads (seeds 0 and 1) are CPython's: scripts/sim-reference.py computes them with
  // its own plain model of the fleet, budgets and sliding window (the test below reruns it when
  // python3 is installed). 9 decimals: the same doubles, give or take the last bits that V8's
  // Math.log and C's log may round differently in the Poisson arrivals.
  const FLEET_REFERENCE = {
    '4 attempts': 3.883595081002385,
    '4 attempts + gRPC throttling per process': 2.1426633212526713,
    '4 attempts + 10% retry ratio per process': 1.4730500573057026,
  } as const;

  it('per-process budgets barely cut the load; one shared budget holds it near 1×', () => {
    for (const [name, value] of Object.entries(FLEET_REFERENCE)) expect(load(name as keyof typeof FLEET_REFERENCE).mean, name).toBeCloseTo(value, 9);
    const shared = load('4 attempts + shared gRPC throttling');
    expect(shared.max).toBeLessThanOrEqual(1.01);
    expect(load('4 attempts + shared 10% retry ratio').max).toBeLessThanOrEqual(1.12);
  });

  it('herdless/redis\'s batching (100 ms) leaves the shared bucket at 1.00× and moves the ratio by a hair', () => {
    expect(load('4 attempts + shared gRPC throttling (batched)').max).toBeLessThanOrEqual(1.01);
    const batched = load('4 attempts + shared 10% retry ratio (batched)').mean;
    const direct = load('4 attempts + shared 10% retry ratio').mean;
    expect(Math.abs(batched - direct)).toBeLessThan(0.01);
  });

  it('batched: a process\'s successes reach the shared bucket flushIntervalMs after the first, or with its next failure', () => {
    const policy = fleetPolicy('4 attempts + shared gRPC throttling (batched)', { flushIntervalMs: 100 });
    const [a, b, c] = [policy.budget!(0), policy.budget!(1), policy.budget!(2)];
    for (let i = 0; i < 5; i++) a.onFailure(0); // 5 tokens: no retry
    for (let i = 0; i < 11; i++) a.onSuccess(10); // +1.1, sent at 110
    expect(b.allowRetry(109)).toBe(false);
    expect(b.allowRetry(110)).toBe(true); // 6.1 tokens
    for (let i = 0; i < 11; i++) c.onSuccess(120); // +1.1, due at 220 …
    c.onFailure(130); // … but carried by c's failure: 6.1 + 1.1 − 1 = 6.2
    expect(b.allowRetry(130)).toBe(true);
    b.onFailure(130); // 5.2
    expect(a.allowRetry(500)).toBe(true); // nothing more was pending
  });

  it('no policy name has a comma (--policies is comma-separated)', () => {
    expect(FLEET_POLICIES.filter((name) => name.includes(','))).toEqual([]);
  });

  it('a per-process ratio without a floor never retries: fewer than 9 requests per window', () => {
    expect(fleetRow('4 attempts + 10% ratio per process (no floor)', [0]).retryShare.max).toBe(0);
  });

  it.skipIf(PYTHON3 === undefined && !process.env.CI)('the loads above are what scripts/sim-reference.py computes in CPython', () => {
    expect(simReference('fleet')).toEqual(FLEET_REFERENCE);
  });

  it('is deterministic: the same seed, the same trace in two fresh processes (other Math.random seeds, time zones)', () => {
    const policies = ['4 attempts + gRPC throttling per process', '4 attempts + shared 10% retry ratio (batched)'] as const;
    const code = `import { fleetTrace } from 'herdless/sim'; console.log(JSON.stringify(fleetTrace(3, ${JSON.stringify(policies)})));`;
    const a = inFreshProcess(code, { randomSeed: 1, timeZone: 'UTC' });
    const b = inFreshProcess(code, { randomSeed: 2, timeZone: 'Asia/Tokyo' });
    expect(b).toBe(a);
    // …and this process (the sources, not the build) agrees with both; the trace is not empty.
    const here = fleetTrace(3, [...policies]);
    expect(JSON.parse(a)).toEqual(here);
    expect(here[0]!.arrivals.reduce((x, y) => x + y, 0)).toBeGreaterThan(12_000);
  });

  it('processes restart with a fresh budget after their lifetime; a shared budget is one object per run', () => {
    const perProcess = fleetPolicy('4 attempts + gRPC throttling per process', { processes: 2, lifetimeMs: 1000 });
    const slot = perProcess.budget!(0);
    for (let i = 0; i < 5; i++) slot.onFailure(100);
    expect(slot.allowRetry(100)).toBe(false); // 5 tokens left
    expect(slot.allowRetry(999)).toBe(false);
    slot.onFailure(1000); // a new process: 10 − 1 tokens
    expect(slot.allowRetry(1000)).toBe(true);
    const shared = fleetPolicy('4 attempts + shared gRPC throttling');
    const first = shared.budget!(0);
    expect(shared.budget!(1)).toBe(first);
    expect(shared.budget!(0)).not.toBe(first); // the next run's object
  });

  it('spreads the total rate over the processes', () => {
    const s = fleetScenario('4 attempts', { processes: 300, ratePerSecond: 600 });
    expect(s.clients).toBe(300);
    expect(s.arrivals).toEqual({ kind: 'poisson', ratePerSecond: 2 });
  });

  it.each([
    [{ processes: 0 }, 'processes'],
    [{ processes: 1.5 }, 'processes'],
    [{ lifetimeMs: 1 }, 'lifetimeMs'],
    [{ ratePerSecond: 0 }, 'ratePerSecond'],
    [{ lifeTimeMs: 10 }, 'lifeTimeMs'],
    [{ flushIntervalMs: -1 }, 'flushIntervalMs'],
  ])('%o is refused, naming %s', (options, field) => {
    expect(invalidOption(() => fleetScenario('4 attempts', options as never)).field).toBe(field);
  });
});
