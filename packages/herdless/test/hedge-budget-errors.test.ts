// A hedge is asked for from a timer: a custom budget that throws there, or whose asynchronous answer
// rejects, must end the call with what it threw — not escape as an uncaught exception (or an
// unhandled rejection) and leave the call pending forever.
import { describe, expect, it } from 'vitest';
import { ManualClock, hedge, type HedgeContext, type RetryBudget } from 'herdless';
import { settle } from './support/settle.js';

/** Attempt 1 never answers (until aborted); the budget is asked when the hedge's delay passes. */
function hanging(clock: ManualClock) {
  const aborted: number[] = [];
  const op = ({ attempt, signal }: HedgeContext): Promise<string> =>
    new Promise<string>((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        aborted.push(attempt);
        reject(signal.reason);
      });
      void clock;
    });
  return { op, aborted };
}

function budget(overrides: Partial<RetryBudget>): RetryBudget {
  return { name: 'custom', onAttempt() {}, onSuccess() {}, onFailure() {}, allowRetry: () => true, ...overrides };
}

describe('hedge(): a budget that fails while a hedge is asked for', () => {
  it('allowRetry throws in the hedge timer: the call rejects with that error at the delay, and the first attempt is aborted', async () => {
    const clock = new ManualClock();
    const { op, aborted } = hanging(clock);
    const boom = new Error('budget store unreachable');
    const out = await settle(clock, hedge(op, { maxAttempts: 2, delayMs: 50, clock, budget: budget({ allowRetry: () => { throw boom; } }) }), 200);
    expect(out).toEqual({ error: boom, at: 50 });
    expect(aborted).toEqual([1]);
    expect(clock.pending).toBe(0);
  });

  it('confirmRetry rejects: the call rejects with its reason (no unhandled rejection)', async () => {
    const clock = new ManualClock();
    const { op, aborted } = hanging(clock);
    const boom = new Error('confirm failed');
    const out = await settle(clock, hedge(op, { maxAttempts: 2, delayMs: 50, clock, budget: budget({ confirmRetry: () => Promise.reject(boom) }) }), 200);
    expect(out).toEqual({ error: boom, at: 50 });
    expect(aborted).toEqual([1]);
  });

  it('onAttempt throws for the hedge: the call rejects with that error', async () => {
    const clock = new ManualClock();
    const { op } = hanging(clock);
    const boom = new Error('counter overflow');
    const out = await settle(clock, hedge(op, { maxAttempts: 2, delayMs: 50, clock, budget: budget({ onAttempt: (_now, isRetry) => { if (isRetry) throw boom; } }) }), 200);
    expect(out).toEqual({ error: boom, at: 50 });
  });
});
