import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';

/** Options of {@link latencyPercentile}. */
export interface LatencyPercentileOptions {
  /** Which percentile of the observed latencies is the hedge delay, in (0, 100). Default 95 ("The Tail at Scale": hedge after the p95). */
  percentile?: number | undefined;
  /** How many of the latest latencies the window keeps, an integer in [1, 100 000]. Default 1000. */
  windowSize?: number | undefined;
  /** Below this many observations the delay is `initialDelayMs`; an integer in [1, windowSize]. Default 20. */
  minSamples?: number | undefined;
  /** The delay, in ms, until `minSamples` latencies were seen. Default 100; finite, ≥ 0. */
  initialDelayMs?: number | undefined;
  /** The smallest delay it gives, in ms (a floor against hedging everything when latencies are tiny). Default 0. */
  minDelayMs?: number | undefined;
  /** The largest delay it gives, in ms. Default 60 000; ≥ `minDelayMs`. */
  maxDelayMs?: number | undefined;
}

/**
 * A hedge delay that follows the latencies it observes: the `percentile`-th of the last
 * `windowSize` latencies, clamped to [`minDelayMs`, `maxDelayMs`]. Shared on purpose (like a retry
 * budget): one per target, given to every hedged call to it, so each call learns from the others.
 *
 * The window is a ring of the latest samples plus the same samples kept sorted, so `record` costs a
 * binary search and one array shift (O(windowSize), a few microseconds at 1000) and `delayMs` is one
 * index. Time is never read: the caller passes latencies in ms.
 */
export interface LatencyPercentile {
  readonly kind: 'latency percentile';
  readonly percentile: number;
  readonly windowSize: number;
  readonly minSamples: number;
  readonly initialDelayMs: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** How many latencies the window holds now, in [0, windowSize]. */
  readonly samples: number;
  /** Adds one observed latency, in ms (finite, ≥ 0; anything else is ignored, not thrown: it comes from a clock). */
  record(latencyMs: number): void;
  /** The delay before the next hedge, in ms: `initialDelayMs` before `minSamples` observations, else the percentile (nearest rank), clamped. */
  delayMs(): number;
  /** The options as data. */
  toJSON(): LatencyPercentileSpec;
}

/** A {@link LatencyPercentile} described as data (the lab's configs, `toJSON()`). */
export interface LatencyPercentileSpec {
  kind: 'latency percentile';
  percentile: number;
  windowSize: number;
  minSamples: number;
  initialDelayMs: number;
  minDelayMs: number;
  maxDelayMs: number;
}

class PercentileWindow implements LatencyPercentile {
  readonly kind = 'latency percentile' as const;
  readonly #ring: Float64Array;
  readonly #sorted: number[] = [];
  #next = 0;

  constructor(
    readonly percentile: number,
    readonly windowSize: number,
    readonly minSamples: number,
    readonly initialDelayMs: number,
    readonly minDelayMs: number,
    readonly maxDelayMs: number,
  ) {
    this.#ring = new Float64Array(windowSize);
  }

  get samples(): number {
    return this.#sorted.length;
  }

  record(latencyMs: number): void {
    if (!(latencyMs >= 0) || latencyMs === Infinity) return;
    const sorted = this.#sorted;
    if (sorted.length === this.windowSize) sorted.splice(lowerBound(sorted, this.#ring[this.#next]!), 1);
    this.#ring[this.#next] = latencyMs;
    this.#next = (this.#next + 1) % this.windowSize;
    sorted.splice(lowerBound(sorted, latencyMs), 0, latencyMs);
  }

  delayMs(): number {
    const sorted = this.#sorted;
    if (sorted.length < this.minSamples) return this.initialDelayMs;
    // Nearest rank: the smallest sample with at least `percentile`% of the samples at or below it.
    const rank = Math.ceil((this.percentile / 100) * sorted.length);
    const value = sorted[Math.max(0, rank - 1)]!;
    return Math.min(this.maxDelayMs, Math.max(this.minDelayMs, value));
  }

  toJSON(): LatencyPercentileSpec {
    const { percentile, windowSize, minSamples, initialDelayMs, minDelayMs, maxDelayMs } = this;
    return { kind: 'latency percentile', percentile, windowSize, minSamples, initialDelayMs, minDelayMs, maxDelayMs };
  }
}

/** The first index whose value is ≥ `value` (the array is sorted ascending). */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A hedge delay taken from a latency percentile the hedger observes ("The Tail at Scale", Dean and
 * Barroso, CACM 2013: send a hedged request once the first has been outstanding longer than the
 * 95th-percentile latency, which limits the extra load to about 5% while cutting the tail). Give it as
 * `delayMs` to `hedge()` / `createHedger()`; every call that shares it records its first attempt's
 * latency in it.
 *
 * @throws InvalidOptionError naming the field and the value: `percentile` outside (0, 100),
 *   `windowSize` not an integer in [1, 100 000], `minSamples` not an integer in [1, windowSize],
 *   a delay that is negative or not finite, `maxDelayMs` below `minDelayMs`, an unknown option.
 * @example
 * ```ts
 * const p95 = latencyPercentile({ percentile: 95, windowSize: 1000, initialDelayMs: 50 });
 * const hedged = createHedger({ maxAttempts: 2, delayMs: p95, budget: retryRatioBudget({ ratio: 0.1 }) });
 * ```
 */
export function latencyPercentile(options?: LatencyPercentileOptions): LatencyPercentile {
  const owner = 'latencyPercentile';
  const o = objectOption(owner, 'options', options, ['percentile', 'windowSize', 'minSamples', 'initialDelayMs', 'minDelayMs', 'maxDelayMs']);
  const percentile = numberOption(owner, 'percentile', o.percentile, 95, { min: 0, minExclusive: true, max: 100 });
  if (percentile === 100) throw new InvalidOptionError(owner, 'percentile', percentile, 'must be < 100 (the maximum is no percentile to hedge at)');
  const windowSize = numberOption(owner, 'windowSize', o.windowSize, 1000, { min: 1, max: 100_000, integer: true });
  const minSamples = numberOption(owner, 'minSamples', o.minSamples, Math.min(20, windowSize), { min: 1, max: windowSize, integer: true });
  const initialDelayMs = numberOption(owner, 'initialDelayMs', o.initialDelayMs, 100, { min: 0 });
  const minDelayMs = numberOption(owner, 'minDelayMs', o.minDelayMs, 0, { min: 0 });
  const maxDelayMs = numberOption(owner, 'maxDelayMs', o.maxDelayMs, Math.max(60_000, minDelayMs), { min: minDelayMs });
  return new PercentileWindow(percentile, windowSize, minSamples, initialDelayMs, minDelayMs, maxDelayMs);
}

/** True for a {@link LatencyPercentile} made by {@link latencyPercentile} (or any object with its `kind`, `record` and `delayMs`). */
export function isLatencyPercentile(value: unknown): value is LatencyPercentile {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as LatencyPercentile).kind === 'latency percentile' &&
    typeof (value as LatencyPercentile).record === 'function' &&
    typeof (value as LatencyPercentile).delayMs === 'function'
  );
}
