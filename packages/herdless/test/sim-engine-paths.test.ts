import { describe, expect, it } from 'vitest';
import { constantBackoff, decorrelatedJitterBackoff, fullJitterBackoff } from 'herdless';
import { budgetScenario, herdScenario, runScenario, scenarioFromSpec, scenarioToSpec, type Scenario } from 'herdless/sim';
import { PYTHON3, simReference } from './support/fresh-process.js';
import { invalidOption } from './support/invalid-option.js';

// The engine has two batch paths — request by request (any backoff, budgets) and, for a constant
// backoff without a budget, compaction in place with the chunks handed to the retry tick whole —
// and a chunked queue store that grows while a step reads. The expected figures are CPython's:
// scripts/sim-reference.py, the model written the plain way (a list per tick, CPython's own
// `random`), computes them independently of this engine, and the last test here runs it again
// when python3 is installed. Weighted sums (Σ (tick + 1) × count) pin the per-tick series in one number.
const cases: Record<string, () => Scenario> = {
  'immediate, spread 3 s, 6 attempts': () =>
    herdScenario({ name: 'c', backoff: constantBackoff({ delayMs: 0 }), maxAttempts: 6 }, { clients: 2000, spreadMs: 3000 }),
  'immediate, 5 attempts, 200/tick, no crash': () =>
    herdScenario(
      { name: 'c', backoff: constantBackoff({ delayMs: 0 }), maxAttempts: 5 },
      { clients: 5000, spreadMs: 200, server: { capacityPerTick: 200, crashLimit: 1e9, startupMs: 0 } },
    ),
  'fixed 1 s, 5 attempts': () => herdScenario({ name: 'c', backoff: constantBackoff({ delayMs: 1000 }), maxAttempts: 5 }, { clients: 1000 }),
  'constant 15 ms (rounds to 2 ticks), spread 900 ms': () =>
    herdScenario({ name: 'c', backoff: constantBackoff({ delayMs: 15 }), maxAttempts: Infinity }, { clients: 1000, spreadMs: 900, horizonMs: 20_000 }),
  'immediate, Poisson arrivals, 3 attempts': () => ({
    ...budgetScenario('4 attempts'),
    policy: { name: 'c', backoff: constantBackoff({ delayMs: 0 }), maxAttempts: 3 },
  }),
  'full jitter, 50 000 clients, 20 s': () => herdScenario('full jitter', { clients: 50_000, horizonMs: 20_000 }),
  'decorrelated, spread 5 s, 5 attempts': () =>
    herdScenario(
      { name: 'd', backoff: decorrelatedJitterBackoff({ baseMs: 100, maxBackoffMs: 10_000 }), maxAttempts: 5 },
      { clients: 3000, spreadMs: 5000 },
    ),
};

const expected: Record<string, unknown> = {
  'immediate, spread 3 s, 6 attempts': {requests: 12000, succeeded: 0, gaveUp: 2000, outstanding: 0, crashes: 3, finishMs: 3050, arrivalsWeighted: 1829070, retriesWeighted: 1529225},
  'immediate, 5 attempts, 200/tick, no crash': {requests: 12260, succeeded: 4413, gaveUp: 587, outstanding: 0, crashes: 0, finishMs: 230, arrivalsWeighted: 151427, retriesWeighted: 99154},
  'fixed 1 s, 5 attempts': {requests: 5000, succeeded: 0, gaveUp: 1000, outstanding: 0, crashes: 4, finishMs: 4050, arrivalsWeighted: 1015000, retriesWeighted: 1014000},
  'constant 15 ms (rounds to 2 ticks), spread 900 ms': {requests: 652278, succeeded: 0, gaveUp: 0, outstanding: 1000, crashes: 19, finishMs: 20000, arrivalsWeighted: 666590723, retriesWeighted: 666545524},
  'immediate, Poisson arrivals, 3 attempts': {requests: 18487, succeeded: 8902, gaveUp: 3027, outstanding: 1, crashes: 0, finishMs: 40000, arrivalsWeighted: 30985153, retriesWeighted: 7168539},
  'full jitter, 50 000 clients, 20 s': {requests: 469397, succeeded: 0, gaveUp: 0, outstanding: 50000, crashes: 19, finishMs: 20000, arrivalsWeighted: 225384589, retriesWeighted: 225334589},
  'decorrelated, spread 5 s, 5 attempts': {requests: 14842, succeeded: 621, gaveUp: 2379, outstanding: 0, crashes: 5, finishMs: 12130, arrivalsWeighted: 4844425, retriesWeighted: 4091492},
};

const weighted = (a: Int32Array): number => a.reduce((sum, x, i) => sum + x * (i + 1), 0);

describe('engine paths agree with the reference implementation (seed 3)', () => {
  it.each(Object.keys(cases))('%s', (name) => {
    const scenario = cases[name]!();
    const r = runScenario(scenario, 3, { perTick: true });
    expect({
      requests: r.requests,
      succeeded: r.succeeded,
      gaveUp: r.gaveUp,
      outstanding: r.outstanding,
      crashes: r.crashes,
      finishMs: r.finishMs,
      arrivalsWeighted: weighted(r.perTick!.arrivals),
      retriesWeighted: weighted(r.perTick!.retries),
    }).toEqual(expected[name]);
    // Every client's request ends exactly once (or is still outstanding).
    if (scenario.arrivals.kind === 'together') expect(r.succeeded + r.gaveUp + r.outstanding).toBe(scenario.clients);
  });

  // A few seconds of CPython. Without python3 (locally) the literals above still hold the engine to them.
  it.skipIf(PYTHON3 === undefined && !process.env.CI)('the expected figures are what scripts/sim-reference.py computes in CPython', () => {
    expect(simReference('paths')).toEqual(expected);
  });
});


describe('scenarioFromSpec: a wrong shape is an InvalidOptionError, not a TypeError', () => {
  const good = scenarioToSpec(herdScenario('full jitter'));

  it('round-trips a good spec', () => {
    expect(scenarioToSpec(scenarioFromSpec(good))).toEqual(good);
  });

  it.each([
    ['a lab config file (policies, not policy)', { ...good, policy: undefined, policies: [good.policy] }, /^scenarioFromSpec: policy must be a PolicySpec .*\(a lab config file lists "policies": pass one of them as "policy"\), got undefined$/],
    ['a policy without a name', { ...good, policy: { backoff: good.policy.backoff } }, /^scenarioFromSpec: policy must be a PolicySpec/],
    ['not an object', 5, /^scenarioFromSpec: spec must be a ScenarioSpec object, got 5$/],
  ])('%s', (_what, spec, message) => {
    expect(invalidOption(() => scenarioFromSpec(spec as never)).message).toMatch(message);
  });
});

describe('runScenario: a scenario built in code is checked like a lab file', () => {
  const base = herdScenario('full jitter');
  const nanBackoff = { ...fullJitterBackoff(), delay: () => Number.NaN };
  it.each([
    ['clients -5', { ...base, clients: -5 }, /^runScenario: scenario\.clients must be ≥ 0, got -5$/],
    ['horizonMs "x"', { ...base, horizonMs: 'x' }, /^runScenario: scenario\.horizonMs must be a number, got "x"$/],
    ['horizonMs not a whole number of ticks', { ...base, horizonMs: 1005 }, /^runScenario: scenario\.horizonMs must be a whole number of ticks \(tickMs 10\), got 1005$/],
    ['server.outages missing', { ...base, server: { ...base.server, outages: undefined } }, /^runScenario: scenario\.server\.outages must be an array/],
    ['stopWhenIdle missing', { ...base, stopWhenIdle: undefined }, /^runScenario: scenario\.stopWhenIdle must be a boolean, got undefined$/],
    ['maxAttempts 0', { ...base, policy: { ...base.policy, maxAttempts: 0 } }, /^runScenario: scenario\.policy\.maxAttempts must be ≥ 1, got 0$/],
    ['maxAttempts null', { ...base, policy: { ...base.policy, maxAttempts: null } }, /^runScenario: scenario\.policy\.maxAttempts must be a number, got null$/],
    ['maxAttempts NaN', { ...base, policy: { ...base.policy, maxAttempts: Number.NaN } }, /^runScenario: scenario\.policy\.maxAttempts must be a number, got NaN$/],
    ['no backoff', { ...base, policy: { ...base.policy, backoff: undefined } }, /^runScenario: scenario\.policy\.backoff must be a Backoff/],
    ['arrivals of an unknown kind', { ...base, arrivals: { kind: 'burst' } }, /^runScenario: scenario\.arrivals must be/],
    ['outages: [null]', { ...base, server: { ...base.server, outages: [null] } }, /^runScenario: scenario\.server\.outages\[0\] must be an object \{ startMs, endMs \}, got null$/],
    ['an outage that ends before it starts', { ...base, server: { ...base.server, outages: [{ startMs: 5000, endMs: 1000 }] } }, /^runScenario: scenario\.server\.outages\[0\]\.endMs must be > 5000, got 1000$/],
    ['an outage of zero length', { ...base, server: { ...base.server, outages: [{ startMs: 0, endMs: 10 }, { startMs: 5, endMs: 5 }] } }, /^runScenario: scenario\.server\.outages\[1\]\.endMs must be > 5, got 5$/],
    ['an outage bound as a string', { ...base, server: { ...base.server, outages: [{ startMs: '0', endMs: 1000 }] } }, /^runScenario: scenario\.server\.outages\[0\]\.startMs must be a number, got "0"$/],
    ['an outage without an end', { ...base, server: { ...base.server, outages: [{ startMs: 0 }] } }, /^runScenario: scenario\.server\.outages\[0\]\.endMs is required, got undefined$/],
    ['1e12 clients', { ...base, clients: 1e12 }, /^runScenario: scenario\.clients must be ≤ 10000000, got 1000000000000$/],
    ['a horizon of 1e12 ticks', { ...base, horizonMs: 1e13 }, /^runScenario: scenario\.horizonMs must be at most 10000000 ticks \(tickMs 10\), got 10000000000000$/],
    ['a capacity of 2^40', { ...base, server: { ...base.server, capacityPerTick: 2 ** 40 } }, /^runScenario: scenario\.server\.capacityPerTick must be ≤ 10000000, got 1099511627776$/],
    ['a crash window of 1e9 ticks', { ...base, server: { ...base.server, crashWindowTicks: 1e9 } }, /^runScenario: scenario\.server\.crashWindowTicks must be ≤ 10000000, got 1000000000$/],
    ['a Poisson run of 1.2e12 first sends', { ...base, arrivals: { kind: 'poisson', ratePerSecond: 1e7 } }, /^runScenario: scenario\.arrivals\.ratePerSecond gives about 1200000000000 first sends .*; keep it ≤ 10000000, got 10000000$/],
  ])('%s', (_what, scenario, message) => {
    expect(invalidOption(() => runScenario(scenario as never, 0)).message).toMatch(message);
  });

  it('an outage far past the horizon is the server down to the end (its ticks are not wrapped into an Int32)', () => {
    const down = { ...base, stopWhenIdle: false, server: { ...base.server, startupMs: 0, outages: [{ startMs: 0, endMs: 1e300 }] } };
    const r = runScenario(down, 0);
    expect(r.succeeded).toBe(0);
    expect(r.requests).toBeGreaterThan(1000);
  });

  it("a custom backoff's bad delay is reported, not run as a never-scheduled retry", () => {
    const scenario = { ...base, policy: { ...base.policy, backoff: nanBackoff } };
    expect(invalidOption(() => runScenario(scenario, 0)).message).toMatch(/^runScenario: backoff\.delay\(\) must return a number of ms in \[0, 2147483647\] \(a bug in a custom Backoff\), got NaN$/);
  });
});
