import { numberOption, objectOption } from '../validate.js';
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
 * A ring of `n` buckets, each `width` ms wide. Bucket k holds the calls that ended in
 * [k·width, (k+1)·width); the ring keeps bucket `head` (the latest seen) and the n − 1 before it,
 * with running totals so that a record is O(1) amortised, and memory stays bounded whatever the
 * traffic. A clock that steps backwards is read as "still in bucket `head`".
 */
class RatioCounter implements FailureCounter {
  readonly #calls: Float64Array;
  readonly #failures: Float64Array;
  readonly #width: number;
  #head = Number.NEGATIVE_INFINITY;
  #totalCalls = 0;
  #totalFailures = 0;

  constructor(private readonly o: Required<FailureRatioOptions>) {
    this.#calls = new Float64Array(o.buckets);
    this.#failures = new Float64Array(o.buckets);
    this.#width = o.windowMs / o.buckets;
  }

  /** Moves the window so that it ends with the bucket of `now`; returns that bucket's slot. */
  #advance(now: number): number {
    const n = this.o.buckets;
    const k = Math.floor(now / this.#width);
    if (k > this.#head) {
      if (k - this.#head >= n) {
        this.#calls.fill(0);
        this.#failures.fill(0);
        this.#totalCalls = 0;
        this.#totalFailures = 0;
      } else {
        for (let e = this.#head + 1; e <= k; e++) {
          const s = slot(e, n);
          this.#totalCalls -= this.#calls[s]!;
          this.#totalFailures -= this.#failures[s]!;
          this.#calls[s] = 0;
          this.#failures[s] = 0;
        }
      }
      this.#head = k;
    }
    return slot(this.#head, n);
  }

  record(failed: boolean, now: number): boolean {
    const s = this.#advance(now);
    this.#calls[s]!++;
    this.#totalCalls++;
    if (!failed) return false;
    this.#failures[s]!++;
    this.#totalFailures++;
    // Division, not failures ≥ ratio × calls: both sides are then correctly rounded, so 7 of 10
    // meets a ratio of 0.7 exactly (0.7 × 10 is 7.000000000000001).
    return this.#totalCalls >= this.o.minimumCalls && this.#totalFailures / this.#totalCalls >= this.o.ratio;
  }

  reset(): void {
    this.#calls.fill(0);
    this.#failures.fill(0);
    this.#totalCalls = 0;
    this.#totalFailures = 0;
    this.#head = Number.NEGATIVE_INFINITY;
  }

  snapshot(now: number): FailureRatioCounts {
    this.#advance(now);
    const { ratio, windowMs, minimumCalls } = this.o;
    return { strategy: 'failure ratio', calls: this.#totalCalls, failures: this.#totalFailures, ratio, windowMs, minimumCalls };
  }
}

function slot(bucket: number, n: number): number {
  const s = bucket % n;
  return s < 0 ? s + n : s;
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
