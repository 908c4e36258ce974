import type { Clock } from '../core/time.js';

/**
 * The default {@link Clock} for real calls: `performance.now()`, a monotonic millisecond clock
 * (unlike `Date.now()`, it never jumps when the wall clock is set). Its readings only mean
 * something relative to each other. Pass your own clock in tests.
 *
 * @example
 * ```ts
 * const t0 = systemClock.now();
 * await work();
 * const elapsedMs = systemClock.now() - t0;
 * ```
 */
export const systemClock: Clock = { now: () => performance.now() };
