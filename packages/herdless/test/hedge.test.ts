import { describe, expect, it } from 'vitest';
import { settle } from './support/settle.js';
import {
  ManualClock,
  circuitBreaker,
  consecutiveFailures,
  constantBackoff,
  createHedger,
  hedge,
  isRetryError,
  latencyPercentile,
  markDoNotRetry,
  retry,
  retryRatioBudget,
  retryThrottlingBudget,
  InvalidOptionError,
  type HedgeContext,
  type RetryBudget,
  type RetryError,
  type TelemetryEvent,
} from 'herdless';

const unavailable = (label: string) => Object.assign(new Error(label), { status: 503 });

/** A replica in virtual time: attempt n answers after `latencies[n-1]` ms (value `r<n>`) or fails with `failures[n-1]`. */
function replicas(clock: ManualClock, latencies: readonly number[], failures: readonly (unknown | undefined)[] = []) {
  const log: { attempt: number; startedAt: number; endedAt?: number; aborted?: unknown }[] = [];
  const op = ({ attempt, signal }: HedgeContext): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const entry: (typeof log)[number] = { attempt, startedAt: clock.now() };
      log.push(entry);
      const handle = clock.setTimeout(() => {
        entry.endedAt = clock.now();
        const failure = failures[attempt - 1];
        if (failure !== undefined) reject(failure);
        else resolve(`r${attempt}`);
      }, latencies[attempt - 1] ?? 1_000_000);
      signal.addEventListener('abort', () => {
        entry.aborted = signal.reason;
        entry.endedAt = clock.now();
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
  return { op, log };
}


describe('hedge(): the first success wins', () => {
  it('a slow first attempt: the hedge goes at the delay, answers first, and the first is aborted', async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [500, 20]);
    const out = await settle(clock, hedge(op, { delayMs: 50, clock }));
    expect(out.value).toBe('r2');
    expect(out.at).toBe(70); // 50 ms delay + 20 ms for the hedge, not 500
    expect(log.map((e) => e.startedAt)).toEqual([0, 50]);
    expect(log[0]!.endedAt).toBe(70);
    expect((log[0]!.aborted as { code: string }).code).toBe('ERR_HERDLESS_HEDGE_LOST');
    expect(clock.pending).toBe(0);
  });

  it('a fast first attempt: no hedge is sent and no timer is left', async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [30]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, clock }));
    expect(out).toEqual({ value: 'r1', at: 30 });
    expect(log).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });

  it('maxAttempts 3: hedges at 40 and 80 ms, the earliest answer wins whichever attempt it is', async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [1000, 1000, 10]);
    const hedges: number[] = [];
    const out = await settle(clock, hedge(op, { delayMs: 40, maxAttempts: 3, clock, onHedge: (e) => hedges.push(e.afterMs) }));
    expect(out).toEqual({ value: 'r3', at: 90 });
    expect(hedges).toEqual([40, 80]);
    expect(log.filter((e) => e.aborted !== undefined).map((e) => e.attempt)).toEqual([1, 2]);
  });

  it('a non-fatal failure sends the next hedge at once, not at the delay', async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [5, 10], [unavailable('a')]);
    const out = await settle(clock, hedge(op, { delayMs: 100, clock }));
    expect(out).toEqual({ value: 'r2', at: 15 });
    expect(log.map((e) => e.startedAt)).toEqual([0, 5]);
  });

  it("a failure with the server's hint: the next hedge waits for the hint (gRFC A6 pushback)", async () => {
    const clock = new ManualClock();
    const pushback = Object.assign(unavailable('later'), { retryAfterMs: 30 });
    const { op, log } = replicas(clock, [5, 10], [pushback]);
    const out = await settle(clock, hedge(op, { delayMs: 100, clock }));
    expect(out).toEqual({ value: 'r2', at: 45 });
    expect(log.map((e) => e.startedAt)).toEqual([0, 35]);
  });

  it('a fatal failure ends the call at once and aborts the attempts in flight', async () => {
    const clock = new ManualClock();
    const notFound = Object.assign(new Error('nope'), { status: 404 });
    const { op, log } = replicas(clock, [1000, 30], [undefined, notFound]);
    const out = await settle(clock, hedge(op, { delayMs: 10, clock }));
    expect(isRetryError(out.error, 'fatal')).toBe(true);
    expect((out.error as RetryError).cause).toBe(notFound);
    expect(out.at).toBe(40);
    expect(log[0]!.aborted).toBeDefined();
  });

  it('every attempt fails: a RetryError with reason exhausted after maxAttempts', async () => {
    const clock = new ManualClock();
    const { op } = replicas(clock, [5, 5, 5], [unavailable('1'), unavailable('2'), unavailable('3')]);
    const out = await settle(clock, hedge(op, { delayMs: 100, maxAttempts: 3, clock }));
    const error = out.error as RetryError;
    expect(error.reason).toBe('exhausted');
    expect(error.attempts).toBe(3);
    expect(error.failures.map((f) => f.attempt)).toEqual([1, 2, 3]);
    expect(out.at).toBe(15);
  });

  it("the caller's abort aborts every attempt and rejects with its reason", async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [1000, 1000]);
    const controller = new AbortController();
    const call = hedge(op, { delayMs: 10, clock, signal: controller.signal });
    await clock.advance(20);
    controller.abort(new Error('bye'));
    const out = await settle(clock, call);
    expect((out.error as Error).message).toBe('bye');
    expect(log.every((e) => (e.aborted as Error).message === 'bye')).toBe(true);
    expect(clock.pending).toBe(0);
  });
});

describe('hedge() under a retry budget (gRFC A6 accounting)', () => {
  it('a refusing budget: no hedge, the first attempt answers late, and the refusal is reported', async () => {
    const clock = new ManualClock();
    const budget = retryThrottlingBudget({ maxTokens: 2, tokenRatio: 0.1 });
    budget.onFailure(0); // 1 token left: not > maxTokens / 2
    const events: TelemetryEvent[] = [];
    const { op, log } = replicas(clock, [300]);
    const out = await settle(clock, hedge(op, { delayMs: 50, budget, clock, telemetry: { onEvent: (e) => events.push(e) } }));
    expect(out).toEqual({ value: 'r1', at: 300 });
    expect(log).toHaveLength(1);
    expect(events.filter((e) => e.type === 'budget-refusal')).toHaveLength(1);
  });

  it('hedges are reported as retries: onAttempt(isRetry) per send, onFailure per non-fatal failure, onSuccess for the winner', async () => {
    const clock = new ManualClock();
    const calls: string[] = [];
    const budget: RetryBudget = {
      name: 'spy',
      onAttempt: (_now, isRetry) => calls.push(`attempt ${isRetry}`),
      onSuccess: (_now, isRetry) => calls.push(`success ${isRetry}`),
      onFailure: () => calls.push('failure'),
      allowRetry: () => (calls.push('allow?'), true),
    };
    const { op } = replicas(clock, [5, 500, 20], [unavailable('a')]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, budget, clock }));
    expect(out.value).toBe('r3');
    // 1 fails at 5 → hedge 2 at once; at 55 hedge 3 (delay); 3 wins at 75; 2 (aborted) reports nothing.
    expect(calls).toEqual(['attempt false', 'failure', 'allow?', 'attempt true', 'allow?', 'attempt true', 'success true']);
  });

  it('a ratio budget holds hedges to its share of calls when every first attempt is slow', async () => {
    const clock = new ManualClock();
    const budget = retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 0, windowMs: 1_000_000 });
    const hedged = createHedger({ delayMs: 10, budget, clock });
    let sent = 0;
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      calls.push(
        hedged(({ signal }) => {
          sent++;
          return new Promise((resolve, reject) => {
            const h = clock.setTimeout(() => resolve(i), 100);
            signal.addEventListener('abort', () => (clock.clearTimeout(h), reject(signal.reason)));
          });
        }),
      );
      await clock.advance(1);
    }
    await clock.advance(1000);
    await Promise.allSettled(calls);
    // The ratio counts hedges among all requests: R ≤ 0.1 × (100 + R), so R ≤ 11 (amplification ≤ 1.11×).
    expect(sent - 100).toBe(11);
  });
});

describe('hedge() composed', () => {
  it('markDoNotRetry on a failure stops further hedges; the call gives up do-not-retry once nothing is in flight', async () => {
    const clock = new ManualClock();
    const { op, log } = replicas(clock, [5], [markDoNotRetry(unavailable('overloaded'))]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, clock }));
    expect(isRetryError(out.error, 'do-not-retry')).toBe(true);
    expect(log).toHaveLength(1);
    expect(out.at).toBe(5);
  });

  it('retry() outside hedge(): the hedged give-up carries the mark, so the outer retry makes exactly one hedged call', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const op = () => {
      attempts++;
      return Promise.reject(unavailable('down'));
    };
    const out = await settle(clock, retry(() => hedge(op, { delayMs: 10, maxAttempts: 2, clock }), { maxAttempts: 3, clock }));
    expect(isRetryError(out.error, 'do-not-retry')).toBe(true);
    expect(attempts).toBe(2); // not 3 × 2
  });

  it('hedge() outside retry(): an inner give-up stops further hedges (no multiplication)', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const inner = () =>
      retry(
        () => {
          attempts++;
          return Promise.reject(unavailable('down'));
        },
        { maxAttempts: 2, clock, backoff: constantBackoff({ delayMs: 1 }) },
      );
    const out = await settle(clock, hedge(inner, { delayMs: 1000, maxAttempts: 3, clock }));
    expect(isRetryError(out.error, 'do-not-retry')).toBe(true);
    expect(attempts).toBe(2); // one inner retry sequence, no hedges after its give-up
  });

  it('a breaker inside each attempt: an open circuit stops hedging with reason circuit-open', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock });
    await breaker.execute(() => Promise.reject(unavailable('down'))).catch(() => {});
    let calls = 0;
    const out = await settle(
      clock,
      hedge(
        () =>
          breaker.execute(() => {
            calls++;
            return 'ok';
          }),
        { delayMs: 10, maxAttempts: 3, clock },
      ),
    );
    expect(isRetryError(out.error, 'circuit-open')).toBe(true);
    expect(calls).toBe(0);
    expect((out.error as RetryError).attempts).toBe(1);
  });
});

describe('hedge() and the breaker', () => {
  it('a loser aborted by the winner is not a breaker failure', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock });
    const { op } = replicas(clock, [500, 20]);
    const out = await settle(clock, hedge((ctx) => breaker.execute(() => op(ctx)), { delayMs: 50, clock }));
    expect(out.value).toBe('r2');
    expect(breaker.state).toBe('closed');
  });
});

describe('latencyPercentile(): the delay follows the observed latencies', () => {
  it('the initial delay until minSamples, then the nearest-rank percentile, clamped', () => {
    const p = latencyPercentile({ percentile: 90, windowSize: 10, minSamples: 5, initialDelayMs: 77, maxDelayMs: 8 });
    for (let i = 1; i <= 4; i++) p.record(i);
    expect(p.delayMs()).toBe(77);
    p.record(5);
    expect(p.delayMs()).toBe(5); // ceil(0.9 × 5) = 5th of 1..5
    for (let i = 6; i <= 20; i++) p.record(i);
    expect(p.samples).toBe(10); // the window keeps 11..20
    expect(p.delayMs()).toBe(8); // the 9th of 11..20 is 19, clamped to maxDelayMs 8
    p.record(-1);
    p.record(NaN);
    expect(p.samples).toBe(10);
  });

  it('a hedger with a percentile delay hedges at the p50 of what it saw', async () => {
    const clock = new ManualClock();
    const delay = latencyPercentile({ percentile: 50, windowSize: 100, minSamples: 3, initialDelayMs: 1000 });
    const hedged = createHedger({ delayMs: delay, clock });
    for (const ms of [10, 20, 30]) {
      const { op } = replicas(clock, [ms]);
      await settle(clock, hedged(op));
    }
    expect(delay.delayMs()).toBe(20);
    const { op, log } = replicas(clock, [500, 5]);
    const start = clock.now();
    const out = await settle(clock, hedged(op));
    expect(log.map((e) => e.startedAt - start)).toEqual([0, 20]);
    expect(out.at - start).toBe(25);
    expect(delay.samples).toBe(4); // the first attempt's age when the hedge won: 25
  });
});

describe('hedge() options', () => {
  const clock = new ManualClock();
  const op = () => 1;
  it.each([
    [{}, 'delayMs', 'is required'],
    [{ delayMs: -1 }, 'delayMs', '≥ 0'],
    [{ delayMs: {} }, 'delayMs', 'latencyPercentile'],
    [{ delayMs: 5, maxAttempts: 0 }, 'maxAttempts', '≥ 1'],
    [{ delayMs: 5, maxAttempts: 11 }, 'maxAttempts', '≤ 10'],
    [{ delayMs: 5, maxAttempts: 1.5 }, 'maxAttempts', 'integer'],
    [{ delayMs: 5, budget: {} }, 'budget', 'RetryBudget'],
    [{ delayMs: 5, maxAtempts: 2 }, 'maxAtempts', 'not a hedging option'],
    [{ delayMs: 5, clock: {} }, 'clock', 'Scheduler'],
    [{ delayMs: 5, signal: 'x' }, 'signal', 'AbortSignal'],
    // Without removeEventListener the call could not take its listener off when it ends.
    [{ delayMs: 5, signal: { aborted: false, addEventListener: () => {} } }, 'signal', 'AbortSignal'],
  ])('%j → InvalidOptionError on %s', (options, field, text) => {
    let thrown: unknown;
    try {
      void hedge(op, { clock, ...(options as object) } as never);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    expect((thrown as InvalidOptionError).field).toBe(field);
    expect((thrown as Error).message).toContain(text);
  });

  it.each([
    [{ percentile: 100 }, 'percentile'],
    [{ percentile: 0 }, 'percentile'],
    [{ windowSize: 0 }, 'windowSize'],
    [{ windowSize: 10, minSamples: 11 }, 'minSamples'],
    [{ minDelayMs: 10, maxDelayMs: 5 }, 'maxDelayMs'],
    [{ initialDelayMs: Infinity }, 'initialDelayMs'],
  ])('latencyPercentile(%j) → InvalidOptionError on %s', (options, field) => {
    expect(() => latencyPercentile(options)).toThrow(expect.objectContaining({ field }));
  });

  it('createHedger refuses a per-call policy option, and a signal at creation', () => {
    const hedged = createHedger({ delayMs: 5, clock });
    expect(() => hedged(op, { maxAttempts: 2 } as never)).toThrow(/not a per-call option/);
    expect(() => createHedger({ delayMs: 5, signal: new AbortController().signal } as never)).toThrow(/per-call option/);
    expect(hedged.policy.maxAttempts).toBe(2);
  });
});

describe('hedge() reports', () => {
  it('telemetry: attempt starts and ends (the loser aborted), the hedge with its trigger and time', async () => {
    const clock = new ManualClock();
    const events: TelemetryEvent[] = [];
    const { op } = replicas(clock, [500, 20]);
    await settle(clock, hedge(op, { delayMs: 50, clock, telemetry: { onEvent: (e) => events.push(e) } }));
    expect(events.map((e) => (e.type === 'attempt-end' ? `end ${e.attempt} ${e.outcome} ${e.durationMs}` : e.type === 'hedge' ? `hedge ${e.attempt} ${e.trigger} ${e.afterMs}` : `${e.type}`))).toEqual([
      'attempt-start',
      'hedge 2 delay 50',
      'attempt-start',
      'end 2 success 20',
      'end 1 aborted 20',
    ]);
    expect(events.every((e) => !('call' in e) || e.call.layer === 'hedge')).toBe(true);
  });

  it('an operation that throws synchronously is a failed attempt, not a thrown call', async () => {
    const clock = new ManualClock();
    let n = 0;
    const out = await settle(
      clock,
      hedge(
        () => {
          if (++n === 1) throw unavailable('sync');
          return 'second';
        },
        { delayMs: 50, clock },
      ),
    );
    expect(out).toEqual({ value: 'second', at: 0 });
  });

  it('a budget that confirms asynchronously (a shared budget): the hedge waits for its answer; a "no" stops hedging', async () => {
    const clock = new ManualClock();
    const base = retryThrottlingBudget();
    let asked = 0;
    const budget: RetryBudget = {
      name: 'remote',
      onAttempt: (n, r) => base.onAttempt(n, r),
      onSuccess: (n, r) => base.onSuccess(n, r),
      onFailure: (n, t) => base.onFailure(n, t),
      allowRetry: (n) => base.allowRetry(n),
      confirmRetry: () => {
        asked++;
        return new Promise<boolean>((resolve) => clock.setTimeout(() => resolve(false), 5));
      },
    };
    const { op, log } = replicas(clock, [200]);
    const out = await settle(clock, hedge(op, { delayMs: 50, maxAttempts: 3, budget, clock }));
    expect(asked).toBe(1);
    expect(log).toHaveLength(1);
    expect(out).toEqual({ value: 'r1', at: 200 });
  });

  it('a hook that throws never changes the outcome', async () => {
    const clock = new ManualClock();
    const hookErrors: string[] = [];
    const { op } = replicas(clock, [500, 20]);
    const out = await settle(
      clock,
      hedge(op, {
        delayMs: 50,
        clock,
        onHedge: () => {
          throw new Error('hook');
        },
        onHookError: (_e, hook) => hookErrors.push(hook),
      }),
    );
    expect(out.value).toBe('r2');
    expect(hookErrors).toEqual(['onHedge']);
  });
});
