import { InvalidOptionError } from '../errors.js';
import type { Rng } from '../rng.js';

/**
 * The largest delay a timer can be given: 2^31 − 1 ms (about 24.8 days). Node and browsers treat a
 * larger `setTimeout` delay as 1 ms, which would turn a long backoff into an immediate retry, so
 * every herdless delay is capped here.
 */
export const MAX_DELAY_MS = 2_147_483_647;

/**
 * Checks a delay returned by a {@link Backoff} (herdless's own always pass; a custom one may not):
 * a number of ms in [0, {@link MAX_DELAY_MS}]. Anything else is a bug in that backoff, and is
 * reported rather than turned into an immediate retry (NaN, a negative) or a 24-day wait
 * (Infinity).
 * @internal
 * @throws InvalidOptionError naming `owner`, `backoff.delay()` and the value.
 */
export function checkedDelay(owner: string, ms: unknown, field = 'backoff.delay()'): number {
  if (typeof ms === 'number' && ms >= 0 && ms <= MAX_DELAY_MS) return ms;
  throw new InvalidOptionError(owner, field, ms, `must return a number of ms in [0, ${MAX_DELAY_MS}] (a bug in a custom Backoff)`);
}

/**
 * A backoff strategy: how long to wait before each retry. It is configuration only — shared,
 * immutable and safe to use from many calls at once. The per-call state (the previous delay, which
 * only decorrelated jitter reads) is passed in by the caller, so the very same object drives real
 * calls (`retry()`) and simulated clients (the lab).
 *
 * Every delay is a finite number of milliseconds in [0, {@link Backoff.maxDelayMs}], and
 * `maxDelayMs` ≤ {@link MAX_DELAY_MS}. A custom backoff that returns anything else (NaN, a
 * negative, Infinity, a string) is a bug that `retry()` and the breaker report with an
 * `InvalidOptionError` naming `backoff.delay()` and the value: the call rejects with it (it is
 * never turned into an immediate retry or a 24-day wait).
 *
 * @example
 * ```ts
 * const b = fullJitterBackoff({ initialBackoffMs: 100, maxBackoffMs: 10_000 });
 * let previous = 0;
 * for (let retry = 1; retry <= 3; retry++) previous = b.delay(retry, previous, systemRandom);
 * ```
 */
export interface Backoff {
  /** The strategy's name, e.g. `'full jitter'`; the lab prints it. */
  readonly name: string;
  /** The largest delay this strategy can return, in ms (≤ {@link MAX_DELAY_MS}). */
  readonly maxDelayMs: number;
  /**
   * The wait in milliseconds before retry number `retry`.
   *
   * @param retry 1 for the wait after the first failure, 2 after the second, … (an integer ≥ 1;
   *   any size — 10^6 is fine).
   * @param previousMs the delay this same call was given last time (or, for a backoff with
   *   {@link Backoff.carry}, what `carry` returned), or 0 before its first wait.
   * @param rng the uniform source; strategies without jitter do not draw from it.
   */
  delay(retry: number, previousMs: number, rng: Rng): number;
  /**
   * Optional: the per-call value to pass back as `previousMs` at the next retry, given the one
   * passed this time and the wait just returned. Without it, the wait itself is passed back (what
   * decorrelated jitter reads). Decorrelated jitter V2 carries the total of the waits so far.
   */
  carry?(previousMs: number, delayMs: number): number;
  /** The options this strategy was built from, normalised: a JSON-ready {@link BackoffSpec}. */
  toJSON(): BackoffSpec;
}

/** A backoff described as data (lab config files, the lab page): see `backoffFromSpec`. */
export type BackoffSpec =
  | { kind: 'constant'; delayMs: number }
  | { kind: 'exponential' | 'full jitter' | 'equal jitter'; initialBackoffMs: number; backoffMultiplier: number; maxBackoffMs: number }
  | { kind: 'proportional jitter'; initialBackoffMs: number; backoffMultiplier: number; maxBackoffMs: number; jitter: number; capAfterJitter?: boolean }
  | { kind: 'decorrelated jitter'; baseMs: number; maxBackoffMs: number }
  | { kind: 'decorrelated jitter v2'; medianFirstDelayMs: number; maxBackoffMs: number };
