import { describe, expect, it } from 'vitest';
import {
  HedgeError,
  ManualClock,
  RetryError,
  circuitBreaker,
  consecutiveFailures,
  hedge,
  isDoNotRetry,
  isHedgeError,
  isRetryError,
  markDoNotRetry,
  retry,
  retryRatioBudget,
  type HedgeContext,
} from 'herdless';

const unavailable = (label: string) => Object.assign(new Error(label), { status: 503 });

/** Attempt n fails after `at[n-1]` ms with `failures[n-1]` (or hangs until aborted). */
function failing(clock: ManualClock, at: readonly number[], failures: readonly unknown[]) {
  return ({ attempt, signal }: HedgeContext): Promise<never> =>
    new Promise<never>((_resolve, reject) => {
      const t = at[attempt - 1];
      if (t === undefined) return void signal.addEventListener('abort', () => reject(signal.reason));
      const handle = clock.setTimeout(() => reject(failures[attempt - 1]), t);
      signal.addEventListener('abort', () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
    });
}

async function rejection(clock: ManualClock, promise: Promise<unknown>): Promise<unknown> {
  let error: unknown;
  let done = false;
  promise.then(
    () => (done = true),
    (e: unknown) => {
      error = e;
      done = true;
    },
  );
  for (let i = 0; i < 10_000 && !done; i++) await clock.advance(1);
  if (!done) throw new Error('did not settle');
  return error;
}

describe('the give-up of a hedged call speaks of hedging', () => {
  it.each([
    [
      'exhausted',
      { maxAttempts: 3 },
      [5, 5, 5],
      [unavailable('one'), unavailable('two'), unavailable('three')],
      3,
      'hedged call gave up after 3 attempts (the first and 2 hedges) (exhausted): all 3 hedged attempts failed (maxAttempts 3); last failure: Error: three',
    ],
    [
      'fatal',
      { maxAttempts: 2 },
      [5],
      [Object.assign(new Error('gone'), { status: 404 })],
      1,
      'hedged call gave up after 1 attempt (the first and no hedge) (fatal): an attempt failed with a fatal (not retryable) failure, which ends a hedged call; the attempts in flight were cancelled; last failure: Error: gone',
    ],
    [
      'do-not-retry',
      { maxAttempts: 3 },
      [5],
      [markDoNotRetry(new Error('overloaded'))],
      1,
      'hedged call gave up after 1 attempt (the first and no hedge) (do-not-retry): a failure said not to retry, so no more hedges were sent, and the attempts in flight failed; last failure: Error: overloaded',
    ],
    [
      'hint-too-long',
      { maxAttempts: 3, maxRetryAfterMs: 1000 },
      [5],
      [Object.assign(unavailable('later'), { retryAfterMs: 5000 })],
      1,
      'hedged call gave up after 1 attempt (the first and no hedge) (hint-too-long): the server asked to wait longer than maxRetryAfterMs (1000 ms) before the next hedge, and the attempts in flight failed; last failure: Error: later',
    ],
  ] as const)('%s: the message, the fields and the type', async (reason, options, at, failures, attempts, message) => {
    const clock = new ManualClock();
    const error = await rejection(clock, hedge(failing(clock, at, failures), { delayMs: 100, clock, ...options }));
    expect(error).toBeInstanceOf(HedgeError);
    expect(error).toBeInstanceOf(RetryError);
    const e = error as HedgeError;
    expect(e.message).toBe(message);
    expect(e.message).not.toContain('retry gave up');
    expect([e.name, e.code, e.reason, e.attempts, e.hedges]).toEqual(['HedgeError', 'ERR_HERDLESS_HEDGE', reason, attempts, attempts - 1]);
    expect(e.cause).toBe(failures[attempts - 1]);
    expect(e.failures.map((f) => f.error)).toEqual(failures.slice(0, attempts));
    expect(isHedgeError(e)).toBe(true);
    expect(isHedgeError(e, reason)).toBe(true);
    expect(isHedgeError(e, reason === 'fatal' ? 'exhausted' : 'fatal')).toBe(false);
    // Still a RetryError for code written against retry(): the guard, the reason, the mark.
    expect(isRetryError(e, reason)).toBe(true);
    expect(isDoNotRetry(e)).toBe(true);
  });

  it('budget: a refused hedge, then the attempt in flight fails', async () => {
    const clock = new ManualClock();
    // A ratio budget with no requests seen yet refuses every retry beyond its minimum (0 here).
    const budget = retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 0 });
    const error = (await rejection(clock, hedge(failing(clock, [200], [unavailable('slow then down')]), { delayMs: 50, budget, clock }))) as HedgeError;
    expect(error.message).toBe(
      'hedged call gave up after 1 attempt (the first and no hedge) (budget): the retry budget "retry ratio" refused the next hedge, and the attempts in flight failed; last failure: Error: slow then down',
    );
    expect([error.reason, error.attempts, error.hedges]).toEqual(['budget', 1, 0]);
  });

  it('circuit-open: an open circuit stops hedging', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock });
    breaker.isolate();
    const error = (await rejection(
      clock,
      hedge(() => breaker.execute(() => 'never'), { delayMs: 50, maxAttempts: 3, clock }),
    )) as HedgeError;
    expect(error.reason).toBe('circuit-open');
    expect(error.message).toMatch(/^hedged call gave up after 1 attempt \(the first and no hedge\) \(circuit-open\): the circuit is open, so no more hedges were sent/);
  });

  it("retry()'s give-up is unchanged: a RetryError, not a HedgeError", async () => {
    const clock = new ManualClock();
    const error = (await rejection(clock, retry(() => Promise.reject(unavailable('down')), { maxAttempts: 2, clock }))) as RetryError;
    expect(error.constructor).toBe(RetryError);
    expect([error.name, error.code]).toEqual(['RetryError', 'ERR_HERDLESS_RETRY']);
    expect(error.message).toMatch(/^retry gave up after 2 attempts \(exhausted\)/);
    expect(isHedgeError(error)).toBe(false);
    expect(isRetryError(error)).toBe(true);
  });

  it('retry(() => hedge(op)): the outer retry sees the hedged give-up as "do not retry" and stops', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const op = (context: HedgeContext): Promise<never> => {
      calls++;
      return failing(clock, [5, 5], [unavailable('a'), unavailable('b')])(context);
    };
    const error = (await rejection(clock, retry(() => hedge(op, { delayMs: 100, clock }), { maxAttempts: 3, clock }))) as RetryError;
    expect(error.reason).toBe('do-not-retry');
    expect(isHedgeError(error.cause, 'exhausted')).toBe(true);
    expect(calls).toBe(2);
  });

  it('a HedgeError made directly: no attempt, no failure', () => {
    const e = new HedgeError('budget', 0, undefined, 'nothing was sent');
    expect(e.message).toBe('hedged call gave up before any attempt (budget): nothing was sent');
    expect(e.hedges).toBe(0);
  });
});
