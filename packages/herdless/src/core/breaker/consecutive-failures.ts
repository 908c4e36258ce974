import { numberOption, objectOption } from '../validate.js';
import type { BreakerCounts, CountingStrategy, FailureCounter } from './counting.js';
import { requiredNumber } from './snapshot.js';

/** Options of {@link consecutiveFailures}. */
export interface ConsecutiveFailuresOptions {
  /** Failures in a row (with no success between them) that open the breaker. Default 5. An integer ≥ 1. */
  threshold?: number | undefined;
}

/** The counts of {@link consecutiveFailures} in a breaker snapshot. */
export interface ConsecutiveFailuresCounts extends BreakerCounts {
  readonly strategy: 'consecutive failures';
  /** Failures since the last success (or since the breaker closed). */
  readonly consecutiveFailures: number;
  readonly threshold: number;
}

class ConsecutiveCounter implements FailureCounter {
  #failures = 0;
  readonly timeless = true;
  constructor(private readonly threshold: number) {}
  record(failed: boolean): boolean {
    if (!failed) {
      this.#failures = 0;
      return false;
    }
    this.#failures++;
    return this.#failures >= this.threshold;
  }
  reset(): void {
    this.#failures = 0;
  }
  snapshot(): ConsecutiveFailuresCounts {
    return { strategy: 'consecutive failures', consecutiveFailures: this.#failures, threshold: this.threshold };
  }
  /** A count in a row carries over whatever its age: no success has been seen since. */
  restore(counts: BreakerCounts, _now: number, _ageMs: number, owner: string, field: string): void {
    // A count at or above this threshold (a snapshot of a breaker with a higher one) stays as it
    // is: the next failure opens the breaker, as it would have here.
    this.#failures = requiredNumber(owner, `${field}.consecutiveFailures`, counts.consecutiveFailures, { min: 0, integer: true });
  }
}

/**
 * Counting strategy: open after `threshold` failures in a row; any success resets the count. Simple
 * and good for low traffic, where a ratio would have too few calls to mean anything.
 *
 * @throws InvalidOptionError when `threshold` is not an integer ≥ 1.
 * @example
 * ```ts
 * const breaker = circuitBreaker({ counting: consecutiveFailures({ threshold: 3 }) });
 * ```
 */
export function consecutiveFailures(options?: ConsecutiveFailuresOptions): CountingStrategy {
  const o = objectOption('consecutiveFailures', 'options', options, ['threshold']);
  const threshold = numberOption('consecutiveFailures', 'threshold', o.threshold, 5, { min: 1, integer: true });
  return {
    name: 'consecutive failures',
    create: () => new ConsecutiveCounter(threshold),
    toJSON: () => ({ kind: 'consecutive failures', threshold }),
  };
}
