import { MAX_DELAY_MS } from '../core/backoff/backoff.js';
import { nextMacrotask } from './macrotask.js';
import type { Scheduler } from './scheduler.js';

interface Timer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/**
 * A virtual clock with timers, for tests of code that uses `retry()`: pass it as the `clock`
 * option, then move time with {@link ManualClock.advance}. Nothing waits in real time; waits fire in
 * the order of their due time, ties in the order they were scheduled (SimPy's and Effect's
 * TestClock's rule).
 *
 * `advance()` and `runAll()` are async: between timers they let already-queued promise callbacks
 * run (one macrotask), so a retry woken by a timer can schedule its next wait before time moves on.
 * Code that waits for real I/O in between is not covered — keep it out of virtual-time tests.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const call = retry(op, { clock, backoff: constantBackoff({ delayMs: 1000 }) });
 * await clock.advance(1000); // the first wait ends; attempt 2 starts
 * clock.pending; // 1 if attempt 2 failed too and the next wait is scheduled
 * ```
 */
export class ManualClock implements Scheduler {
  #now: number;
  #seq = 0;
  /** Pending timers, sorted by (at, id). */
  #timers: Timer[] = [];
  #busy = false;

  /** @param startMs the initial reading of {@link ManualClock.now}, in ms. Default 0. */
  constructor(startMs = 0) {
    // Stryker disable next-line ConditionalExpression: Number.isFinite is false for every non-number, so the type check alone changes nothing.
    if (typeof startMs !== 'number' || !Number.isFinite(startMs)) throw new RangeError(`ManualClock: startMs must be a finite number, got ${String(startMs)}`);
    this.#now = startMs;
  }

  /** The virtual time in ms. It only moves in {@link ManualClock.advance} and {@link ManualClock.runAll}. */
  now(): number {
    return this.#now;
  }

  /** How many timers are scheduled and not yet fired or cleared. */
  get pending(): number {
    return this.#timers.length;
  }

  /** The due time (ms) of the next timer, or `undefined` when none is pending. */
  get nextAt(): number | undefined {
    return this.#timers[0]?.at;
  }

  /**
   * Schedules `callback` at `now() + delayMs`. A negative or NaN delay counts as 0, as with the
   * platform's `setTimeout`.
   *
   * @throws RangeError for a delay above 2^31 − 1 ms: the platform would fire it after 1 ms, so it
   *   is a bug in the code under test.
   */
  setTimeout(callback: () => void, delayMs: number): number {
    if (delayMs > MAX_DELAY_MS) {
      throw new RangeError(`ManualClock: a timer of ${delayMs} ms exceeds 2^31 − 1 ms; setTimeout would fire it after 1 ms`);
    }
    // Stryker disable next-line UpdateOperator: counting down gives distinct handles too.
    const timer: Timer = { id: ++this.#seq, at: this.#now + (delayMs > 0 ? delayMs : 0), callback };
    // Insert after every timer due at the same time or earlier: ties fire in scheduling order.
    const timers = this.#timers;
    let lo = 0;
    let hi = timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (timers[mid]!.at <= timer.at) lo = mid + 1;
      else hi = mid;
    }
    timers.splice(lo, 0, timer);
    return timer.id;
  }

  /** Cancels a timer; unknown, fired or cleared handles are ignored. */
  clearTimeout(handle: unknown): void {
    const i = this.#timers.findIndex((t) => t.id === handle);
    if (i >= 0) this.#timers.splice(i, 1);
  }

  /**
   * Moves time forward by `ms`, firing every timer due up to the new time in (due time, scheduling
   * order), including timers scheduled along the way. After each timer, and once before the first,
   * queued promise callbacks run. Resolves when the clock reads `now() + ms`.
   *
   * @throws RangeError for a negative or non-finite `ms`, or when another advance is running.
   */
  async advance(ms: number): Promise<void> {
    // Stryker disable next-line ConditionalExpression: Number.isFinite is false for every non-number, so the type check alone changes nothing.
    if (typeof ms !== 'number' || !(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`ManualClock.advance: ms must be a finite number ≥ 0, got ${String(ms)}`);
    }
    await this.#run(this.#now + ms, Infinity);
  }

  /**
   * Fires pending timers one after the other, moving time to each, until none is left (a retry
   * loop then has run to its end). Resolves with the number of timers fired.
   *
   * @param maxTimers a guard against code that schedules timers forever. Default 10 000.
   * @throws RangeError when more than `maxTimers` timers would fire, or another advance is running.
   */
  async runAll(maxTimers = 10_000): Promise<number> {
    return this.#run(Infinity, maxTimers);
  }

  async #run(until: number, maxTimers: number): Promise<number> {
    if (this.#busy) throw new RangeError('ManualClock: advance() or runAll() is already running; await it first');
    this.#busy = true;
    let fired = 0;
    try {
      // One macrotask: queued promise callbacks run, so the code they wake can schedule timers.
      await nextMacrotask();
      for (;;) {
        const next = this.#timers[0];
        if (next === undefined || next.at > until) break;
        if (fired >= maxTimers) throw new RangeError(`ManualClock.runAll: more than ${maxTimers} timers fired`);
        this.#timers.shift();
        // Stryker disable next-line ConditionalExpression,EqualityOperator: a pending timer is never due before now (scheduled at now + a delay ≥ 0; time stops at or before the next one), so the assignment alone does the same.
        if (next.at > this.#now) this.#now = next.at;
        fired++;
        next.callback();
        await nextMacrotask();
      }
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the loop fires only timers due by `until`, so the clock never passes it; assigning it unconditionally does the same.
      if (until !== Infinity && until > this.#now) this.#now = until;
      return fired;
    } finally {
      this.#busy = false;
    }
  }
}
