import { numberOption, objectOption } from '../validate.js';
import { SlidingCounts } from '../budget/sliding-window.js';
import { InvalidOptionError } from '../errors.js';
import type { BreakerCounts, CountingStrategy, FailureCounter } from './counting.js';
import { requiredNumber } from './snapshot.js';

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
  /**
   * The window's buckets that hold calls, newest first: `ageMs` is how long before the snapshot
   * the bucket began. What a restore needs to age the counts out on time, in another process too.
   */
  readonly recent: readonly RecentCalls[];
}

/** One bucket of a failure-ratio window in a snapshot. */
export interface RecentCalls {
  readonly [field: string]: number;
  /** How long before the snapshot the bucket began, in ms (≥ 0). */
  readonly ageMs: number;
  readonly calls: number;
  /** Of those, the failures. */
  readonly failures: number;
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
    const recent: RecentCalls[] = [];
    // A clock that stepped back leaves `now` before the current bucket: its age is then 0.
    w.forEachBucket((start, calls, failures) => recent.push({ ageMs: Math.max(0, now - start), calls, failures }));
    return { strategy: 'failure ratio', calls: w.sumA, failures: w.sumB, ratio, windowMs, minimumCalls, recent };
  }

  /**
   * Puts each bucket of `counts.recent` back at the time it began, as seen from here (`ageMs` and
   * the snapshot's age before now), oldest first, then slides the window to `now`: calls older than
   * this window drop out, the others age out on time (to within one bucket, as always).
   */
  restore(counts: BreakerCounts, now: number, ageMs: number, owner: string, field: string): void {
    const recent = counts.recent;
    if (!Array.isArray(recent)) throw new InvalidOptionError(owner, `${field}.recent`, recent, 'must be an array of { ageMs, calls, failures }');
    // Bounded work whatever the input: a window never has more than 1 000 buckets.
    if (recent.length > 1000) throw new InvalidOptionError(owner, `${field}.recent`, recent, 'must have at most 1000 entries');
    const checked: RecentCalls[] = [];
    let previousAge = 0;
    recent.forEach((entry: unknown, i) => {
      const at = `${field}.recent[${i}]`;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new InvalidOptionError(owner, at, entry, 'must be an object { ageMs, calls, failures }');
      const e = entry as Record<string, unknown>;
      const age = requiredNumber(owner, `${at}.ageMs`, e.ageMs, { min: previousAge });
      const calls = requiredNumber(owner, `${at}.calls`, e.calls, { min: 0, integer: true });
      const failures = requiredNumber(owner, `${at}.failures`, e.failures, { min: 0, max: calls, integer: true });
      previousAge = age;
      checked.push({ ageMs: age, calls, failures });
    });
    const w = this.#window;
    w.reset();
    for (let i = checked.length - 1; i >= 0; i--) {
      const entry = checked[i]!;
      w.advance(now - ageMs - entry.ageMs);
      w.add(entry.calls, entry.failures);
    }
    w.advance(now);
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
