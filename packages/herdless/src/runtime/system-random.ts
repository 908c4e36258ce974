import { InvalidOptionError } from '../core/errors.js';
import { checkedRng, type Rng } from '../core/rng.js';
import { hasMethods } from '../core/validate.js';

/**
 * The default {@link Rng} for real calls: `Math.random`. Pass a seeded generator (for example
 * `new PyRandom(seed)` from `herdless/sim`) instead wherever you need repeatable delays, such as in tests.
 */
export const systemRandom: Rng = { random: Math.random };

/**
 * @internal The `random` option of `owner` (`retry`, `createHedger`, …): `undefined` when not given,
 * else the source to draw from — {@link systemRandom} as it is (known good), any other checked draw
 * by draw (`checkedRng`). Throws `InvalidOptionError` naming `key` for a value without `random()`.
 */
export function randomOption(owner: string, key: string, value: unknown): Rng | undefined {
  if (value === undefined) return undefined;
  if (!hasMethods(value, ['random'])) throw new InvalidOptionError(owner, key, value, 'must be an Rng ({ random(): number })');
  // Stryker disable next-line ConditionalExpression: Math.random always draws in [0, 1), so checking it draw by draw changes nothing but the cost.
  return value === systemRandom ? systemRandom : checkedRng(value as Rng, owner, key);
}
