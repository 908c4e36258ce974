import { describe, expect, it } from 'vitest';
import { constantBackoff, type Rng } from 'herdless';
import { parseRetryPolicy, retryAfter } from 'herdless/core';
import { RETRYABLE_THROTTLED, decide, describeGiveUp, startRetry } from 'herdless/sim';

// The give-up sentences at their edges: one attempt (no plural), and a hint exactly at
// maxRetryAfterMs that is refused only because it would cross the deadline.
const half: Rng = { random: () => 0.5 };

describe('describeGiveUp at its edges', () => {
  it('one attempt: "attempt", not "attempts"', () => {
    const p = parseRetryPolicy({ maxAttempts: 1 });
    expect(describeGiveUp(p, { kind: 'give-up', reason: 'exhausted' })).toBe('all 1 attempt failed (maxAttempts 1)');
    expect(describeGiveUp(parseRetryPolicy({ maxAttempts: 2 }), { kind: 'give-up', reason: 'exhausted' })).toBe('all 2 attempts failed (maxAttempts 2)');
  });

  it('a hint equal to maxRetryAfterMs is allowed; refused for crossing the deadline, the sentence names the deadline', () => {
    const p = parseRetryPolicy({ maxAttempts: 3, maxRetryAfterMs: 400, deadlineMs: 1000, backoff: constantBackoff({ delayMs: 10 }) });
    const s = startRetry(p, 0);
    expect(decide(p, s, retryAfter(400), 0, half)).toMatchObject({ kind: 'retry', delayMs: 400, delaySource: 'server-hint' });
    const late = decide(p, s, retryAfter(400), 700, half);
    expect(late).toEqual({ kind: 'give-up', reason: 'hint-too-long', delayMs: 400, limitMs: 300 });
    expect(describeGiveUp(p, late as never)).toBe('the server asked to wait 400 ms, more than the 300 ms left before the deadline');
  });

  it('the sentences without a wait, a budget or a hint', () => {
    const p = parseRetryPolicy({ maxAttempts: 3, deadlineMs: 1000 });
    expect(describeGiveUp(p, { kind: 'give-up', reason: 'deadline' })).toBe('the deadline (deadlineMs 1000) passed');
    expect(describeGiveUp(p, { kind: 'give-up', reason: 'budget' })).toBe('the retry budget refused the retry');
    // A null failure is not a malformed hint (and reading a key of it must not throw).
    expect(describeGiveUp(p, { kind: 'give-up', reason: 'do-not-retry' }, null)).toBe('the failure says not to retry');
  });
});

describe('a throttled failure draws from throttlingBackoff', () => {
  it('whose bad delay is reported naming retry and throttlingBackoff.delay()', () => {
    const bad = { ...constantBackoff({ delayMs: 0 }), name: 'bad', maxDelayMs: 0, delay: () => Number.NaN };
    const p = parseRetryPolicy({ maxAttempts: 3, throttlingBackoff: bad });
    expect(() => decide(p, startRetry(p, 0), RETRYABLE_THROTTLED, 0, half)).toThrow(
      'retry: throttlingBackoff.delay() must return a number of ms in [0, 2147483647] (a bug in a custom Backoff), got NaN',
    );
  });
});
