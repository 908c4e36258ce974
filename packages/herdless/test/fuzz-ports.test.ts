import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { circuitBreaker, failureRatio, fullJitterBackoff, isInvalidOptionError, retry, retryRatioBudget, retryThrottlingBudget, type Backoff, type RetryBudget, type Rng, type Scheduler } from 'herdless';
import { MAX_DELAY_MS } from 'herdless/core';
import { runScenario } from 'herdless/sim';

/*
 * Fuzzing the injected ports of retry() and the breaker — clock, RNG, scheduler, custom backoff,
 * custom budget — with well-behaved and broken implementations alike. Whatever a port does, the
 * call settles (resolves, or rejects with an Error) within a bounded number of timer firings;
 * every wait handed to the scheduler is a number of ms in [0, 2^31 − 1] (never NaN, negative or
 * Infinity); and no promise rejection goes unhandled. Which error names which broken port is
 * checked where that checking lives (the retry options' own tests). Fixed seed (vitest.setup.ts)
 * and every case of every property, however slow the machine (no time limit: a slow machine must
 * test the same inputs as a fast one).
 */


const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** Lets queued promise callbacks run (one macrotask). */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock reading: virtual time itself (from an origin that may be far out: 2e12, 2^53, where ms
 * round), a broken value (NaN, ±Infinity), or a finite reading far off (a clock that jumps forwards
 * or backwards by days or more).
 */
type Reading = 'time' | number;
const reading: fc.Arbitrary<Reading> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('time' as const) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity) },
  { weight: 1, arbitrary: fc.constantFrom(Number.MAX_VALUE, 2e12, -2e12, 2 ** 53) },
);
const origin = fc.constantFrom(0, 0, 0, 1e6, 2e12, 2 ** 53);

/** How a hostile scheduler treats a timer. */
type Firing = 'on time' | 'late' | 'early' | 'twice';
const firing: fc.Arbitrary<Firing> = fc.oneof({ weight: 6, arbitrary: fc.constant('on time' as const) }, { weight: 1, arbitrary: fc.constantFrom('late' as const, 'early' as const, 'twice' as const) });

/**
 * A virtual scheduler whose `now()` follows a script of readings and whose timers fire on time,
 * late, early or twice; it records every delay it is asked for.
 */
class HostileScheduler implements Scheduler {
  time = 0;
  delays: unknown[] = [];
  private timers: { id: number; at: number; callback: () => void; twice: boolean }[] = [];
  private seq = 0;
  private read = 0;
  constructor(
    private readonly readings: readonly Reading[],
    private readonly firings: readonly Firing[],
    private readonly origin = 0,
  ) {}
  now(): number {
    const r = this.readings.length === 0 ? 'time' : this.readings[this.read++ % this.readings.length]!;
    return r === 'time' ? this.origin + this.time : r;
  }
  setTimeout(callback: () => void, delayMs: number): unknown {
    this.delays.push(delayMs);
    const mode = this.firings.length === 0 ? 'on time' : this.firings[this.seq % this.firings.length]!;
    const wait = typeof delayMs === 'number' && Number.isFinite(delayMs) ? delayMs : 0;
    const at = this.time + (mode === 'late' ? wait * 3 + 1 : mode === 'early' ? 0 : wait);
    const id = ++this.seq;
    this.timers.push({ id, at, callback, twice: mode === 'twice' });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  /** Fires the earliest timer (moving time to it); false when none is pending. */
  fireNext(): boolean {
    if (this.timers.length === 0) return false;
    this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
    const t = this.timers.shift()!;
    this.time = Math.max(this.time, t.at);
    t.callback();
    if (t.twice) t.callback();
    return true;
  }
}

/** An RNG drawing from a script (mostly [0, 1), sometimes out of range or not a number). */
const draws = fc.array(
  fc.oneof({ weight: 8, arbitrary: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(Number.NaN, 1, -0.5, 50, Infinity) }),
  { minLength: 1, maxLength: 8 },
);
const scriptedRng = (values: readonly number[]): Rng => {
  let i = 0;
  return { random: () => values[i++ % values.length]! };
};

/** What a custom backoff's delay() does: a value (any) or a throw. */
const delayResult = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 1000 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(Number.NaN, -1, Infinity, MAX_DELAY_MS + 1, '5', null, undefined, 'throw') },
);
const customBackoff = (results: readonly unknown[]): Backoff => {
  let i = 0;
  return {
    name: 'fuzzed',
    maxDelayMs: 1000,
    delay: () => {
      const r = results[i++ % results.length];
      if (r === 'throw') throw new Error('backoff failed');
      return r as number;
    },
    toJSON: () => ({ kind: 'constant', delayMs: 0 }),
  };
};

/** A custom budget whose methods answer from a script, or throw. */
const budgetAnswer = fc.constantFrom<unknown>(true, false, true, undefined, 'yes', 'throw');
const customBudget = (answers: readonly unknown[]): RetryBudget => {
  let i = 0;
  const next = () => {
    const a = answers[i++ % answers.length];
    if (a === 'throw') throw new Error('budget failed');
    return a;
  };
  return { name: 'fuzzed', onAttempt: () => void next(), onSuccess: () => void next(), onFailure: () => void next(), allowRetry: () => next() as boolean };
};

const budget = fc.oneof(
  fc.constant(undefined),
  fc.constant('throttling' as const),
  fc.constant('ratio' as const),
  fc.array(budgetAnswer, { minLength: 1, maxLength: 6 }),
);

const makeBudget = (b: undefined | 'throttling' | 'ratio' | unknown[]): RetryBudget | undefined =>
  b === undefined ? undefined : b === 'throttling' ? retryThrottlingBudget({ maxTokens: 4, tokenRatio: 0.5 }) : b === 'ratio' ? retryRatioBudget() : customBudget(b);

/** Drives a call on the hostile scheduler until it settles or `maxFirings` timers have fired. */
async function drive(scheduler: HostileScheduler, call: Promise<unknown>, maxFirings = 200): Promise<{ settled: boolean; outcome?: 'ok' | 'error'; error?: unknown }> {
  let state: { settled: boolean; outcome?: 'ok' | 'error'; error?: unknown } = { settled: false };
  call.then(
    () => (state = { settled: true, outcome: 'ok' }),
    (error: unknown) => (state = { settled: true, outcome: 'error', error }),
  );
  for (let i = 0; i <= maxFirings; i++) {
    await tick();
    if (state.settled) return state;
    if (!scheduler.fireNext()) {
      await tick();
      return state;
    }
  }
  return state;
}

const checkDelays = (delays: readonly unknown[]) => {
  for (const d of delays) expect(typeof d === 'number' && d >= 0 && d <= MAX_DELAY_MS, `a wait of ${String(d)} ms`).toBe(true);
};

describe('fuzz: retry() with every injected port well-behaved or broken', () => {
  it('settles in bounded firings, never waits NaN/negative/∞, leaves no unhandled rejection', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          readings: fc.array(reading, { maxLength: 6 }),
          origin,
          firings: fc.array(firing, { maxLength: 4 }),
          rng: fc.option(draws, { nil: undefined }),
          backoff: fc.option(fc.array(delayResult, { minLength: 1, maxLength: 6 }), { nil: undefined }),
          budget,
          maxAttempts: fc.integer({ min: 1, max: 6 }),
          deadlineMs: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined }),
          attemptTimeoutMs: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
          outcomes: fc.array(fc.constantFrom('fail', 'fail', 'ok', 'hang', 'throw-sync'), { minLength: 1, maxLength: 6 }),
        }),
        async (c) => {
          const scheduler = new HostileScheduler(c.readings, c.firings, c.origin);
          let attempt = 0;
          const op = () => {
            const o = c.outcomes[attempt++ % c.outcomes.length];
            if (o === 'ok') return Promise.resolve('done');
            if (o === 'throw-sync') throw new Error('boom');
            if (o === 'hang') return new Promise<string>(() => {}); // only attemptTimeoutMs / deadlineMs end it
            return Promise.reject(new Error('unavailable'));
          };
          // An attempt that never settles is ended only by attemptTimeoutMs, or by deadlineMs measured
          // on a clock that reads real times (what a broken clock does to a deadline is checked
          // with the clock option's own validation).
          const saneClock = c.readings.every((r) => r === 'time');
          const hangs = c.outcomes.includes('hang') && c.attemptTimeoutMs === undefined && (c.deadlineMs === undefined || !saneClock);
          const options = {
            clock: scheduler,
            maxAttempts: c.maxAttempts,
            ...(c.rng ? { random: scriptedRng(c.rng) } : {}),
            ...(c.backoff ? { backoff: customBackoff(c.backoff) } : { backoff: fullJitterBackoff({ initialBackoffMs: 10, maxBackoffMs: 100 }) }),
            ...(makeBudget(c.budget) ? { budget: makeBudget(c.budget) } : {}),
            ...(c.deadlineMs === undefined ? {} : { deadlineMs: c.deadlineMs }),
            ...(c.attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs: c.attemptTimeoutMs }),
          };
          let call: Promise<unknown>;
          try {
            call = retry(op, options);
          } catch (error) {
            expect(error).toBeInstanceOf(Error); // options refused synchronously
            return;
          }
          const r = await drive(scheduler, call);
          checkDelays(scheduler.delays);
          if (!hangs) expect(r.settled).toBe(true);
          if (r.outcome === 'error') expect(r.error).toBeInstanceOf(Error);
          expect(attempt).toBeLessThanOrEqual(c.maxAttempts);
          expect(unhandled).toEqual([]);
        },
      ),
      { numRuns: 250 },
    );
  });
});

describe('fuzz: the circuit breaker with a well-behaved or broken clock', () => {
  it('every execute() settles and the state stays one of the three', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reading, { maxLength: 6 }), origin, fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), fc.boolean(), async (readings, start, outcomes, ratio) => {
        const scheduler = new HostileScheduler(readings, [], start);
        const breaker = circuitBreaker({
          clock: scheduler,
          openDurationMs: 100,
          ...(ratio ? { counting: failureRatio({ windowMs: 1000, minimumCalls: 2, buckets: 10 }) } : {}),
        });
        for (const ok of outcomes) {
          scheduler.time += 37;
          const settled = await breaker.execute(() => (ok ? Promise.resolve(1) : Promise.reject(new Error('down')))).then(
            () => true,
            (error: unknown) => error instanceof Error,
          );
          expect(settled).toBe(true);
          expect(['closed', 'open', 'half-open']).toContain(breaker.state);
        }
        expect(unhandled).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});

describe('fuzz: runScenario with hostile fields and a broken custom backoff or budget', () => {
  const bad = fc.constantFrom<unknown>(-1, Number.NaN, Infinity, -Infinity, 1.5, '5', null, undefined, {}, [], 1e12, 2 ** 40);
  const FIELDS = ['clients', 'horizonMs', 'stopWhenIdle', 'arrivals', 'arrivals.spreadMs', 'arrivals.ratePerSecond', 'server', 'server.tickMs', 'server.capacityPerTick', 'server.crashWindowTicks', 'server.crashLimit', 'server.restartMs', 'server.startupMs', 'server.outages', 'server.outages.0', 'server.outages.0.startMs', 'server.outages.0.endMs', 'policy', 'policy.maxAttempts', 'policy.backoff', 'policy.budget'] as const;

  it('returns a result or throws InvalidOptionError naming a scenario field or backoff.delay()', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...FIELDS), bad), { maxLength: 3 }),
        fc.boolean(),
        fc.option(fc.array(delayResult, { minLength: 1, maxLength: 4 }), { nil: undefined }),
        fc.option(fc.array(budgetAnswer, { minLength: 1, maxLength: 4 }), { nil: undefined }),
        fc.nat(5),
        (edits, poisson, backoff, answers, seed) => {
          const scenario: Record<string, unknown> = {
            clients: 30,
            arrivals: poisson ? { kind: 'poisson', ratePerSecond: 5 } : { kind: 'together', spreadMs: 100 },
            server: { tickMs: 10, capacityPerTick: 2, crashWindowTicks: 10, crashLimit: 20, restartMs: 100, startupMs: 50, outages: [{ startMs: 200, endMs: 400 }] },
            policy: { name: 'fuzz', backoff: backoff ? customBackoff(backoff) : fullJitterBackoff({ initialBackoffMs: 10, maxBackoffMs: 200 }), maxAttempts: 4, ...(answers ? { budget: () => customBudget(answers) } : {}) },
            horizonMs: 2000,
            stopWhenIdle: true,
          };
          for (const [path, value] of edits) {
            const keys = path.split('.');
            let at = scenario as Record<string, unknown>;
            for (const k of keys.slice(0, -1)) {
              if (typeof at[k] !== 'object' || at[k] === null) break;
              at = at[k] as Record<string, unknown>;
            }
            at[keys[keys.length - 1]!] = value;
          }
          try {
            const r = runScenario(scenario as never, seed);
            expect(r.requests).toBeGreaterThanOrEqual(0);
            expect(r.succeeded + r.gaveUp + r.outstanding).toBeGreaterThan(0);
          } catch (error) {
            // A broken budget's own throw passes through as is; everything else is named.
            if ((error as Error).message === 'budget failed' || (error as Error).message === 'backoff failed') return;
            expect(isInvalidOptionError(error), String(error)).toBe(true);
            expect((error as { field: string }).field).toMatch(/^(scenario\.|backoff\.delay\(\))/);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
