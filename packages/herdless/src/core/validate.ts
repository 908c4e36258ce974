import { closestOption } from './closest-option.js';
import { InvalidOptionError } from './errors.js';

/** Constraints for {@link numberOption}. Bounds are inclusive unless marked exclusive. */
export interface NumberRule {
  /** Required: every option has a lower bound. */
  min: number;
  max?: number;
  /** Lower bound is exclusive: value > min. */
  minExclusive?: boolean;
  integer?: boolean;
  /** Infinity is accepted (it still has to satisfy min/max). */
  allowInfinity?: boolean;
}

/**
 * Reads a numeric option: `undefined` gives `fallback`; anything else must be a number that meets
 * `rule`, or an {@link InvalidOptionError} naming `owner`, `field` and the value is thrown.
 */
export function numberOption(owner: string, field: string, value: unknown, fallback: number, rule: NumberRule): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new InvalidOptionError(owner, field, value, 'must be a number');
  }
  if (!Number.isFinite(value) && !rule.allowInfinity) {
    throw new InvalidOptionError(owner, field, value, 'must be finite');
  }
  if (rule.integer && Number.isFinite(value) && !Number.isInteger(value)) {
    throw new InvalidOptionError(owner, field, value, 'must be an integer');
  }
  if (rule.minExclusive ? !(value > rule.min) : !(value >= rule.min)) {
    throw new InvalidOptionError(owner, field, value, `must be ${rule.minExclusive ? '>' : '≥'} ${rule.min}`);
  }
  if (rule.max !== undefined && !(value <= rule.max)) {
    throw new InvalidOptionError(owner, field, value, `must be ≤ ${rule.max}`);
  }
  return value;
}

/**
 * Throws an {@link InvalidOptionError} unless `value` is a plain object (or undefined, giving `{}`)
 * whose own keys are all in `known` (a misspelled option must never fall back silently to its
 * default); keys whose value is `undefined` are allowed, and inherited keys are not options.
 */
export function objectOption<T extends object>(owner: string, field: string, value: T | undefined, known: readonly string[]): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(owner, field, value, 'must be an object');
  }
  // for…in and an own-key check: no array of keys to allocate (backoffs may be built per call).
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined && !known.includes(key)) {
      throw new InvalidOptionError(owner, key, v, unknownOption(`an option of ${owner}`, key, known));
    }
  }
  return value;
}

/** Reads an optional function option: `undefined` passes through; a non-function is an {@link InvalidOptionError}. */
export function functionOption<F>(owner: string, field: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(owner, field, value, 'must be a function');
  return value;
}

/** @internal True when `value` is an object with a function at each of `names` (a port's shape: a clock, a signal, an Rng). */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const name of names) if (typeof (value as Record<string, unknown>)[name] !== 'function') return false;
  return true;
}

/**
 * The requirement of an {@link InvalidOptionError} for an option that is not one: `is not an option
 * of circuitBreaker (did you mean failureThreshold? options: …)` with the closest known name
 * ({@link closestOption}), or `(check the spelling; options: …)` when none is close. `what` names
 * whose option it is not (`an option of circuitBreaker`, `a hedging option`).
 */
export function unknownOption(what: string, key: string, known: readonly string[]): string {
  const near = closestOption(key, known);
  return `is not ${what} (${near === undefined ? 'check the spelling;' : `did you mean ${near}?`} options: ${known.join(', ')})`;
}
