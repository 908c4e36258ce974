/**
 * The counting-strategy protocol: what decides that a closed breaker should open. The state machine
 * and the counting are separate pieces, so a strategy knows nothing about half-open, permits or
 * clocks, and the machine knows nothing about windows or thresholds.
 *
 * A {@link CountingStrategy} is configuration (immutable, shareable); each breaker calls `create()`
 * once to get its own mutable {@link FailureCounter}, so two breakers built from the same strategy
 * never share counts.
 */

/**
 * A JSON value, as the counts of a snapshot hold them.
 * @example
 * ```ts
 * const recent: BreakerCountsValue = [{ ageMs: 250, calls: 12, failures: 7 }];
 * ```
 */
export type BreakerCountsValue = string | number | boolean | null | readonly BreakerCountsValue[] | { readonly [field: string]: BreakerCountsValue };

/** The counts a strategy reports in a breaker snapshot: plain JSON, `strategy` names the kind. */
export interface BreakerCounts {
  /** The strategy's name, e.g. `'consecutive failures'`. */
  readonly strategy: string;
  readonly [field: string]: BreakerCountsValue;
}

/**
 * The per-breaker counting state. The breaker feeds it only the outcomes of calls admitted while
 * closed (never refusals, never ignored outcomes such as caller aborts, never half-open trials).
 * All times are milliseconds on the breaker's clock; a counter never reads a clock itself.
 */
export interface FailureCounter {
  /**
   * A call that was admitted while closed ended at `now` ms, `failed` or not. Returns `true` when
   * the breaker should open now.
   */
  record(failed: boolean, now: number): boolean;
  /** Forget everything: the breaker closed at `now` ms and starts a fresh count. */
  reset(now: number): void;
  /**
   * The current counts at `now` ms, for snapshots. Times in them are ages (ms before the snapshot),
   * never readings of the clock, so that another process can restore them.
   */
  snapshot(now: number): BreakerCounts;
  /**
   * Optional: take over `counts`, from `snapshot()` of a counter of the same strategy (perhaps in
   * another process), as they were `ageMs` ago; `now` is the time on this breaker's clock. It must
   * check everything first and change nothing when it throws: an `InvalidOptionError` naming
   * `field` + `.` + the field. `counts.strategy` has already been checked. A counter without it
   * starts from zero when a breaker is restored.
   */
  restore?(counts: BreakerCounts, now: number, ageMs: number, owner: string, field: string): void;
  /**
   * `true` when `record` never reads its `now` (e.g. consecutive failures): a breaker that reads a
   * clock can then skip reading it for a call's outcome. Default: the time is needed.
   */
  readonly timeless?: boolean | undefined;
}

/**
 * A counting strategy: a factory of {@link FailureCounter}s plus its options as JSON. Built-ins:
 * `consecutiveFailures()` and `failureRatio()`.
 */
export interface CountingStrategy {
  /** The strategy's name, e.g. `'failure ratio'`. */
  readonly name: string;
  /** A fresh counter for one breaker. */
  create(): FailureCounter;
  /** The normalised options, JSON-ready (`{ kind, …options }`). */
  toJSON(): { readonly kind: string; readonly [option: string]: string | number };
}
