import { numberOption, objectOption } from '../validate.js';
import { MAX_DELAY_MS, type Backoff, type BackoffSpec } from './backoff.js';

/** Options of {@link constantBackoff}. */
export interface ConstantBackoffOptions {
  /** The wait before every retry, in ms. Default 0 (retry at once). Range [0, 2^31 − 1]. */
  delayMs?: number | undefined;
}

class ConstantBackoff implements Backoff {
  readonly name: string;
  readonly maxDelayMs: number;
  constructor(readonly delayMs: number) {
    this.maxDelayMs = delayMs;
    this.name = delayMs === 0 ? 'immediate' : `constant ${delayMs} ms`;
  }
  delay(): number {
    return this.delayMs;
  }
  toJSON(): BackoffSpec {
    return { kind: 'constant', delayMs: this.delayMs };
  }
}

/**
 * @internal The fixed wait of a backoff made by {@link constantBackoff}, or `undefined` for any
 * other backoff. The simulator uses it to skip the per-request `delay()` call: such a backoff draws
 * nothing and ignores its arguments, so skipping the call changes no number.
 */
// Stryker disable next-line BlockStatement: `undefined` only makes the simulator call delay(), which returns this same delayMs (the shortcut changes no number, as said above).
export function constantDelayOf(backoff: Backoff): number | undefined {
  return backoff instanceof ConstantBackoff ? backoff.delayMs : undefined;
}

/**
 * The same wait before every retry; `delayMs: 0` retries at once. No jitter, so clients that fail
 * together retry together: the thundering herd the article measures (the lab's `immediate` and
 * `fixed 1s` rows). Useful in tests and behind a retry budget, rarely on its own.
 *
 * @throws InvalidOptionError when `delayMs` is not a finite number in [0, 2^31 − 1].
 * @example
 * ```ts
 * const fixed = constantBackoff({ delayMs: 1000 });
 * fixed.delay(7, 0, systemRandom); // 1000
 * ```
 */
export function constantBackoff(options: ConstantBackoffOptions = {}): Backoff {
  const o = objectOption('constantBackoff', 'options', options, ['delayMs']);
  return Object.freeze(new ConstantBackoff(numberOption('constantBackoff', 'delayMs', o.delayMs, 0, { min: 0, max: MAX_DELAY_MS })));
}
