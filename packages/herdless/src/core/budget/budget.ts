/**
 * A retry budget: a limit on retries that is shared by many calls on purpose (one per client
 * process, or per target host/service — see `keyedBudgets`), while attempt counts stay per call.
 *
 * The protocol, in the order a caller (`retry()`, the fetch adapter, the simulator) uses it:
 * 1. `onAttempt(now, isRetry)` when an attempt is actually sent (the first try or a retry);
 * 2. `onSuccess(now, isRetry)` or `onFailure(now, isTimeout)` when its outcome is known. Only
 *    failures that would be retried (transient errors, server pushback) are reported as failures;
 *    fatal errors are not;
 * 3. `allowRetry(now)` when a retry is about to be decided, right after (synchronously) its
 *    `onFailure`: `true` lets the caller schedule the retry, `false` ends the call with reason
 *    "budget". Budgets that count retries at decision time record the retry here, so call it once
 *    per decision and only when a retry would otherwise happen (not after the last attempt).
 *
 * All times are milliseconds on the caller's monotonic clock (real or virtual), non-decreasing
 * from one call to the next; a budget never reads a clock itself. None of the four methods
 * allocates, so consulting a budget costs a few nanoseconds.
 *
 * The second parameters of `onSuccess` and `onFailure` are optional. They were added for the AWS
 * retry quota (`awsRetryQuota`), which refunds a successful retry's cost and charges more for a
 * retry after a timeout; every other budget ignores them. Callers should pass them when they know.
 *
 * @example
 * ```ts
 * const budget = retryThrottlingBudget({ maxTokens: 10, tokenRatio: 0.1 });
 * budget.onAttempt(now, false);
 * budget.onFailure(now);
 * if (budget.allowRetry(now)) scheduleRetry(); else giveUp('budget');
 * ```
 */
export interface RetryBudget {
  /** The budget's kind, e.g. `'retry throttling'`; the lab prints it. */
  readonly name: string;
  /** An attempt was sent at `now` ms; `isRetry` is false for the first try of a call. */
  onAttempt(now: number, isRetry: boolean): void;
  /**
   * An attempt succeeded at `now` ms. `isRetry` (default false): the successful attempt was a
   * retry — the AWS retry quota refunds its cost instead of adding the no-retry increment.
   */
  onSuccess(now: number, isRetry?: boolean): void;
  /**
   * An attempt failed at `now` ms with a retryable failure (or server pushback). `isTimeout`
   * (default false): it timed out — the AWS retry quota charges the next retry `timeoutCost`.
   */
  onFailure(now: number, isTimeout?: boolean): void;
  /** May a retry be scheduled now? Called once per retry decision, right after `onFailure`. */
  allowRetry(now: number): boolean;
  /**
   * Optional second step of a decision, for budgets whose state lives outside the process (a
   * budget shared by a fleet through Redis, `herdless/redis`): when `allowRetry(now)` returned
   * true, `retry()` calls it right away (synchronously after `allowRetry`) and awaits the answer
   * before it schedules the retry; `false` ends the call with reason "budget". It must settle
   * promptly (the Redis budget bounds it by its `timeoutMs`) and never reject. Budgets that decide
   * locally leave it out; the simulator, which runs in virtual time, never calls it.
   */
  confirmRetry?(now: number): boolean | PromiseLike<boolean>;
}

/**
 * A budget described as data (lab config files, the lab page, `toJSON()` of every herdless
 * budget): see `budgetFromSpec`. Fields are the options of the matching factory.
 */
export type BudgetSpec =
  | { kind: 'retry throttling'; maxTokens: number; tokenRatio: number }
  | {
      kind: 'retry ratio';
      ratio: number;
      minRetriesPerWindow: number;
      windowMs: number;
      buckets: number;
      countAt: 'decision' | 'send';
    }
  | { kind: 'finagle'; ttlMs: number; minRetriesPerSec: number; percentCanRetry: number }
  | { kind: 'aws retry quota'; capacity: number; retryCost: number; timeoutCost: number; successIncrement: number };
