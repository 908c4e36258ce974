import { markDoNotRetry } from '../classify/hints.js';
import { HerdlessError, isHerdlessError } from '../errors.js';

/** The stable code of {@link CircuitOpenError}. */
export const CIRCUIT_OPEN = 'ERR_HERDLESS_CIRCUIT_OPEN';

/**
 * A circuit breaker refused a call: it is open, or half-open with every trial permit taken. The
 * operation was not run, so nothing was sent and nothing was counted.
 *
 * - `retryAfterMs`: how long until the breaker admits its next trial call, in whole ms (≥ 0), rounded
 *   up: a clock with fractions of a millisecond (`performance.now()`) never shows through, and a
 *   caller that waits `retryAfterMs` never arrives while the breaker is still open. While open it is
 *   `nextTrialAt − now`, rounded up. While half-open the next trial depends on the trials in flight
 *   (0 if they succeed, a new open period if one fails), so it reports the open duration last used:
 *   the conservative estimate.
 * - `state`: `'open'` or `'half-open'` at the moment of the refusal.
 * - `isolated`: true when the breaker is held open by `isolate()` (an operator's decision, not a
 *   failure count); `retryAfterMs` is then `Infinity`: no trial comes until someone releases it.
 * - `doNotRetry: true`: a mark for retry loops. A refusal is the breaker's answer "overloaded; don't
 *   retry": retry the breaker from the outside, never its refusals (a retry that sleeps and tries
 *   again only queues more load for the moment the breaker half-opens). The error also carries
 *   herdless's own mark (`isDoNotRetry(e)` is true), and `retry()` ends at once with reason
 *   `'circuit-open'`: no backoff sleep, no further attempt. The plain property is for other retry
 *   libraries' predicates.
 * - `cause`: the failure that opened the breaker, when the shell saw it (it may be absent).
 *
 * Use {@link isCircuitOpenError} rather than `instanceof`: it also recognises the error thrown by
 * another copy of herdless in the same process.
 *
 * @example
 * ```ts
 * try {
 *   await breaker.execute(() => fetch(url));
 * } catch (e) {
 *   if (isCircuitOpenError(e)) return serveStale(e.retryAfterMs);
 *   throw e;
 * }
 * ```
 */
export class CircuitOpenError extends HerdlessError {
  /** Whole milliseconds (rounded up) until the next trial call may be admitted (an estimate while half-open); `Infinity` while isolated. */
  readonly retryAfterMs: number;
  /** The breaker's state when it refused the call. */
  readonly state: 'open' | 'half-open';
  /** True when the breaker is isolated (held open by `isolate()` until released). */
  readonly isolated: boolean;
  /** Always `true`: a refusal must not be retried (see the class comment). */
  readonly doNotRetry = true as const;

  constructor(state: 'open' | 'half-open', retryAfterMs: number, options?: { cause?: unknown; isolated?: boolean }) {
    const isolated = options?.isolated === true;
    super(
      CIRCUIT_OPEN,
      isolated
        ? 'circuit breaker is isolated: every call is refused until the isolation is released'
        : state === 'open'
          ? `circuit breaker is open: next trial call in ${Math.ceil(retryAfterMs)} ms`
          : `circuit breaker is half-open and its trial calls are in flight: retry after about ${Math.ceil(retryAfterMs)} ms`,
      options === undefined || !('cause' in options) ? undefined : { cause: options.cause },
    );
    this.name = 'CircuitOpenError';
    this.state = state;
    // Rounded here too, for an error made from a machine's rejection by other code (or another copy).
    this.retryAfterMs = Math.ceil(retryAfterMs);
    this.isolated = isolated;
    markDoNotRetry(this);
  }
}

/**
 * True for a {@link CircuitOpenError} thrown by any copy of herdless (the check is the error's
 * brand and code `ERR_HERDLESS_CIRCUIT_OPEN`, not class identity).
 *
 * @example
 * ```ts
 * if (isCircuitOpenError(e)) console.log(`try again in ${e.retryAfterMs} ms`);
 * ```
 */
export function isCircuitOpenError(error: unknown): error is CircuitOpenError {
  return isHerdlessError(error, CIRCUIT_OPEN);
}
