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
 * | `'throttled'` | adaptive throttling rejected the attempt locally (the first try, a retry, or a hedge): it was not sent |
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
  | 'throttled'
  | 'circuit-open';

/**
 * The reasons a {@link RetryError} (or {@link HedgeError}) carries: every {@link GiveUpReason} but
 * `'aborted'`, since a call its caller aborted rejects with the signal's reason instead (as
 * `fetch()` does). An exhaustive `switch` over `error.reason` needs exactly these eight.
 */
export type RetryErrorReason = Exclude<GiveUpReason, 'aborted'>;

/**
 * One failed attempt of a call, as {@link RetryError.failures} lists it.
 * @example
 * ```ts
 * for (const { attempt, error } of retryError.failures) log.warn(`attempt ${attempt}`, error);
 * ```
 */
export interface RetryFailure {
  /** The attempt's number, from 1. */
  readonly attempt: number;
  /** What the attempt threw or rejected with. */
  readonly error: unknown;
}

/**
 * How many failures a {@link RetryError} keeps: the first {@link RETRY_ERROR_FIRST_FAILURES} and the
 * last {@link RETRY_ERROR_LAST_FAILURES} attempts' (10 in all). A call of 100 000 attempts keeps 10
 * errors, not 100 000, and says how many it left out.
 * @example
 * ```ts
 * RETRY_ERROR_FIRST_FAILURES + RETRY_ERROR_LAST_FAILURES; // 10
 * ```
 */
export const RETRY_ERROR_FIRST_FAILURES = 1;
/** See {@link RETRY_ERROR_FIRST_FAILURES}. */
export const RETRY_ERROR_LAST_FAILURES = 9;

/**
 * @internal A call's failures as a {@link RetryError} keeps them: the first ones, then a window of
 * the last ones that slides (its oldest entry dropped and counted), so a call's memory stays bounded
 * however many attempts it makes.
 */
export class FailureLog {
  readonly kept: RetryFailure[] = [];
  omitted = 0;
  add(attempt: number, error: unknown): void {
    const kept = this.kept;
    if (kept.length === RETRY_ERROR_FIRST_FAILURES + RETRY_ERROR_LAST_FAILURES) {
      kept.splice(RETRY_ERROR_FIRST_FAILURES, 1);
      this.omitted++;
    }
    kept.push({ attempt, error });
  }
}

/**
 * The rejection of a `retry()` call that gave up (for every reason except `'aborted'`, where the
 * call rejects with the abort reason itself, as `fetch()` does). Code `ERR_HERDLESS_RETRY`.
 *
 * - `cause`: the last failure — what the last attempt threw or rejected with;
 * - `failures`: every failed attempt's `{ attempt, error }`, in order — bounded: the first attempt's
 *   and the last nine ({@link RETRY_ERROR_FIRST_FAILURES}, {@link RETRY_ERROR_LAST_FAILURES}), with
 *   `omittedFailures` counting those left out between them (0 for a call of up to 10 failures);
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
 *   if (isRetryError(e)) console.log(e.reason, e.attempts, e.cause, e.failures.map((f) => f.error));
 * }
 * ```
 */
export class RetryError extends HerdlessError {
  /** Why the call stopped: never `'aborted'` (an aborted call rejects with the signal's reason). */
  readonly reason: RetryErrorReason;
  /** How many attempts were started, the first included. */
  readonly attempts: number;
  /** The last failure: what the last attempt threw or rejected with. */
  declare readonly cause: unknown;
  /**
   * Every failed attempt, in order, as `{ attempt, error }` (frozen): all of them for up to 10
   * failures, else the first and the last nine, `omittedFailures` telling how many lie between.
   * Empty when the call ended before any attempt failed (e.g. its deadline had passed).
   */
  readonly failures: readonly RetryFailure[];
  /** How many failures between the first and the last nine are not in `failures` (0 when none is missing). */
  readonly omittedFailures: number;

  /**
   * @param reason why the call stopped.
   * @param attempts attempts started, the first included.
   * @param cause the last failure.
   * @param detail a human sentence for the message, e.g. `all 3 attempts failed`.
   * @param failures the failed attempts, in order (default: `cause` as attempt `attempts`'s failure, if any).
   * @param omittedFailures how many failures `failures` leaves out (default 0).
   */
  constructor(
    reason: RetryErrorReason,
    attempts: number,
    cause: unknown,
    detail: string = reason,
    failures: readonly RetryFailure[] = cause === undefined ? [] : [{ attempt: attempts, error: cause }],
    omittedFailures = 0,
  ) {
    super(
      'ERR_HERDLESS_RETRY',
      `retry gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${reason}): ${detail}${attempts === 0 && cause === undefined ? ' (no attempt was sent)' : `; last failure: ${describeFailure(cause)}`}`,
      { cause },
    );
    this.name = 'RetryError';
    this.reason = reason;
    this.attempts = attempts;
    this.failures = Object.isFrozen(failures) ? failures : Object.freeze(failures.slice());
    this.omittedFailures = omittedFailures;
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
  return (isHerdlessError(error, 'ERR_HERDLESS_RETRY') || isHerdlessError(error, 'ERR_HERDLESS_HEDGE')) && (reason === undefined || (error as RetryError).reason === reason);
}

/**
 * The rejection of a hedged call (`hedge()`, a `createHedger()` hedger, and what the hedging HTTP
 * adapters give up with) in which no attempt succeeded. Code `ERR_HERDLESS_HEDGE`. A `HedgeError`
 * is a {@link RetryError} — the same fields, the same {@link GiveUpReason}s, the same "do not retry"
 * mark, `isRetryError()` is true for it — so code that handles a retrying call's give-up handles a
 * hedged one; its message and {@link HedgeError.hedges} speak of hedging:
 * `hedged call gave up after 3 attempts (the first and 2 hedges) (exhausted): all 3 hedged attempts failed (maxAttempts 3); last failure: …`.
 *
 * - `attempts`: the attempts sent, the first included (`hedges + 1`; 0 when the call never started, as when adaptive throttling refused its first try);
 * - `hedges`: the attempts sent beyond the first;
 * - `reason`: `'exhausted'`, `'fatal'`, `'budget'` (a refused hedge, then the attempts in flight
 *   failed), `'throttled'` (adaptive throttling refused the first try, or a hedge and then the
 *   attempts in flight failed), `'do-not-retry'`, `'circuit-open'` or `'hint-too-long'`;
 * - `cause` and `failures`: the last failure, and every attempt's failure in the order they failed.
 *
 * @example
 * ```ts
 * try {
 *   await hedge(({ signal }) => read(key, signal), { delayMs: 50 });
 * } catch (e) {
 *   if (isHedgeError(e)) log.warn({ reason: e.reason, hedges: e.hedges }, e.message);
 * }
 * ```
 */
export class HedgeError extends RetryError {
  /** The attempts sent beyond the first: `attempts - 1` (0 when none was). */
  readonly hedges: number;

  /**
   * @param reason why the call stopped.
   * @param attempts attempts sent, the first included.
   * @param cause the last failure.
   * @param detail a human sentence for the message, e.g. `all 3 hedged attempts failed`.
   * @param failures the failed attempts, in the order they failed.
   * @param omittedFailures how many failures `failures` leaves out (default 0).
   */
  constructor(reason: RetryErrorReason, attempts: number, cause: unknown, detail: string = reason, failures?: readonly RetryFailure[], omittedFailures = 0) {
    super(reason, attempts, cause, detail, failures, omittedFailures);
    const hedges = Math.max(0, attempts - 1);
    (this as { code: string }).code = 'ERR_HERDLESS_HEDGE';
    this.name = 'HedgeError';
    this.hedges = hedges;
    const sent = attempts === 0 ? 'before any attempt' : `after ${attempts} attempt${attempts === 1 ? '' : 's'} (the first and ${hedges === 0 ? 'no hedge' : `${hedges} hedge${hedges === 1 ? '' : 's'}`})`;
    this.message = `hedged call gave up ${sent} (${reason}): ${detail}${attempts === 0 && cause === undefined ? '' : `; last failure: ${describeFailure(cause)}`}`;
  }
}

/**
 * True for a {@link HedgeError} from any copy of herdless (by brand and code); with `reason`, only
 * for that reason. (`isRetryError()` is true for it as well.)
 * @example
 * ```ts
 * if (isHedgeError(e, 'budget')) metrics.increment('hedges_refused_then_failed');
 * ```
 */
export function isHedgeError(error: unknown, reason?: GiveUpReason): error is HedgeError {
  return isHerdlessError(error, 'ERR_HERDLESS_HEDGE') && (reason === undefined || (error as HedgeError).reason === reason);
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
