import { describe, expect, it } from 'vitest';
import {
  METASTABLE_POLICIES,
  METASTABLE_SETUP,
  metastableCombinations,
  metastableRun,
  metastableSetup,
  recovery,
  runMetastable,
  type MetastableCombination,
  type PolicySpec,
} from 'herdless/sim';
import { invalidOption } from './support/invalid-option.js';

const policy = (name: string): PolicySpec => METASTABLE_POLICIES.find((p) => p.name === name)!;
const combo = (name: string, server: string, overrides: MetastableCombination['overrides'] = {}): MetastableCombination => ({ policy: policy(name), server, overrides });
const SEEDS = Array.from({ length: 20 }, (_, i) => i);
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

describe('the metastable queue: the trigger of a few seconds, seeds 0–19', () => {
  // The condition the protections exist for: 80% load, the server at half speed for 5 s.
  const rows = runMetastable(
    [
      combo('3 retries', 'FIFO'),
      combo('3 retries + gRPC throttling', 'FIFO'),
      combo('3 retries', 'drop expired', { dropExpired: true }),
      combo('no retry', 'FIFO'),
    ],
    SEEDS,
  );
  const [plain, throttled, dropExpired, noRetry] = rows;

  it('plain retries: no seed recovers; goodput stays near zero and the offered load at 4× the new requests long after the trigger', () => {
    expect(plain!.recovered).toBe(0);
    expect(plain!.recoveryS).toBeNull();
    expect(plain!.goodputShare.max).toBeLessThan(0.02);
    expect(plain!.offeredRatio.mean).toBeGreaterThan(3.9);
    // The server is not idle: it serves late answers all the time (capacity 250/s).
    expect(plain!.wastedPerS.mean).toBeGreaterThan(240);
  });

  it('a retry budget, or dropping expired requests, recovers every seed within seconds of the trigger’s end', () => {
    for (const row of [throttled!, dropExpired!]) {
      expect(row.recovered).toBe(20);
      expect(row.recoveryS!.max).toBeLessThanOrEqual(10);
      expect(row.goodputShare.min).toBeGreaterThan(0.95);
      expect(row.offeredRatio.mean).toBeLessThan(1.05);
    }
    // Without retries the backlog only drains at capacity minus load (50/s): slower than dropping it.
    expect(noRetry!.recovered).toBe(20);
    expect(noRetry!.recoveryS!.mean).toBeGreaterThan(dropExpired!.recoveryS!.mean);
  });
});

describe('metastableRun: the model’s bookkeeping', () => {
  it('is deterministic per seed, and seeds differ', () => {
    const a = metastableRun(policy('3 retries + jitter'), METASTABLE_SETUP, 3);
    expect(metastableRun(policy('3 retries + jitter'), METASTABLE_SETUP, 3)).toEqual(a);
    expect(metastableRun(policy('3 retries + jitter'), METASTABLE_SETUP, 4).fresh).not.toEqual(a.fresh);
  });

  it('without a trigger (factor 1) every policy serves every second and wastes nothing after warm-up', () => {
    const setup = metastableSetup({ trigger: { factor: 1 } });
    for (const p of METASTABLE_POLICIES) {
      const run = metastableRun(p, setup, 0);
      expect(run.recoveryS).toBe(0);
      expect(sum(run.goodput.slice(5))).toBeGreaterThan(0.97 * sum(run.fresh.slice(5)));
      expect(Math.max(...run.queue)).toBeLessThan(60);
    }
  });

  it('open-loop arrivals: about ratePerSecond new requests a second, and a spike multiplies them while it lasts', () => {
    const spike = metastableSetup({ trigger: { kind: 'spike', startMs: 10_000, endMs: 15_000, factor: 3 } });
    let before = 0;
    let during = 0;
    for (const seed of SEEDS) {
      const run = metastableRun(policy('no retry'), spike, seed);
      before += sum(run.fresh.slice(0, 10));
      during += sum(run.fresh.slice(10, 15));
    }
    // Poisson counts: 40,000 expected before (sd 200) and 60,000 during (sd 245); 4 sd either way.
    expect(before).toBeGreaterThan(40_000 - 800);
    expect(before).toBeLessThan(40_000 + 800);
    expect(during).toBeGreaterThan(60_000 - 1000);
    expect(during).toBeLessThan(60_000 + 1000);
  });

  it('no retry: every new request is offered exactly once', () => {
    const run = metastableRun(policy('no retry'), METASTABLE_SETUP, 1);
    expect(run.offered).toEqual(run.fresh);
  });

  it('a constant service time below the timeout at low load: every answer is on time', () => {
    const setup = metastableSetup({ ratePerSecond: 20, server: { workers: 5, serviceMs: 100, service: 'constant' }, trigger: { factor: 1 } });
    const run = metastableRun(policy('3 retries'), setup, 0);
    expect(sum(run.wasted)).toBe(0);
    expect(run.gaveUp).toBe(0);
    expect(run.offered).toEqual(run.fresh);
    // Answers land 100 ms after their send: all but the last 100 ms's arrivals are answered in the run.
    expect(sum(run.fresh) - sum(run.goodput)).toBeLessThanOrEqual(5);
  });

  it('adaptive throttling (one per process): sends everything while the server keeps up, refuses attempts locally once timeouts pile up', () => {
    const adaptive: PolicySpec = { ...policy('3 retries + jitter'), name: 'adaptive', throttle: { kind: 'adaptive throttling', k: 2, windowMs: 10_000, buckets: 10, maxRejectionProbability: 1 } };
    const calm = metastableRun(adaptive, metastableSetup({ trigger: { factor: 1 } }), 0);
    // A cold throttle (no accepts yet) refuses some of the first second's requests, by the SRE book's rule; then hardly any.
    expect(calm.offered[0]!).toBeLessThan(calm.fresh[0]!);
    expect(calm.gaveUp).toBeLessThan(0.01 * sum(calm.fresh));
    expect(sum(calm.offered.slice(2))).toBeGreaterThanOrEqual(sum(calm.fresh.slice(2)));
    const run = metastableRun(adaptive, METASTABLE_SETUP, 0);
    const plain = metastableRun(policy('3 retries + jitter'), METASTABLE_SETUP, 0);
    // Refused attempts are not offered: after the trigger the server sees less than the new requests, plain retries 4×.
    expect(run.gaveUp).toBeGreaterThan(1000);
    expect(sum(run.offered.slice(20))).toBeLessThan(sum(run.fresh.slice(20)));
    expect(sum(plain.offered.slice(20))).toBeGreaterThan(3 * sum(plain.fresh.slice(20)));
    expect(invalidOption(() => metastableRun({ ...adaptive, throttle: { ...adaptive.throttle!, k: 0.5 } }, METASTABLE_SETUP, 0)).message).toContain('policy.throttle.k');
  });

  it('shedding: herdless/server’s LoadShedder without a queue never lets one build, and sheds during the trigger', () => {
    const run = metastableRun(policy('3 retries'), metastableSetup({ server: { shedding: true } }), 0);
    expect(Math.max(...run.queue)).toBe(0);
    expect(sum(run.shed.slice(10, 16))).toBeGreaterThan(sum(run.shed.slice(0, 10)));
    expect(run.recoveryS).not.toBeNull();
  });

  it('LIFO serves the newest first: with plain retries it recovers, leaving stale requests at the bottom', () => {
    const run = metastableRun(policy('3 retries'), metastableSetup({ server: { discipline: 'lifo' } }), 0);
    expect(run.recoveryS).not.toBeNull();
    expect(run.queue[30]!).toBeGreaterThan(100);
  });

  it('the default combinations: every policy on FIFO, then plain retries on each protected server', () => {
    expect(metastableCombinations().map((c) => `${c.policy.name} · ${c.server}`)).toEqual([
      'no retry · FIFO',
      '3 retries · FIFO',
      '3 retries + jitter · FIFO',
      '3 retries + gRPC throttling · FIFO',
      '3 retries + 10% retry ratio · FIFO',
      '3 retries + Finagle budget · FIFO',
      '3 retries + AWS retry quota · FIFO',
      '3 retries · LIFO',
      '3 retries · drop expired',
      '3 retries · shedding',
    ]);
  });
});

describe('recovery(): the first of 3 seconds in a row with goodput ≥ 90% of the new requests, after the trigger', () => {
  const fresh = [100, 100, 100, 100, 100, 100, 100, 100];
  it.each([
    [[100, 0, 0, 90, 95, 89, 90, 90], 1000, null],
    [[100, 0, 0, 90, 95, 90, 90, 90], 1000, 2],
    [[100, 100, 100, 100, 0, 0, 0, 0], 1000, 0],
    [[0, 0, 95, 95, 95, 0, 0, 0], 1500, 0.5],
    [[0, 0, 0, 0, 0, 100, 100, 100], 1000, 4],
    [[0, 0, 0, 0, 0, 0, 100, 100], 1000, null],
  ])('goodput %j, trigger ending at %d ms → %s', (goodput, endMs, expected) => {
    expect(recovery({ fresh, goodput }, endMs)).toBe(expected);
  });
});

describe('metastableSetup: every field checked, named in the error', () => {
  it.each([
    [{ ratePerSecond: 0 }, 'metastable: ratePerSecond must be'],
    [{ processes: 1.5 }, 'metastable: processes must be'],
    [{ timeoutMs: -1 }, 'metastable: timeoutMs must be'],
    [{ horizonMs: 4500 }, 'metastable: horizonMs must be a whole number of seconds, got 4500'],
    [{ server: { workers: 0 } }, 'metastable: server.workers must be'],
    [{ server: { service: 'uniform' } }, 'metastable: server.service must be one of exponential, constant, got "uniform"'],
    [{ server: { discipline: 'random' } }, 'metastable: server.discipline must be one of fifo, lifo, got "random"'],
    [{ server: { dropExpired: 'yes' } }, 'metastable: server.dropExpired must be true or false, got "yes"'],
    [{ server: { queue: 5 } }, 'metastable: queue is not an option'],
    [{ trigger: { kind: 'spike', factor: 0.5 } }, 'metastable: trigger.factor must be'],
    [{ trigger: { factor: 2 } }, 'metastable: trigger.factor must be'],
    [{ trigger: { startMs: 20_000, endMs: 10_000 } }, 'metastable: trigger.endMs must be'],
    // The run must last the recovery rule's 3 seconds past the trigger, or "metastable" would mean nothing.
    [{ trigger: { startMs: 10_000, endMs: 58_000 } }, 'metastable: trigger.endMs must be ≤ 57000, got 58000'],
    [{ horizonMs: 2000 }, 'metastable: horizonMs must be'],
    [{ ratePerSecond: 100_000, horizonMs: 3_600_000 }, 'metastable: ratePerSecond'],
  ])('%j is refused', (options, message) => {
    expect(invalidOption(() => metastableSetup(options as never)).message).toContain(message);
  });

  it('a bad policy or seed is refused too', () => {
    expect(invalidOption(() => metastableRun({ ...policy('3 retries'), maxAttempts: 0 }, METASTABLE_SETUP, 0)).message).toContain('policy.maxAttempts');
    expect(invalidOption(() => metastableRun({ ...policy('3 retries'), maxAttempts: null }, METASTABLE_SETUP, 0)).message).toContain('policy.maxAttempts');
    expect(invalidOption(() => metastableRun({ ...policy('3 retries'), backoff: { kind: 'nope' } as never }, METASTABLE_SETUP, 0)).message).toContain('policy.backoff');
    expect(invalidOption(() => metastableRun(policy('3 retries'), METASTABLE_SETUP, -1)).message).toContain('seed');
    expect(invalidOption(() => runMetastable(metastableCombinations(), [])).message).toContain('seeds must list at least one seed');
  });
});
