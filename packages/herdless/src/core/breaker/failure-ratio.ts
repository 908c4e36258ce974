import { numberOption, objectOption } from '../validate.js';
import { SlidingCounts } from '../budget/sliding-window.js';
import type { BreakerCounts, CountingStrategy, FailureCounter } from './counting.js';

/** Options of {@link failureRatio}. */
export interface FailureRatioOptions {
  /** The failure ratio (failures ÷ calls in the window) at or above which the breaker opens. Default 0.5. Range (0, 1]. */
  ratio?: number | undefined;
  /** The length of the sliding window, in ms. Default 10 000. Finite, > 0. */
  windowMs?: number | undefined;
  /**
   * The fewest calls the window must hold before the ratio can open the breaker, so that one
   * failure out of one call (ratio 1) does not. Default 10. An integer ≥ 1.
   */
  minimumCalls?: number | undefined;
  /**
   * How many buckets the window is cut into; memory is two numbers per bucket, and the window
   * slides one bucket (`windowMs / buckets` ms) at a time. Default 10. An integer in [1, 1000].
   */
  buckets?: number | undefined;
}

/** The counts of {@link failureRatio} in a breaker snapshot. */
export interface FailureRatioCounts extends BreakerCounts {
  readonly strategy: 'failure ratio';
  /** Calls that ended inside the window. */
  readonly calls: number;
  /** Of those, the failures. */
  readonly failures: number;
  readonly ratio: number;
  readonly windowMs: number;
  readonly minimumCalls: number;
}

/**
 * The calls and failures of the last `windowMs`, in a ring of `buckets` time buckets (the same
 * bounded ring as the retry budgets): O(1) amortised per record, bounded memory and bounded work
 * whatever the traffic and the clock. A clock that steps backwards is read as "still in the
 * latest bucket".
 */
class RatioCounter implements FailureCounter {
  readonly #window: SlidingCounts;

  constructor(private readonly o: Required<FailureRatioOptions>) {
    // Counter A: calls; counter B: failures.
    this.#window = new SlidingCounts(o.windowMs / o.buckets, o.buckets);
  }

  record(failed: boolean, now: number): boolean {
    const w = this.#window;
    w.advance(now);
    w.add(1, failed ? 1 : 0);
    if (!failed) return false;
    // Division, not failures ≥ ratio × calls: both sides are then correctly rounded, so 7 of 10
    // meets a ratio of 0.7 exactly (0.7 × 10 is 7.000000000000001).
    return w.sumA >= this.o.minimumCalls && w.sumB / w.sumA >= this.o.ratio;
  }

  reset(): void {
    this.#window.reset();
  }

  snapshot(now: number): FailureRatioCounts {
    const w = this.#window;
    w.advance(now);
    const { ratio, windowMs, minimumCalls } = this.o;
    return { strategy: 'failure ratio', calls: w.sumA, failures: w.sumB, ratio, windowMs, minimumCalls };
  }
}

/**
 * Counting strategy: open when, among the calls that ended in the last `windowMs`, there are at
 * least `minimumCalls` and the share of failures is at least `ratio`. Only a failure can open the
 * breaker. The window is a ring of `buckets` buckets and slides one bucket at a time, so it spans
 * between `windowMs × (buckets − 1) / buckets` and `windowMs` of history: bounded memory, O(1) per
 * call. Better than {@link consecutiveFailures} under steady traffic, where a few interleaved
 * successes would keep resetting a consecutive count while most calls fail.
 *
 * @throws InvalidOptionError naming the field for a ratio outside (0, 1], a window that is not a
 *   finite number > 0, or a `minimumCalls` / `buckets` that is not an integer in range.
 * @example
 * ```ts
 * // Open when half the calls of the last 10 s failed, once there were at least 10 of them.
 * const breaker = circuitBreaker({ counting: failureRatio({ ratio: 0.5, windowMs: 10_000, minimumCalls: 10 }) });
 * ```
 */
export function failureRatio(options?: FailureRatioOptions): CountingStrategy {
  const owner = 'failureRatio';
  const o = objectOption(owner, 'options', options, ['ratio', 'windowMs', 'minimumCalls', 'buckets']);
  const n: Required<FailureRatioOptions> = {
    ratio: numberOption(owner, 'ratio', o.ratio, 0.5, { min: 0, minExclusive: true, max: 1 }),
    windowMs: numberOption(owner, 'windowMs', o.windowMs, 10_000, { min: 0, minExclusive: true }),
    minimumCalls: numberOption(owner, 'minimumCalls', o.minimumCalls, 10, { min: 1, integer: true }),
    buckets: numberOption(owner, 'buckets', o.buckets, 10, { min: 1, max: 1000, integer: true }),
  };
  return {
    name: 'failure ratio',
    create: () => new RatioCounter(n),
    toJSON: () => ({ kind: 'failure ratio', ...n }),
  };
}
