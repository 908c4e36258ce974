import { numberOption, objectOption } from '../validate.js';
import type { BudgetSpec, RetryBudget } from './budget.js';
import { SlidingCounts } from './sliding-window.js';

/** Options of {@link finagleRetryBudget}: Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`. */
export interface FinagleRetryBudgetOptions {
  /** How long a deposit (and a withdrawal) counts, in ms. Default 10 000. Range [1000, 60 000] (Finagle's). */
  ttlMs?: number | undefined;
  /** Retries always allowed per second, whatever the traffic: a reserve of `minRetriesPerSec × ttlMs / 1000`. Default 10. Range ≥ 0. */
  minRetriesPerSec?: number | undefined;
  /** Retries allowed per first try, on top of the reserve (0.2 = 20%). Default 0.2. Range [0, 1000]. */
  percentCanRetry?: number | undefined;
}

/** Finagle's retry budget, with its balance readable. */
export interface FinagleRetryBudget extends RetryBudget {
  readonly name: 'finagle';
  /** The normalised options: see {@link FinagleRetryBudgetOptions}. */
  readonly ttlMs: number;
  /** Reserve retries per second. */
  readonly minRetriesPerSec: number;
  /** Retries earned per first try. */
  readonly percentCanRetry: number;
  /** Retries that could be granted at `now`: `percentCanRetry × deposits + reserve − withdrawals` (moves the window). */
  balance(now: number): number;
  /** The options, normalised, as data (`kind: 'finagle'`). */
  toJSON(): BudgetSpec;
}

class Finagle implements FinagleRetryBudget {
  readonly name = 'finagle' as const;
  private readonly window: SlidingCounts;
  private readonly reserve: number;
  constructor(
    readonly ttlMs: number,
    readonly minRetriesPerSec: number,
    readonly percentCanRetry: number,
  ) {
    // Counter A: deposits (first tries); counter B: withdrawals (granted retries). Ten slices,
    // like Finagle's windowed adder.
    this.window = new SlidingCounts(ttlMs / 10, 10);
    this.reserve = (minRetriesPerSec * ttlMs) / 1000;
  }
  onAttempt(now: number, isRetry: boolean): void {
    if (isRetry) return; // withdrawn when granted
    this.window.advance(now);
    this.window.add(1, 0);
  }
  onSuccess(): void {}
  onFailure(): void {}
  allowRetry(now: number): boolean {
    if (this.balance(now) < 1) return false;
    this.window.add(0, 1);
    return true;
  }
  balance(now: number): number {
    const w = this.window;
    w.advance(now);
    return this.percentCanRetry * w.sumA + this.reserve - w.sumB;
  }
  toJSON(): BudgetSpec {
    return { kind: 'finagle', ttlMs: this.ttlMs, minRetriesPerSec: this.minRetriesPerSec, percentCanRetry: this.percentCanRetry };
  }
}

/**
 * Finagle's `RetryBudget` (Twitter Finagle, `com.twitter.finagle.service.RetryBudget`): every
 * first try deposits `percentCanRetry` of a retry, every granted retry withdraws one, and both
 * expire after `ttlMs`; on top of that a reserve of `minRetriesPerSec × ttlMs / 1000` retries is
 * always there. A retry is granted while the balance is ≥ 1. So over any `ttlMs` window, retries ≤
 * `percentCanRetry` × first tries + reserve. Unlike {@link retryRatioBudget}, the base is first
 * tries only, and the reserve is per second. Withdrawals happen when a retry is granted.
 *
 * The window is a ring of 10 buckets of `ttlMs / 10` (fixed memory). Successes and failures are
 * not used.
 *
 * @throws InvalidOptionError naming the field: `ttlMs` outside [1000, 60 000], a negative
 *   `minRetriesPerSec`, `percentCanRetry` outside [0, 1000], or a non-finite number.
 * @example
 * ```ts
 * const budget = finagleRetryBudget(); // 10 s, 10 retries/s reserve, 20% of first tries
 * budget.balance(now); // 100 before any traffic: the reserve
 * ```
 */
export function finagleRetryBudget(options?: FinagleRetryBudgetOptions): FinagleRetryBudget {
  const owner = 'finagleRetryBudget';
  const o = objectOption(owner, 'options', options, ['ttlMs', 'minRetriesPerSec', 'percentCanRetry']);
  const ttlMs = numberOption(owner, 'ttlMs', o.ttlMs, 10_000, { min: 1000, max: 60_000 });
  const minRetriesPerSec = numberOption(owner, 'minRetriesPerSec', o.minRetriesPerSec, 10, { min: 0 });
  const percentCanRetry = numberOption(owner, 'percentCanRetry', o.percentCanRetry, 0.2, { min: 0, max: 1000 });
  return new Finagle(ttlMs, minRetriesPerSec, percentCanRetry);
}
