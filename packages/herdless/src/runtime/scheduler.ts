import { InvalidOptionError } from '../core/errors.js';
import type { Clock } from '../core/time.js';
import { hasMethods } from '../core/validate.js';

/**
 * The clock-and-timer port of the runtime: `retry()` reads time and schedules its waits and
 * timeouts through it, never through globals, so tests can pass a {@link ManualClock} and run in
 * virtual time. Times are milliseconds on a monotonic scale.
 *
 * `retry()` never asks for a delay above 2^31 − 1 ms (a larger `setTimeout` delay fires after 1 ms)
 * and never schedules a 0 ms timer.
 *
 * @example
 * ```ts
 * const scheduler: Scheduler = new ManualClock();
 * const handle = scheduler.setTimeout(() => console.log('fired'), 100);
 * scheduler.clearTimeout(handle);
 * ```
 */
export interface Scheduler extends Clock {
  /** Runs `callback` once, `delayMs` ms from now; returns a handle for {@link Scheduler.clearTimeout}. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  /** Cancels a pending callback; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock and timers: `performance.now()`, and the global `setTimeout` / `clearTimeout`.
 * Timers are ref'd, so a pending retry keeps a Node.js process alive until it settles (pass
 * `unref: true` to `retry()` for background work that must not).
 *
 * @example
 * ```ts
 * retry(op, { clock: systemScheduler }); // the default
 * ```
 */
export const systemScheduler: Scheduler = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

/**
 * @internal The `clock` option of the layers that schedule (`retry()`, `hedge()`): undefined, or an
 * object with the three methods of a {@link Scheduler}.
 */
export function schedulerOption(owner: string, value: unknown): Scheduler | undefined {
  if (value === undefined) return undefined;
  if (!hasMethods(value, ['now', 'setTimeout', 'clearTimeout'])) {
    throw new InvalidOptionError(owner, 'clock', value, 'must be a Scheduler (now, setTimeout, clearTimeout), e.g. a ManualClock');
  }
  return value as Scheduler;
}
