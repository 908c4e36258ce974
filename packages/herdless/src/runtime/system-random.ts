import type { Rng } from '../core/rng.js';

/**
 * The default {@link Rng} for real calls: `Math.random`. Pass a seeded generator (for example
 * `new PyRandom(seed)` from `herdless/sim`) instead wherever you need repeatable delays, such as in tests.
 */
export const systemRandom: Rng = { random: Math.random };
