import { describe, expect, it } from 'vitest';
import { ManualClock, circuitBreaker, consecutiveFailures, exponentialBackoff, isRetryError, retry, retryThrottlingBudget, constantBackoff, type RetryError } from 'herdless';
import { PyRandom } from 'herdless/sim';

const unavailable = (label: string) => Object.assign(new Error(label), { status: 503 });

describe('retry() outside a circuit breaker', () => {
  it('an open breaker: 1 rejection, no sleep, ends at once with reason circuit-open', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 1 }), openDurationMs: 60_000, clock });
    await breaker.execute(() => Promise.reject(unavailable('down'))).catch(() => {});
    expect(breaker.state).toBe('open');

    let calls = 0;
    let rejections = 0;
    const retries: number[] = [];
    const result = retry(
      () =>
        breaker
          .execute(() => {
            calls++;
            return 'ok';
          })
          .catch((e: unknown) => {
            rejections++;
            throw e;
          }),
      {
        maxAttempts: 3,
        backoff: exponentialBackoff({ initialBackoffMs: 100, backoffMultiplier: 2, maxBackoffMs: 200 }), // waits 100 ms, 200 ms
        clock,
        onRetry: (e) => retries.push(e.delayMs),
      },
    ).catch((e: unknown) => e);
    const error = (await result) as RetryError;
    expect(isRetryError(error, 'circuit-open')).toBe(true);
    expect(error.attempts).toBe(1);
    expect(rejections).toBe(1);
    expect(calls).toBe(0);
    expect(retries).toEqual([]);
    expect(clock.pending).toBe(0);
    expect(clock.now()).toBe(0);
    expect(error.message).toContain('the circuit is open');
  });

  it('a closed breaker: retry() retries the dependency’s transient failures through it', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 5 }), clock });
    let calls = 0;
    const value = retry(
      () =>
        breaker.execute(() => {
          calls++;
          if (calls < 3) throw unavailable(`call ${calls}`);
          return 'ok';
        }),
      { maxAttempts: 3, backoff: constantBackoff({ delayMs: 50 }), clock },
    );
    await clock.runAll();
    expect(await value).toBe('ok');
    expect(calls).toBe(3);
    expect(clock.now()).toBe(100);
  });
});

describe('a retry budget shared by two calls', () => {
  it('each call makes up to maxAttempts attempts, limited only by the shared budget', async () => {
    const clock = new ManualClock();
    // 10 tokens: retries allowed while tokens > 5, i.e. for the first 4 failures overall (10 → 6).
    const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
    const counts = [0, 0];
    const call = (i: number) =>
      retry(
        () => {
          counts[i]!++;
          throw unavailable(`call ${i}`);
        },
        { maxAttempts: 4, backoff: constantBackoff({ delayMs: 10 }), clock, budget, random: new PyRandom(i) },
      ).catch((e: RetryError) => e);
    const a = call(0);
    const b = call(1);
    await clock.runAll();
    const [ea, eb] = await Promise.all([a, b]);
    // Failures alternate a, b, a, b, …: tokens 9, 8, 7, 6 (retries allowed), then 5 and 4 (refused):
    // each call retried twice, stopped by the shared budget before its own maxAttempts (4).
    expect(counts).toEqual([3, 3]);
    expect(ea.reason).toBe('budget');
    expect(eb.reason).toBe('budget');
    expect([ea.attempts, eb.attempts]).toEqual([3, 3]);
    expect(budget.tokens).toBe(4);
  });

  it('one call’s exhaustion does not change the other’s count', async () => {
    const clock = new ManualClock();
    const budget = retryThrottlingBudget({ maxTokens: 1000 });
    const counts = [0, 0];
    const call = (i: number, failures: number) =>
      retry(
        () => {
          counts[i]!++;
          if (counts[i]! <= failures) throw unavailable(`call ${i}`);
          return i;
        },
        { maxAttempts: 4, backoff: constantBackoff({ delayMs: 10 }), clock, budget },
      ).catch((e: RetryError) => e);
    const a = call(0, 10); // always failing: exhausts its 4 attempts
    const b = call(1, 2); // succeeds on its 3rd attempt
    await clock.runAll();
    const [ea, vb] = await Promise.all([a, b]);
    expect(isRetryError(ea, 'exhausted')).toBe(true);
    expect((ea as RetryError).attempts).toBe(4);
    expect(vb).toBe(1);
    expect(counts).toEqual([4, 3]);
  });
});
