/**
 * A retry budget: a limit on retries that is shared by many calls on purpose (one per client
 * process, or per target host/service), while attempt counts stay per call.
 *
 * The protocol, in the order a caller (`retry()`, the fetch adapter, the simulator) uses it:
 * 1. `onAttempt(now, isRetry)` when an attempt is actually sent (the first try or a retry);
 * 2. `onSuccess(now)` or `onFailure(now)` when its outcome is known. Only failures that would be
 *    retried (transient errors, server pushback) are reported as failures; fatal errors are not;
 * 3. `allowRetry(now)` when a retry is about to be decided, after `onFailure`: `true` lets the
 *    caller schedule the retry, `false` ends the call with reason "budget". Budgets that count
 *    retries at decision time record the retry here.
 *
 * All times are milliseconds on the caller's monotonic clock (real or virtual); a budget never
 * reads a clock itself.
 */
export interface RetryBudget {
  /** A short name for events and the lab, e.g. `'gRPC retryThrottling'`. */
  readonly name: string;
  /** An attempt was sent at `now` ms; `isRetry` is false for the first try of a call. */
  onAttempt(now: number, isRetry: boolean): void;
  /** An attempt succeeded at `now` ms. */
  onSuccess(now: number): void;
  /** An attempt failed at `now` ms with a retryable failure (or server pushback). */
  onFailure(now: number): void;
  /** May a retry be scheduled now? Called once per retry decision, after `onFailure`. */
  allowRetry(now: number): boolean;
}
