import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';
import type { BudgetSpec, RetryBudget } from './budget.js';
import { SlidingCounts } from './sliding-window.js';

/** When {@link retryRatioBudget} counts a retry: see {@link RetryRatioBudgetOptions.countAt}. */
export type RetryCountingPoint = 'decision' | 'send';

/** Options of {@link retryRatioBudget}. */
export interface RetryRatioBudgetOptions {
  /**
   * The largest share of requests (first tries and retries together) that may be retries over
   * the window. Default 0.1 (the SRE book's 10%). Range [0, 1].
   */
  ratio?: number | undefined;
  /**
   * The floor: retries allowed per window on top of `ratio × requests`, so that a quiet client
   * (a few requests per second, where 10% is less than one retry) can still retry now and then —
   * the role of Finagle's `minRetriesPerSec`. Default 1. Range ≥ 0 (need not be whole). The
   * article's variant uses 0.
   */
  minRetriesPerWindow?: number | undefined;
  /** The window length, in ms. Default 1000 (the article's "last 1 s"). Range > 0, finite. */
  windowMs?: number | undefined;
  /**
   * How many buckets the window is cut into (the ring's size; memory is 16 bytes per bucket).
   * Each bucket is `windowMs / buckets` ms wide, and the window reaches back between
   * `windowMs − windowMs / buckets` and `windowMs`. Default 10 (100 ms buckets). Integer in
   * [1, 10 000]. Use 100 with a 1000 ms window to reproduce the article's 10 ms ticks.
   */
  buckets?: number | undefined;
  /**
   * When a retry counts. `'decision'` (default): in `allowRetry`, the moment it is granted — as a
   * retry and as a request — so retries waiting out their backoff are already counted and the
   * ratio holds; its later `onAttempt(now, true)` adds nothing (it is not counted twice). A retry
   * granted but never sent (the call was aborted during its wait) stays counted: the budget errs
   * on the side of fewer retries.
   *
   * `'send'`: in `onAttempt(now, true)`, when the retry is sent, as the article's lab did. Retries
   * decided but still waiting are invisible, so while they wait other failures are granted too:
   * in the article's outage retries came to about 20% of arrivals under a 10% ratio. For
   * reproducing the article only.
   */
  countAt?: RetryCountingPoint | undefined;
}

/**
 * The SRE book's per-client retry ratio, with its window's counts readable for charts and tests.
 */
export interface RetryRatioBudget extends RetryBudget {
  readonly name: 'retry ratio';
  /** The normalised options: see {@link RetryRatioBudgetOptions}. */
  readonly ratio: number;
  /** The floor: retries per window on top of `ratio × requests`. */
  readonly minRetriesPerWindow: number;
  /** The window length in ms. */
  readonly windowMs: number;
  /** The ring's bucket count (each `windowMs / buckets` ms wide). */
  readonly buckets: number;
  /** When retries count: at the grant (`'decision'`) or when sent (`'send'`). */
  readonly countAt: RetryCountingPoint;
  /** Requests (first tries and counted retries) in the window ending at `now` (moves the window). */
  requestsInWindow(now: number): number;
  /** Retries counted in the window ending at `now` (moves the window). */
  retriesInWindow(now: number): number;
  /** The options, normalised, as data (`kind: 'retry ratio'`). */
  toJSON(): BudgetSpec;
}

class RetryRatio implements RetryRatioBudget {
  readonly name = 'retry ratio' as const;
  private readonly window: SlidingCounts;
  private readonly atDecision: boolean;
  constructor(
    readonly ratio: number,
    readonly minRetriesPerWindow: number,
    readonly windowMs: number,
    readonly buckets: number,
    readonly countAt: RetryCountingPoint,
  ) {
    // Counter A: requests (S); counter B: retries (R).
    this.window = new SlidingCounts(windowMs / buckets, buckets);
    this.atDecision = countAt === 'decision';
  }
  onAttempt(now: number, isRetry: boolean): void {
    if (isRetry) {
      if (this.atDecision) return; // counted when it was granted
      this.window.advance(now);
      this.window.add(1, 1);
    } else {
      this.window.advance(now);
      this.window.add(1, 0);
    }
  }
  onSuccess(): void {}
  onFailure(): void {}
  allowRetry(now: number): boolean {
    const w = this.window;
    w.advance(now);
    if (this.atDecision) {
      // Grant only if, counting this retry as a retry and as a request, R ≤ ratio × S + floor.
      if (w.sumB + 1 <= this.ratio * (w.sumA + 1) + this.minRetriesPerWindow) {
        w.add(1, 1);
        return true;
      }
      return false;
    }
    // The article's rule, literally: R < ratio × S (+ floor), over the sends recorded so far.
    return w.sumB < this.ratio * w.sumA + this.minRetriesPerWindow;
  }
  requestsInWindow(now: number): number {
    this.window.advance(now);
    return this.window.sumA;
  }
  retriesInWindow(now: number): number {
    this.window.advance(now);
    return this.window.sumB;
  }
  /** Element count of the ring: constant for the object's life (the bounded-memory test reads it). */
  get ringSize(): number {
    return this.window.capacity;
  }
  toJSON(): BudgetSpec {
    return {
      kind: 'retry ratio',
      ratio: this.ratio,
      minRetriesPerWindow: this.minRetriesPerWindow,
      windowMs: this.windowMs,
      buckets: this.buckets,
      countAt: this.countAt,
    };
  }
}

/**
 * The article's 10% retry ratio, as options: `countAt: 'send'`, floor 0, a 1000 ms window in
 * 100 buckets of 10 ms. Driven with `now` on the lab's 10 ms ticks t, a retry is allowed iff
 * R < 0.1 × S, where S and R are the client's sends and retry sends at ticks (t − 100, t] — the
 * article's rule exactly, flaw included. Use it to reproduce the article, not in production.
 *
 * @example
 * ```ts
 * const perClient = retryRatioBudget(ARTICLE_RETRY_RATIO);
 * ```
 */
export const ARTICLE_RETRY_RATIO: Readonly<Required<RetryRatioBudgetOptions>> = /* @__PURE__ */ Object.freeze({
  ratio: 0.1,
  minRetriesPerWindow: 0,
  windowMs: 1000,
  buckets: 100,
  countAt: 'send',
});

/**
 * A retry ratio budget (Google SRE book, "Handling Overload": a per-client retry budget — retry
 * only while retries are under 10% of requests). It keeps requests and retries over a sliding
 * window (a fixed ring of `buckets` buckets: memory does not grow with traffic) and grants a retry
 * only if, counting it, retries ≤ `ratio` × requests + `minRetriesPerWindow` over the window.
 * Requests are first tries (counted in `onAttempt`) and retries (counted when granted). First
 * tries are never limited.
 *
 * The guarantee, at every grant: within the window ending then, retries ≤ ratio × requests +
 * floor. Under a total outage that caps the load at about 1 / (1 − ratio) times the new requests
 * (1.11× at 10%), plus the floor.
 *
 * `countAt: 'send'` counts retries when they are sent instead, and grants while
 * R < ratio × S + floor — the article's variant ({@link ARTICLE_RETRY_RATIO}), which overshoots.
 *
 * @throws InvalidOptionError naming the field: `ratio` outside [0, 1], a negative or non-finite
 *   `minRetriesPerWindow`, `windowMs` ≤ 0 or not finite, `buckets` not an integer in [1, 10 000],
 *   `countAt` not `'decision'` or `'send'`.
 * @example
 * ```ts
 * const budget = retryRatioBudget({ ratio: 0.1 }); // shared by every call of this client
 * budget.onAttempt(now, false);
 * budget.onFailure(now);
 * budget.allowRetry(now); // true: the floor allows 1 retry per second to a quiet client
 * ```
 */
export function retryRatioBudget(options?: RetryRatioBudgetOptions): RetryRatioBudget {
  const owner = 'retryRatioBudget';
  const o = objectOption(owner, 'options', options, ['ratio', 'minRetriesPerWindow', 'windowMs', 'buckets', 'countAt']);
  const ratio = numberOption(owner, 'ratio', o.ratio, 0.1, { min: 0, max: 1 });
  const floor = numberOption(owner, 'minRetriesPerWindow', o.minRetriesPerWindow, 1, { min: 0 });
  const windowMs = numberOption(owner, 'windowMs', o.windowMs, 1000, { min: 0, minExclusive: true });
  const buckets = numberOption(owner, 'buckets', o.buckets, 10, { min: 1, max: 10_000, integer: true });
  const countAt = o.countAt ?? 'decision';
  if (countAt !== 'decision' && countAt !== 'send') {
    throw new InvalidOptionError(owner, 'countAt', countAt, 'must be "decision" or "send"');
  }
  return new RetryRatio(ratio, floor, windowMs, buckets, countAt);
}
