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
