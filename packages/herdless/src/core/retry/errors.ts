import { HerdlessError, isHerdlessError, describe } from '../errors.js';
import { DO_NOT_RETRY } from '../classify/hints.js';

/**
 * Why a call stopped retrying:
 *
 * | reason | the call ended because… |
 * |---|---|
 * | `'exhausted'` | every one of `maxAttempts` attempts failed with a retryable failure |
 * | `'fatal'` | the failure is not retryable (a bug, a bad request, a 404, …) |
 * | `'deadline'` | the deadline passed, or the next wait would have crossed it |
 * | `'hint-too-long'` | the server asked to wait longer than `maxRetryAfterMs` or than the time left before the deadline |
 * | `'do-not-retry'` | the failure says "do not retry" (a `RetryError` from an inner `retry()`, a {@link markDoNotRetry} mark, a response an inner layer gave up on or an error around one — see `isGivenUp` — a malformed hint) |
 * | `'aborted'` | the caller's `signal` aborted (`retry()` then rejects with the signal's reason itself) |
 * | `'budget'` | the retry budget refused the retry |
 * | `'circuit-open'` | the circuit breaker refused the attempt (a `CircuitOpenError`): no sleep, no further attempt |
 *
 * @example
 * ```ts
 * onGiveUp: ({ reason }: { reason: GiveUpReason }) => metrics.increment(`retry_give_up_${reason}`);
 * ```
 */
export type GiveUpReason =
  | 'exhausted'
  | 'fatal'
  | 'deadline'
  | 'hint-too-long'
  | 'do-not-retry'
  | 'aborted'
  | 'budget'
  | 'circuit-open';

/**
 * The rejection of a `retry()` call that gave up (for every reason except `'aborted'`, where the
 * call rejects with the abort reason itself, as `fetch()` does). Code `ERR_HERDLESS_RETRY`.
 *
 * - `cause`: the last failure — what the last attempt threw or rejected with;
 * - `attempts`: how many attempts were started (1 … `maxAttempts`);
 * - `reason`: why it stopped ({@link GiveUpReason}).
 *
 * A `RetryError` carries the "do not retry" mark ({@link isDoNotRetry} is true), so when an outer
 * `retry()` wraps a function that itself uses `retry()`, the outer one stops at once (reason
 * `'do-not-retry'`) instead of multiplying the inner attempts (3 layers × 3 attempts would reach the
 * bottom 27 times; Google SRE book, "Handling Overload": retry at one layer only).
 *
 * @example
 * ```ts
 * try {
 *   await retry(() => fetchJson(url));
 * } catch (e) {
 *   if (isRetryError(e)) console.log(e.reason, e.attempts, e.cause);
 * }
 * ```
 */
export class RetryError extends HerdlessError {
  /** Why the call stopped. */
  readonly reason: GiveUpReason;
  /** How many attempts were started, the first included. */
  readonly attempts: number;
  /** The last failure: what the last attempt threw or rejected with. */
  declare readonly cause: unknown;

  /**
   * @param reason why the call stopped.
   * @param attempts attempts started, the first included.
   * @param cause the last failure.
   * @param detail a human sentence for the message, e.g. `all 3 attempts failed`.
   */
  constructor(reason: GiveUpReason, attempts: number, cause: unknown, detail: string = reason) {
    super(
      'ERR_HERDLESS_RETRY',
      `retry gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${reason}): ${detail}; last failure: ${describeFailure(cause)}`,
      { cause },
    );
    this.name = 'RetryError';
    this.reason = reason;
    this.attempts = attempts;
  }
}
// On the prototype, so every RetryError is marked without a per-instance property. The key is a
// Symbol.for key: an outer retry() from another copy of herdless sees it too.
Object.defineProperty(RetryError.prototype, DO_NOT_RETRY, { value: true });

/**
 * True for a {@link RetryError} from any copy of herdless (the check is by brand and code, not
 * `instanceof`); with `reason`, only for that reason.
 *
 * @example
 * ```ts
 * if (isRetryError(e, 'exhausted')) metrics.increment('retries_exhausted');
 * ```
 */
export function isRetryError(error: unknown, reason?: GiveUpReason): error is RetryError {
  return isHerdlessError(error, 'ERR_HERDLESS_RETRY') && (reason === undefined || (error as RetryError).reason === reason);
}

/**
 * The failure of an attempt that ran out of time: it ran longer than `attemptTimeoutMs`, or
 * reached the call's deadline (`byDeadline`). Code `ERR_HERDLESS_ATTEMPT_TIMEOUT`. It is the
 * attempt signal's abort reason and the attempt's failure; it is retryable by default.
 *
 * @example
 * ```ts
 * await retry(({ signal }) => fetch(url, { signal }), { attemptTimeoutMs: 2000 });
 * // a slow attempt fails with AttemptTimeoutError after 2 s and is retried
 * ```
 */
export class AttemptTimeoutError extends HerdlessError {
  /** The attempt that timed out, from 1. */
  readonly attempt: number;
  /** The time the attempt was given, in ms. */
  readonly timeoutMs: number;
  /** True when the call's deadline (`deadlineMs`) cut the attempt short, false for `attemptTimeoutMs`. */
  readonly byDeadline: boolean;

  /**
   * @param attempt the attempt that timed out, from 1.
   * @param timeoutMs the time it was given, in ms.
   * @param byDeadline true when the call's deadline cut it short.
   */
  constructor(attempt: number, timeoutMs: number, byDeadline: boolean) {
    super(
      'ERR_HERDLESS_ATTEMPT_TIMEOUT',
      byDeadline
        ? `attempt ${attempt} was stopped by the call's deadline after ${formatMs(timeoutMs)} ms`
        : `attempt ${attempt} timed out after ${formatMs(timeoutMs)} ms (attemptTimeoutMs)`,
    );
    this.name = 'AttemptTimeoutError';
    this.attempt = attempt;
    this.timeoutMs = timeoutMs;
    this.byDeadline = byDeadline;
  }
}

/**
 * True for an {@link AttemptTimeoutError} from any copy of herdless.
 * @example
 * ```ts
 * if (isRetryError(e) && isAttemptTimeoutError(e.cause)) console.log('last attempt timed out');
 * ```
 */
export function isAttemptTimeoutError(error: unknown): error is AttemptTimeoutError {
  return isHerdlessError(error, 'ERR_HERDLESS_ATTEMPT_TIMEOUT');
}

/** @internal A millisecond figure for a message: integers as they are, others to 0.1 ms. */
export function formatMs(ms: number): string {
  return Number.isInteger(ms) ? String(ms) : ms.toFixed(1);
}

function describeFailure(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return describe(cause);
}
