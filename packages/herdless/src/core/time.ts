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
