import { InvalidOptionError } from './errors.js';

/**
 * A source of uniform random numbers — the only randomness any herdless policy uses.
 *
 * Policies never call `Math.random` themselves: the runtime passes {@link systemRandom}
 * (or a seeded generator you supply), and the simulator passes a seeded `PyRandom` (`herdless/sim`).
 * That is what lets the very same backoff object run in real time and in virtual time.
 *
 * @example
 * ```ts
 * const rng: Rng = new PyRandom(42);
 * const x = rng.random(); // 0 <= x < 1
 * ```
 */
export interface Rng {
  /** A uniform double in [0, 1). */
  random(): number;
}

/**
 * An {@link Rng} that can also draw uniform integers, as the simulator's server needs
 * when it picks which requests of a batch succeed.
 */
export interface IntRng extends Rng {
  /** A uniform integer in [0, n); `n` is an integer ≥ 1. */
  randbelow(n: number): number;
}

/**
 * @internal An injected {@link Rng}, checked at every draw: a value outside [0, 1) (a broken
 * generator) would otherwise stretch or shrink every wait silently, and be blamed on the backoff.
 * An object without a `random` method is returned as it is, for the option's own check to report.
 */
export function checkedRng(rng: Rng, owner: string, field: string): Rng {
  if (typeof rng !== 'object' || rng === null || typeof rng.random !== 'function') return rng;
  return new CheckedRng(rng, owner, field);
}

class CheckedRng implements Rng {
  readonly #rng: Rng;
  readonly #owner: string;
  readonly #field: string;
  constructor(rng: Rng, owner: string, field: string) {
    this.#rng = rng;
    this.#owner = owner;
    this.#field = field;
  }
  random(): number {
    const x = this.#rng.random();
    if (typeof x === 'number' && x >= 0 && x < 1) return x;
    throw new InvalidOptionError(this.#owner, `${this.#field}.random()`, x, 'must return a number in [0, 1) (a bug in the injected Rng)');
  }
}
