/**
 * Two counters over a sliding window, kept as a ring of time buckets — the memory is fixed at
 * construction (two `Float64Array`s of `buckets` slots), whatever the call count.
 *
 * Time is cut into buckets of `bucketMs`; a time `now` falls in bucket `k = floor(now / bucketMs)`.
 * The window at `now` is bucket k and the `buckets − 1` before it, i.e. the times in
 * [(k − buckets + 1) × bucketMs, (k + 1) × bucketMs): between `windowMs − bucketMs` and `windowMs`
 * of history. With 10 ms buckets and `now` on 10 ms ticks t, that is exactly ticks (t − buckets, t].
 *
 * Internal: budgets build on it; not part of the public API.
 */
export class SlidingCounts {
  /** Sum of counter A over the window (after the last {@link advance}). */
  sumA = 0;
  /** Sum of counter B over the window (after the last {@link advance}). */
  sumB = 0;
  private readonly a: Float64Array;
  private readonly b: Float64Array;
  /** Absolute index of the current bucket; −Infinity before the first event. */
  private current = -Infinity;
  /** Ring slot of the current bucket. */
  private slot = 0;

  constructor(
    readonly bucketMs: number,
    readonly buckets: number,
  ) {
    this.a = new Float64Array(buckets);
    this.b = new Float64Array(buckets);
  }

  /**
   * Moves the window so that it ends at `now`, dropping the buckets that left it. A `now` earlier
   * than the current bucket (or NaN) is taken as the current bucket: budgets assume a
   * non-decreasing clock, and a late reading from a concurrent call must not corrupt the ring.
   *
   * At most `buckets` slots are touched whatever `now` and `bucketMs` are. The loop counts steps
   * rather than walking absolute bucket indices: past 2^53 an index + 1 rounds back to the index
   * itself, and a loop on `i <= k` would never end.
   */
  advance(now: number): void {
    const k = Math.floor(now / this.bucketMs);
    // Stryker disable next-line EqualityOperator: at k === current there are no steps: the loop runs 0 times and current stays k.
    if (!(k > this.current)) return;
    const n = this.buckets;
    const steps = k - this.current;
    // Stryker disable next-line EqualityOperator: at steps === n the loop clears every slot once and ends on the slot it started from — the state clear() leaves (the counts are whole numbers, so the subtractions end at exactly 0).
    if (steps >= n) {
      this.clear();
    } else {
      // Amortised O(1): every bucket is cleared once per pass of the clock over it.
      let slot = this.slot;
      for (let i = 0; i < steps; i++) {
        slot = slot + 1 === n ? 0 : slot + 1;
        this.sumA -= this.a[slot]!;
        this.sumB -= this.b[slot]!;
        this.a[slot] = 0;
        this.b[slot] = 0;
      }
      this.slot = slot;
    }
    this.current = k;
  }

  /** Empties the window and forgets the current bucket (the next {@link advance} starts afresh). */
  reset(): void {
    this.clear();
    this.current = -Infinity;
  }

  private clear(): void {
    this.a.fill(0);
    this.b.fill(0);
    this.sumA = 0;
    this.sumB = 0;
  }

  /** Adds to the current bucket's counters; call {@link advance} first. */
  add(da: number, db: number): void {
    this.a[this.slot]! += da;
    this.b[this.slot]! += db;
    this.sumA += da;
    this.sumB += db;
  }

  /**
   * Calls `fn(startMs, a, b)` for each bucket of the window that holds a count, newest first;
   * `startMs` is the time the bucket begins. Call {@link advance} first. (For the breaker's
   * snapshots, which carry the window across processes.)
   */
  forEachBucket(fn: (startMs: number, a: number, b: number) => void): void {
    // Before the first event every slot is 0: the loop visits nothing.
    let slot = this.slot;
    for (let i = 0; i < this.buckets; i++) {
      const a = this.a[slot]!;
      const b = this.b[slot]!;
      if (a !== 0 || b !== 0) fn((this.current - i) * this.bucketMs, a, b);
      slot = slot === 0 ? this.buckets - 1 : slot - 1;
    }
  }

  /** Element count of the ring (for the bounded-memory test): constant for the object's life. */
  get capacity(): number {
    return this.a.length + this.b.length;
  }
}
