import { describe, expect, it } from 'vitest';
import { InvalidOptionError, ManualClock, RetryError, circuitBreaker, consecutiveFailures, constantBackoff, createRetry, exponentialBackoff, isRetryError, retry, type Scheduler } from 'herdless';
import { RETRY_ERROR_FIRST_FAILURES, RETRY_ERROR_LAST_FAILURES } from 'herdless/core';

const transient = (n: number): Error => Object.assign(new Error(`blip ${n}`), { code: 'ECONNRESET' });

/** An operation whose attempt n fails with `transient(n)`; `fatalAt` makes that attempt fail with a TypeError. */
function failing(fatalAt = Infinity) {
  let n = 0;
  return () => {
    n++;
    return Promise.reject(n === fatalAt ? new TypeError(`bug ${n}`) : transient(n));
  };
}

const messages = (error: RetryError): [number, string][] => error.failures.map((f) => [f.attempt, (f.error as Error).message]);

describe('RetryError.failures: every attempt\'s failure, in order, bounded', () => {
  it('keeps 10: the first and the last nine', () => {
    expect([RETRY_ERROR_FIRST_FAILURES, RETRY_ERROR_LAST_FAILURES]).toEqual([1, 9]);
  });

  it.each([
    ['plain path', {}],
    ['guarded path (deadline)', { deadlineMs: 1_000_000, clock: new ManualClock() }],
    ['guarded path (signal)', { signal: new AbortController().signal }],
  ])('4 attempts, all failed (%s): four failures in order, none omitted; cause is the last', async (_path, extra) => {
    const error = (await retry(failing(), { maxAttempts: 4, backoff: constantBackoff(), ...extra }).catch((e: unknown) => e)) as RetryError;
    expect(isRetryError(error, 'exhausted')).toBe(true);
    expect(messages(error)).toEqual([
      [1, 'blip 1'],
      [2, 'blip 2'],
      [3, 'blip 3'],
      [4, 'blip 4'],
    ]);
    expect(error.omittedFailures).toBe(0);
    expect(error.cause).toBe(error.failures[3]!.error);
    expect(Object.isFrozen(error.failures)).toBe(true);
  });

  it('25 attempts: attempt 1, then attempts 17–25; 15 omitted', async () => {
    const error = (await retry(failing(), { maxAttempts: 25, backoff: constantBackoff() }).catch((e: unknown) => e)) as RetryError;
    expect(messages(error)).toEqual([[1, 'blip 1'], ...Array.from({ length: 9 }, (_, i): [number, string] => [17 + i, `blip ${17 + i}`])]);
    expect(error.omittedFailures).toBe(15);
    expect(error.attempts).toBe(25);
  });

  it('a fatal failure after retryable ones: all three, the fatal one last', async () => {
    const error = (await createRetry({ maxAttempts: 5, backoff: constantBackoff() })(failing(3)).catch((e: unknown) => e)) as RetryError;
    expect(error.reason).toBe('fatal');
    expect(messages(error)).toEqual([
      [1, 'blip 1'],
      [2, 'blip 2'],
      [3, 'bug 3'],
    ]);
  });

  it('a RetryError built by hand lists its cause as the one failure', () => {
    const cause = new Error('x');
    expect(new RetryError('exhausted', 2, cause).failures).toEqual([{ attempt: 2, error: cause }]);
    expect(new RetryError('deadline', 0, undefined).failures).toEqual([]);
  });
});

describe('a broken injected RNG is named, never blamed on a backoff', () => {
  it.each([50, 1, -0.1, Number.NaN, '0.5', undefined])('random() returning %s with the default backoff rejects naming random.random()', async (value) => {
    const error = await retry(failing(), { random: { random: () => value as number } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).field).toBe('random.random()');
    expect((error as Error).message).toMatch(/^retry: random\.random\(\) must return a number in \[0, 1\) \(a bug in the injected Rng\), got /);
    expect((error as Error).message).not.toMatch(/custom Backoff/);
  });

  it('a good injected RNG is used as it is (0.999… and 0 are fine)', async () => {
    const delays: number[] = [];
    for (const x of [0, 0.9999999999]) {
      await retry(failing(), { maxAttempts: 2, random: { random: () => x }, backoff: exponentialBackoff({ initialBackoffMs: 0 }), onRetry: (e) => void delays.push(e.delayMs) }).catch(() => undefined);
    }
    expect(delays).toEqual([0, 0]);
  });

  it('the breaker names its random source too (a jittered openDurationMs)', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ clock, counting: consecutiveFailures({ threshold: 1 }), openDurationMs: { name: 'j', maxDelayMs: 100, delay: (_n: number, _p: number, rng: { random(): number }) => 100 * rng.random(), toJSON: () => ({ kind: 'constant', delayMs: 0 }) } as never, random: { random: () => 50 } });
    const error = await breaker.execute(() => Promise.reject(transient(0))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(/^circuitBreaker: random\.random\(\) must return a number in \[0, 1\)/);
  });
});

describe('a broken injected clock fails the call, naming the clock', () => {
  const broken = (value: unknown, after = 0): Scheduler => {
    const inner = new ManualClock();
    let reads = 0;
    return {
      now: () => (reads++ < after ? inner.now() : (value as number)),
      setTimeout: (cb, ms) => inner.setTimeout(cb, ms),
      clearTimeout: (h) => inner.clearTimeout(h),
    };
  };

  it.each([Number.NaN, undefined, Infinity, -Infinity, '5'])('now() → %s: retry() with deadlineMs rejects at once, naming clock.now()', async (value) => {
    let attempts = 0;
    const error = await retry(
      () => {
        attempts++;
        return 1;
      },
      { deadlineMs: 1000, clock: broken(value) },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(/^retry: clock\.now\(\) must return a finite number of ms \(a bug in the injected clock\), got /);
    expect(attempts).toBe(0);
  });

  it('now() turning NaN mid-call (no deadline): the failure that reads it rejects naming the clock, no retry', async () => {
    let attempts = 0;
    const error = await createRetry({ maxAttempts: 5, backoff: constantBackoff({ delayMs: 10 }), clock: broken(Number.NaN) })(() => {
      attempts++;
      return Promise.reject(transient(attempts));
    }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^createRetry: clock\.now\(\) must return a finite number/);
    expect(attempts).toBe(1);
  });

  it.each([Number.NaN, undefined, Infinity, -Infinity])('the breaker: now() → %s once open rejects naming clock.now() instead of letting calls through', async (value) => {
    // The first read (opening) is good; every later one is broken.
    const breaker = circuitBreaker({ clock: broken(value, 1), counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 1000 });
    await breaker.execute(() => Promise.reject(transient(0))).catch(() => undefined);
    let ran = 0;
    const error = await breaker
      .execute(() => {
        ran++;
        return 1;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(/^circuitBreaker: clock\.now\(\) must return a finite number/);
    expect(ran).toBe(0);
    // Reading the state does not throw: a broken reading moves nothing.
    expect(breaker.state).toBe('open');
    expect(() => breaker.snapshot()).toThrow(InvalidOptionError);
  });
});

describe('a finite clock that steps backwards never asks for a timer longer than the deadline', () => {
  it.each([Number.MAX_VALUE, 2e12])('first reading %s, then 1000: deadlineMs 50 schedules a 50 ms timer, and the deadline still ends the call', async (first) => {
    const inner = new ManualClock();
    const asked: number[] = [];
    let reads = 0;
    const clock: Scheduler = {
      now: () => (reads++ === 0 ? first : 1000 + inner.now()),
      setTimeout: (cb, ms) => {
        asked.push(ms);
        return inner.setTimeout(cb, ms);
      },
      clearTimeout: (h) => inner.clearTimeout(h),
    };
    const call = retry(() => new Promise<never>(() => undefined), { maxAttempts: 1, deadlineMs: 50, clock }).catch((e: unknown) => e);
    await Promise.resolve();
    expect(asked).toEqual([50]);
    await inner.advance(50);
    const error = (await call) as RetryError;
    expect(isRetryError(error)).toBe(true);
    expect(error.attempts).toBe(1);
  });
});
