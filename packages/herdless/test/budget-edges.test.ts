import { describe, expect, it } from 'vitest';
import { awsRetryQuota, finagleRetryBudget, keyedBudgets, retryRatioBudget, retryThrottlingBudget, type RetryBudget } from 'herdless';
import { budgetFromSpec } from 'herdless/sim';
import { SlidingCounts } from '../src/core/budget/sliding-window.js';
import { invalidOption } from './support/invalid-option.js';

// The edges of the retry budgets that budget.test.ts and budget-ratio.test.ts do not reach: the
// fields and texts of their errors, the AWS quota before any failure, the article's send-time
// ratio with a floor, three-decimal options written in exponent form, and the sliding window's
// reset and fixed memory.

describe('budget errors name the factory, the field and the rule', () => {
  it.each([
    ['awsRetryQuota', () => awsRetryQuota(5 as never)],
    ['finagleRetryBudget', () => finagleRetryBudget('x' as never)],
    ['retryRatioBudget', () => retryRatioBudget([] as never)],
    ['keyedBudgets', () => keyedBudgets(() => retryThrottlingBudget(), 1 as never)],
  ])('%s: options that are not an object are reported as `options`', (owner, make) => {
    const error = invalidOption(make);
    expect(error.field).toBe('options');
    expect(error.message).toMatch(new RegExp(`^${owner}: options must be an object`));
  });

  it('awsRetryQuota: a negative timeoutCost or successIncrement is named', () => {
    expect(invalidOption(() => awsRetryQuota({ timeoutCost: -1 })).field).toBe('timeoutCost');
    expect(invalidOption(() => awsRetryQuota({ successIncrement: -1 })).field).toBe('successIncrement');
  });

  it('keyedBudgets: a factory that is not a function "must be a function"', () => {
    const error = invalidOption(() => keyedBudgets(42 as never));
    expect(error.field).toBe('factory');
    expect(error.message).toBe('keyedBudgets: factory must be a function, got 42');
  });

  it('retryRatioBudget: countAt must be "decision" or "send"', () => {
    const error = invalidOption(() => retryRatioBudget({ countAt: 'grant' as never }));
    expect(error.field).toBe('countAt');
    expect(error.requirement).toBe('must be "decision" or "send"');
  });

  it('budgetFromSpec: the owner is budgetFromSpec and the default path is `budget`', () => {
    const error = invalidOption(() => budgetFromSpec({ kind: 'leaky bucket' }));
    expect(error.field).toBe('budget.kind');
    expect(error.message).toMatch(/^budgetFromSpec: budget\.kind must be one of /);
    expect(invalidOption(() => budgetFromSpec({ kind: 'finagle', ttlMs: 1 })).field).toBe('budget.ttlMs');
  });
});

describe('awsRetryQuota: the cost of a retry', () => {
  it('a retry decided before any failure was reported costs retryCost, not timeoutCost', () => {
    const q = awsRetryQuota();
    expect(q.allowRetry(0)).toBe(true);
    expect(q.available).toBe(495);
  });

  it('a timeout is charged once: the next failure without isTimeout costs retryCost again', () => {
    const q = awsRetryQuota();
    q.onFailure(0, true);
    q.allowRetry(0);
    q.onFailure(0);
    q.allowRetry(0);
    expect(q.available).toBe(485);
  });
});

describe("retryRatioBudget with countAt 'send': the floor is added", () => {
  it('ratio 0 and a floor of 1: the first retry is allowed (0 < 0 × S + 1), the next is not', () => {
    const b = retryRatioBudget({ ratio: 0, minRetriesPerWindow: 1, countAt: 'send' });
    b.onAttempt(0, false);
    b.onFailure(0);
    expect(b.allowRetry(0)).toBe(true);
    b.onAttempt(0, true);
    b.onFailure(0);
    expect(b.allowRetry(0)).toBe(false);
  });

  it('ratio 0.1 and a floor of 2, after 8 first sends: 3 retry sends (3 < 1.1 + 2) allow, 4 (4 < 1.2 + 2) do not', () => {
    const b = retryRatioBudget({ ratio: 0.1, minRetriesPerWindow: 2, countAt: 'send' });
    for (let i = 0; i < 8; i++) b.onAttempt(0, false);
    for (let i = 0; i < 3; i++) b.onAttempt(0, true);
    expect(b.allowRetry(0)).toBe(true);
    b.onAttempt(0, true);
    expect(b.allowRetry(0)).toBe(false);
  });
});

describe('three decimals of maxTokens and tokenRatio, in exponent form too (gRFC A6)', () => {
  it('a tokenRatio below 0.001 written in exponent form (1e-7) keeps no thousandth and is refused', () => {
    const error = invalidOption(() => retryThrottlingBudget({ tokenRatio: 1e-7 }));
    expect(error.field).toBe('tokenRatio');
    expect(error.requirement).toBe('must be ≥ 0.001 (3 decimal places are kept)');
    expect(invalidOption(() => retryThrottlingBudget({ maxTokens: 5e-7 })).field).toBe('maxTokens');
  });

  it('a huge tokenRatio in exponent form (1e21) is whole and kept', () => {
    expect(retryThrottlingBudget({ tokenRatio: 1e21 }).tokenRatio).toBe(1e21);
  });

  it('decimal forms: 0.0019 keeps 0.001, 2.5 keeps 2.5, 7 keeps 7', () => {
    expect(retryThrottlingBudget({ tokenRatio: 0.0019 }).tokenRatio).toBe(0.001);
    expect(retryThrottlingBudget({ maxTokens: 2.5 }).maxTokens).toBe(2.5);
    expect(retryThrottlingBudget({ maxTokens: 7 }).maxTokens).toBe(7);
  });
});

describe('the sliding window (shared by the ratio budget, Finagle and the failure-ratio breaker)', () => {
  it('forEachBucket visits the buckets that hold a count in either counter, newest first, with their start', () => {
    const w = new SlidingCounts(100, 10);
    const seen: number[][] = [];
    w.forEachBucket((start, a, b) => seen.push([start, a, b]));
    expect(seen).toEqual([]);
    w.advance(1050);
    w.add(2, 0);
    w.advance(1320);
    w.add(0, 1);
    w.advance(1400);
    w.forEachBucket((start, a, b) => seen.push([start, a, b]));
    expect(seen).toEqual([
      [1300, 0, 1],
      [1000, 2, 0],
    ]);
  });

  it('after reset() the window starts afresh at the next advance, and old counts still expire', () => {
    const w = new SlidingCounts(100, 10);
    w.advance(5000);
    w.add(3, 1);
    w.reset();
    expect([w.sumA, w.sumB]).toEqual([0, 0]);
    w.advance(2000); // earlier than before the reset: a fresh start accepts it
    w.add(2, 1);
    w.advance(2950);
    expect([w.sumA, w.sumB]).toEqual([2, 1]);
    w.advance(3000); // bucket 30: bucket 20 has left the 10-bucket window
    expect([w.sumA, w.sumB]).toEqual([0, 0]);
  });

  it('memory is fixed: a ratio budget of 100 buckets holds 200 slots after 100 000 events over 100 s', () => {
    const b = retryRatioBudget({ buckets: 100 }) as RetryBudget & { ringSize: number };
    expect(b.ringSize).toBe(200);
    for (let i = 0; i < 100_000; i++) {
      b.onAttempt(i, false);
      b.onFailure(i);
      b.allowRetry(i);
    }
    expect(b.ringSize).toBe(200);
    expect(new SlidingCounts(10, 7).capacity).toBe(14);
  });
});
