import { InvalidOptionError } from './errors.js';

/**
 * A monotonic clock in milliseconds — the only notion of "now" herdless policies use.
 *
 * Core policies never read time themselves: they take `now` as an argument or a `Clock` in their
 * options. The runtime uses `performance.now()` (see `systemClock`), tests use a manual clock, the
 * simulator uses virtual time.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences between two readings mean anything. */
  now(): number;
}

/**
 * @internal An injected clock's reading, checked: a NaN or infinite "now" would silently disable a
 * deadline or an open breaker's wait, so it fails the call instead, naming the clock.
 * @throws InvalidOptionError naming `owner`, `field` (default `clock.now()`) and the value.
 */
export function checkedNow(
  clock: Clock,
  owner: string,
  field = 'clock.now()',
  requirement = 'must return a finite number of ms (a bug in the injected clock)',
): number {
  const now = clock.now();
  if (typeof now === 'number' && now > -Infinity && now < Infinity) return now;
  throw new InvalidOptionError(owner, field, now, requirement);
}
