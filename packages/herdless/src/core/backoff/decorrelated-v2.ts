import type { Rng } from '../rng.js';
import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';
import { MAX_DELAY_MS, type Backoff, type BackoffSpec } from './backoff.js';

/** Options of {@link decorrelatedJitterV2Backoff}. */
export interface DecorrelatedJitterV2BackoffOptions {
  /** The median of the first wait, in ms (Polly's `medianFirstRetryDelay`). Default 100. Range (0, 2^31 − 1]. */
  medianFirstDelayMs?: number | undefined;
  /** The cap on one wait, in ms. Default 10 000; must be ≥ `medianFirstDelayMs`; values above 2^31 − 1 are held there. */
  maxBackoffMs?: number | undefined;
}

// Polly's constants: P smooths the first delay; 1/1.4 puts the medians near 1, 2, 4 … × the base.
const P_FACTOR = 4;
const RP_SCALING = 1 / 1.4;

/** The formula's cumulative curve: 2^t × tanh(√(P × t)), t ≥ 0 (Infinity once 2^t overflows). */
function curve(t: number): number {
  return 2 ** t * Math.tanh(Math.sqrt(P_FACTOR * t));
}

class DecorrelatedJitterV2 implements Backoff {
  readonly name = 'decorrelated jitter v2' as const;
  constructor(
    readonly medianFirstDelayMs: number,
    readonly maxBackoffMs: number,
  ) {}
  get maxDelayMs(): number {
    return this.maxBackoffMs;
  }
  /**
   * `previousMs` is this call's carried state (see {@link carry}): the waits so far, in ms — the
   * curve's value at the previous retry, in Polly's terms, as long as no wait was capped.
   */
  delay(retry: number, previousMs: number, rng: Rng): number {
    // Polly counts attempts from 0: t = attempt + random() for retry number `retry` (from 1).
    const r = rng.random();
    const d = curve(retry - 1 + r) * RP_SCALING * this.medianFirstDelayMs - previousMs;
    if (d < this.maxBackoffMs) {
      // Stryker disable next-line EqualityOperator: at d = 0 both branches give +0 (d is never -0: a difference of equal doubles is +0).
      return d > 0 ? d : 0;
    }
    // Past the cap (or 2^t overflowed): the same draw places the wait in [cap / 2, cap), so waits
    // that reach the cap stay spread instead of piling up on it.
    const cap = this.maxBackoffMs;
    return cap / 2 + (cap / 2) * r;
  }
  /** The state to pass back: the total of this call's waits so far. */
  carry(previousMs: number, delayMs: number): number {
    return previousMs + delayMs;
  }
  toJSON(): BackoffSpec {
    return { kind: 'decorrelated jitter v2', medianFirstDelayMs: this.medianFirstDelayMs, maxBackoffMs: this.maxBackoffMs };
  }
}

/**
 * Decorrelated jitter V2, Polly's `DecorrelatedJitterBackoffV2` (formula by George Polevoy, scaled by
 * Dylan Reisenberger; Polly's "Retry with jitter" write-up): the waits grow smoothly and
 * exponentially — medians of 0.9, 1.1, 2, 4, 8, 16 … × `medianFirstDelayMs` for retries 1, 2, 3 … —
 * with jitter at every step,
 * and without AWS decorrelated jitter's flat median and its pile-up exactly at the cap.
 *
 * The formula: with `t = (n − 1) + uniform(0, 1)` before retry n and `f(t) = 2^t × tanh(√(4t))`, the
 * total wait after n retries is `f(t) / 1.4 × medianFirstDelayMs`; each wait is the step from the
 * total so far to that. Because each total is drawn afresh, clients that failed together drift
 * apart, and the sum of the waits stays on the smooth curve. Polly's formula has no cap of its own
 * (Polly v8 clamps the wait, which piles the waits up on the cap once the curve passes it); here a
 * wait the curve would put at or above `maxBackoffMs` is placed in [maxBackoffMs / 2, maxBackoffMs)
 * by the same draw: no pile-up at the cap.
 *
 * Per-call state: the total of the call's waits so far, which `retry()` and the simulator carry from
 * one retry to the next through the backoff's `carry()` (where Polly carries `f(t)` itself: the waits
 * are Polly's, draw for draw, until one is capped; after that, this form keeps the total on the
 * curve rather than restarting from the capped wait).
 *
 * @throws InvalidOptionError for a `medianFirstDelayMs` ≤ 0, NaN or infinite, or `maxBackoffMs` below it.
 * @example
 * ```ts
 * const b = decorrelatedJitterV2Backoff({ medianFirstDelayMs: 100, maxBackoffMs: 10_000 });
 * retry(op, { backoff: b, maxAttempts: 6 }); // median waits of about 90, 110, 200, 400, 810 ms
 * ```
 */
export function decorrelatedJitterV2Backoff(options: DecorrelatedJitterV2BackoffOptions = {}): Backoff {
  const owner = 'decorrelatedJitterV2Backoff';
  const o = objectOption(owner, 'options', options, ['medianFirstDelayMs', 'maxBackoffMs']);
  const base = numberOption(owner, 'medianFirstDelayMs', o.medianFirstDelayMs, 100, { min: 0, minExclusive: true, max: MAX_DELAY_MS });
  const cap = numberOption(owner, 'maxBackoffMs', o.maxBackoffMs, Math.max(10_000, base), { min: 0, allowInfinity: true });
  if (cap < base) throw new InvalidOptionError(owner, 'maxBackoffMs', cap, `must be ≥ medianFirstDelayMs (${base})`);
  return Object.freeze(new DecorrelatedJitterV2(base, Math.min(cap, MAX_DELAY_MS)));
}
