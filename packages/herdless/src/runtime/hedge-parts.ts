import { isAcceptedVerdict } from '../core/budget/adaptive-throttling.js';
import { isTransientError } from '../core/classify/classify.js';
import type { Verdict } from '../core/classify/verdict.js';
import { HerdlessError } from '../core/errors.js';
import type { HedgePolicy } from '../core/hedge/policy.js';
import { HedgeError, type FailureLog, type RetryErrorReason } from '../core/retry/errors.js';
import type { Scheduler } from './scheduler.js';

// The pieces one hedged call (hedge-call.ts) is made of: an attempt in flight, the hedge timer, the
// abort reason of a loser, what the throttle hears from an answer, and the error of a give-up.

/** The abort reason of an attempt that another one beat (or that a fatal failure elsewhere ended). */
const HEDGE_LOST = 'ERR_HERDLESS_HEDGE_LOST';

/** @internal One attempt in flight. */
export class Attempt {
  readonly controller = new AbortController();
  ended = false;
  constructor(
    readonly number: number,
    readonly startedAt: number,
  ) {}
}

/** @internal The hedge timer: at most one pending, replaced when set again; unref'd on request. */
export class HedgeTimer {
  readonly #clock: Scheduler;
  readonly #unref: boolean;
  #timer: unknown;
  // Stryker disable next-line BooleanLiteral: clearing a timer that was never set is a no-op for a Scheduler (clearTimeout ignores unknown handles).
  #pending = false;
  constructor(clock: Scheduler, unref: boolean) {
    this.#clock = clock;
    this.#unref = unref;
  }

  /** Runs `fire` `ms` ms from now, replacing any pending timer. */
  set(ms: number, fire: () => void): void {
    this.clear();
    this.#timer = this.#clock.setTimeout(() => {
      // Stryker disable next-line BooleanLiteral: clearing the same timer twice is a no-op for a Scheduler.
      this.#pending = false;
      fire();
    }, ms);
    this.#pending = true;
    if (this.#unref) {
      const handle = this.#timer as { unref?: () => unknown } | null;
      // Stryker disable next-line ConditionalExpression: a handle that is a number has no unref: `unref?.()` does nothing for it either.
      if (typeof handle === 'object' && handle !== null) handle.unref?.();
    }
  }

  clear(): void {
    if (!this.#pending) return;
    // Stryker disable next-line BooleanLiteral: clearing the same timer twice is a no-op for a Scheduler.
    this.#pending = false;
    this.#clock.clearTimeout(this.#timer);
  }
}

/** @internal The reason the losers (and the attempts a fatal failure elsewhere ended) are aborted with. */
export function lost(): HerdlessError {
  return new HerdlessError(HEDGE_LOST, 'hedged call: another attempt answered first, or the call ended');
}

/**
 * @internal What an attempt's failure says to the throttle about the backend's load (as `retry()`
 * reads it): a 404 is an accept; a non-fatal failure, pushback, or a transient failure the call does
 * not hedge on (or one the protocol layer's `loadFailure` calls about load) is a rejection;
 * `undefined` for no answer (an open circuit).
 */
export function throttleAnswer(verdict: Verdict, error: unknown, loadFailure: ((error: unknown) => boolean) | undefined): boolean | undefined {
  // Stryker disable next-line ConditionalExpression: for a retryable verdict both branches answer false (a retryable failure is the backend's refusal).
  return verdict.kind === 'fatal' && (isTransientError(error) || loadFailure?.(error) === true) ? false : isAcceptedVerdict(verdict);
}

/** @internal The rejection of a hedged call that gave up for `reason` after `attempts` attempts. */
export function hedgeError(reason: RetryErrorReason, attempts: number, lastError: unknown, policy: HedgePolicy, log: FailureLog): HedgeError {
  return new HedgeError(reason, attempts, lastError, describe(reason, policy, attempts), log.kept, log.omitted);
}

function describe(reason: RetryErrorReason, policy: HedgePolicy, attempts: number): string {
  switch (reason) {
    case 'exhausted':
      return `all ${policy.maxAttempts} hedged attempt${policy.maxAttempts === 1 ? '' : 's'} failed (maxAttempts ${policy.maxAttempts})`;
    case 'fatal':
      return 'an attempt failed with a fatal (not retryable) failure, which ends a hedged call; the attempts in flight were cancelled';
    case 'budget':
      return `the retry budget "${policy.budget?.name ?? ''}" refused the next hedge, and the attempts in flight failed`;
    case 'do-not-retry':
      return 'a failure said not to retry, so no more hedges were sent, and the attempts in flight failed';
    case 'circuit-open':
      return 'the circuit is open, so no more hedges were sent, and the attempts in flight failed';
    case 'throttled':
      return attempts === 0
        ? 'adaptive throttling rejected the call locally: no attempt was sent'
        : 'adaptive throttling rejected the next hedge locally, and the attempts in flight failed';
    case 'hint-too-long':
      return `the server asked to wait longer than maxRetryAfterMs (${policy.maxRetryAfterMs} ms) before the next hedge, and the attempts in flight failed`;
    default:
      return reason;
  }
}
