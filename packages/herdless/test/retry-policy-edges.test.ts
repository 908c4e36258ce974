import { describe, expect, it } from 'vitest';
import { AttemptTimeoutError, RetryError, isRetryError, type RetryBudget } from 'herdless';
import { DEFAULT_THROTTLING_BACKOFF, parseRetryPolicy } from 'herdless/core';
import { invalidOption } from './support/invalid-option.js';

// The edges of parseRetryPolicy() and of the retry errors that retry-core.test.ts and retry.test.ts
// do not reach: options given explicitly as their defaults, values refused by type (null, a
// string, a function that has the right method), a budget missing one method, keys that are not
// policy options, and the errors' names, sentences and failure lists.

const budget = (): RetryBudget => ({
  onAttempt: () => {},
  onSuccess: () => {},
  onFailure: () => {},
  allowRetry: () => true,
  toJSON: () => ({ kind: 'test' }),
}) as unknown as RetryBudget;

describe('parseRetryPolicy: options given as their defaults', () => {
  it('deadlineMs and attemptTimeoutMs: Infinity means none', () => {
    const p = parseRetryPolicy({ deadlineMs: Infinity, attemptTimeoutMs: Infinity });
    expect([p.deadlineMs, p.attemptTimeoutMs]).toEqual([Infinity, Infinity]);
  });

  it('throttlingBackoff: undefined keeps the default throttling backoff', () => {
    expect(parseRetryPolicy({ throttlingBackoff: undefined }).throttlingBackoff).toBe(DEFAULT_THROTTLING_BACKOFF);
  });

  it('ignoreHints: false is false', () => {
    expect(parseRetryPolicy({ ignoreHints: false }).ignoreHints).toBe(false);
    expect(parseRetryPolicy({ ignoreHints: true }).ignoreHints).toBe(true);
  });

  it('a key that is not a policy option is left to the caller, not an error here', () => {
    const p = parseRetryPolicy({ maxAttempts: 2, onRetry: () => {} } as never);
    expect(p.maxAttempts).toBe(2);
    expect('onRetry' in p).toBe(false);
  });
});

describe('parseRetryPolicy: values refused', () => {
  it('options null', () => {
    expect(invalidOption(() => parseRetryPolicy(null as never)).message).toBe('retry: options must be an object, got null');
  });

  it('maxAttempts 0 and maxRetryAfterMs -1 or "5" are refused, not passed through', () => {
    expect(invalidOption(() => parseRetryPolicy({ maxAttempts: 0 })).message).toBe('retry: maxAttempts must be ≥ 1, got 0');
    expect(invalidOption(() => parseRetryPolicy({ maxRetryAfterMs: -1 })).message).toBe('retry: maxRetryAfterMs must be ≥ 0, got -1');
    expect(invalidOption(() => parseRetryPolicy({ maxRetryAfterMs: '5' as never })).message).toBe('retry: maxRetryAfterMs must be a number, got "5"');
  });

  it('backoff: null, a number and a function that has delay() are not Backoffs', () => {
    const delayFn = Object.assign(() => 0, { delay: () => 10 });
    for (const backoff of [null, 5, delayFn]) {
      const e = invalidOption(() => parseRetryPolicy({ backoff: backoff as never }));
      expect(e.field).toBe('backoff');
      expect(e.requirement).toBe('must be a Backoff (e.g. fullJitterBackoff())');
    }
  });

  it('budget: null, a number, a function that has the methods, and a budget missing any one method are refused', () => {
    const methodsFn = Object.assign(() => 0, budget());
    const missing = (['onAttempt', 'onSuccess', 'onFailure', 'allowRetry'] as const).map((name) => ({ ...budget(), [name]: undefined }));
    for (const b of [null, 5, methodsFn, ...missing, { ...budget(), confirmRetry: 1 }]) {
      const e = invalidOption(() => parseRetryPolicy({ budget: b as never }));
      expect(e.field).toBe('budget');
    }
    expect(parseRetryPolicy({ budget: { ...budget(), confirmRetry: () => true } as never }).budget).toBeDefined();
  });
});

describe('RetryError', () => {
  it('one attempt is "1 attempt", and the class names itself', () => {
    const e = new RetryError('fatal', 1, new Error('boom'), 'not retryable');
    expect(e.message).toBe('retry gave up after 1 attempt (fatal): not retryable; last failure: Error: boom');
    expect(e.name).toBe('RetryError');
  });

  it("the failures are a frozen copy: the caller's array is left as it was", () => {
    const given = [{ attempt: 1, error: 'a' }];
    const e = new RetryError('exhausted', 1, 'a', 'x', given);
    expect(Object.isFrozen(given)).toBe(false);
    expect(Object.isFrozen(e.failures)).toBe(true);
    expect(e.failures).toEqual(given);
    expect(e.failures).not.toBe(given);
    const frozen = Object.freeze([{ attempt: 1, error: 'a' }]);
    expect(new RetryError('exhausted', 1, 'a', 'x', frozen).failures).toBe(frozen);
  });

  it('isRetryError with a reason: only a RetryError, and only of that reason', () => {
    const fatal = new RetryError('fatal', 1, new Error('x'));
    expect(isRetryError(fatal, 'fatal')).toBe(true);
    expect(isRetryError(fatal, 'exhausted')).toBe(false);
    expect(isRetryError(fatal)).toBe(true);
    expect(isRetryError(new Error('x'))).toBe(false);
    expect(isRetryError(new AttemptTimeoutError(1, 10, false))).toBe(false);
  });
});

describe('AttemptTimeoutError', () => {
  it('its sentence says what cut the attempt short, with the time to 0.1 ms', () => {
    const own = new AttemptTimeoutError(2, 1234.56, false);
    expect(own.message).toBe('attempt 2 timed out after 1234.6 ms (attemptTimeoutMs)');
    expect(own.name).toBe('AttemptTimeoutError');
    expect(new AttemptTimeoutError(3, 1500, true).message).toBe("attempt 3 was stopped by the call's deadline after 1500 ms");
  });
});
