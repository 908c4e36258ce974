import type { Rng } from '../rng.js';
import { InvalidOptionError } from '../errors.js';
import { numberOption, objectOption } from '../validate.js';
import { MAX_DELAY_MS, type Backoff, type BackoffSpec } from './backoff.js';

/** Options of {@link decorrelatedJitterBackoff}. */
export interface DecorrelatedJitterBackoffOptions {
  /** The smallest wait and the starting "previous" wait, in ms. Default 100. Range (0, 2^31 − 1]. */
  baseMs?: number | undefined;
  /** The cap, in ms. Default 10 000; must be ≥ `baseMs`; values above 2^31 − 1 are held there. */
  maxBackoffMs?: number | undefined;
}

class DecorrelatedJitter implements Backoff {
  readonly name = 'decorrelated jitter' as const;
  constructor(
    readonly baseMs: number,
    readonly maxBackoffMs: number,
  ) {}
  get maxDelayMs(): number {
    return this.maxBackoffMs;
  }
  delay(_retry: number, previousMs: number, rng: Rng): number {
    // The first wait of a call starts from base; so does any previous value below base.
    // Stryker disable next-line EqualityOperator: at previousMs === baseMs both branches give baseMs.
    const previous = previousMs < this.baseMs ? this.baseMs : previousMs;
    // uniform(base, 3 × previous), in CPython's operation order for bit-exact reproduction.
    const d = this.baseMs + (previous * 3 - this.baseMs) * rng.random();
    // Stryker disable next-line EqualityOperator: at d === maxBackoffMs both branches return it.
    return d < this.maxBackoffMs ? d : this.maxBackoffMs;
  }
  toJSON(): BackoffSpec {
    return { kind: 'decorrelated jitter', baseMs: this.baseMs, maxBackoffMs: this.maxBackoffMs };
  }
}

/**
 * Decorrelated jitter, the AWS form: `min(maxBackoffMs, uniform(baseMs, 3 × previous))` ms, where
 * `previous` is this call's last delay (`baseMs` before the first). The range depends on the last
 * draw, not on the retry count. Source: the AWS "Exponential Backoff And Jitter" post (M. Brooker, 2015).
 *
 * The per-call state is the previous delay, which the caller passes back in (`retry()` and the
 * simulator do): the backoff object itself stays shared and immutable.
 *
 * @throws InvalidOptionError for a `baseMs` ≤ 0, NaN or infinite, or `maxBackoffMs` below `baseMs`.
 * @example
 * ```ts
 * const b = decorrelatedJitterBackoff({ baseMs: 100, maxBackoffMs: 10_000 });
 * const first = b.delay(1, 0, systemRandom); // in [100, 300)
 * const second = b.delay(2, first, systemRandom); // in [100, 3 × first)
 * ```
 */
export function decorrelatedJitterBackoff(options: DecorrelatedJitterBackoffOptions = {}): Backoff {
  const owner = 'decorrelatedJitterBackoff';
  const o = objectOption(owner, 'options', options, ['baseMs', 'maxBackoffMs']);
  const base = numberOption(owner, 'baseMs', o.baseMs, 100, { min: 0, minExclusive: true, max: MAX_DELAY_MS });
  const cap = numberOption(owner, 'maxBackoffMs', o.maxBackoffMs, Math.max(10_000, base), { min: 0, allowInfinity: true });
  if (cap < base) throw new InvalidOptionError(owner, 'maxBackoffMs', cap, `must be ≥ baseMs (${base})`);
  return Object.freeze(new DecorrelatedJitter(base, Math.min(cap, MAX_DELAY_MS)));
}
