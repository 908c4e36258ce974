/**
 * Coded errors. Every error herdless throws carries a stable `code` string and a brand that
 * survives two copies of the package in one process (the brand is a `Symbol.for` key, not a class
 * identity), so `isHerdlessError(e)` works where `instanceof` would not.
 */

const BRAND: unique symbol = Symbol.for('herdless.error') as never;

/** Stable codes of the errors herdless throws or rejects with. */
export type HerdlessErrorCode = 'ERR_HERDLESS_INVALID_OPTION' | (string & {});

/**
 * Base class of herdless's errors: a stable {@link HerdlessError.code} and, where there was one,
 * the underlying failure as `cause`.
 */
export class HerdlessError extends Error {
  /** A stable machine-readable code, e.g. `ERR_HERDLESS_INVALID_OPTION`. */
  readonly code: HerdlessErrorCode;
  declare readonly [BRAND]: true;

  constructor(code: HerdlessErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'HerdlessError';
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * Thrown (synchronously, when options are built) for an option that is missing, of the wrong type
 * or out of range. The message names the owner, the field and the value; so do the properties.
 */
export class InvalidOptionError extends HerdlessError {
  /** The option's path, e.g. `maxBackoffMs` or `retryPolicy.maxAttempts`. */
  readonly field: string;
  /** The value that was rejected. */
  readonly value: unknown;
  /** What the value must be, e.g. `must be ≥ 0`. */
  readonly requirement: string;

  constructor(owner: string, field: string, value: unknown, requirement: string) {
    super('ERR_HERDLESS_INVALID_OPTION', `${owner}: ${field} ${requirement}, got ${describe(value)}`);
    this.name = 'InvalidOptionError';
    this.field = field;
    this.value = value;
    this.requirement = requirement;
  }
}

/** True for any error thrown by any copy of herdless; with `code`, only for that code. */
export function isHerdlessError(error: unknown, code?: HerdlessErrorCode): error is HerdlessError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [BRAND]?: unknown })[BRAND] === true &&
    (code === undefined || (error as HerdlessError).code === code)
  );
}

/** True for an {@link InvalidOptionError} from any copy of herdless. */
export function isInvalidOptionError(error: unknown): error is InvalidOptionError {
  return isHerdlessError(error, 'ERR_HERDLESS_INVALID_OPTION');
}

/**
 * What JSON.stringify leaves raw that a terminal still acts on: C1 controls (0x9b is CSI), DEL, and
 * the bidi and line-separator format characters.
 */
const UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A short, safe rendering of a rejected value for an error message: at most 60 characters of a string, every control escaped. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  // A bigint keeps its `n`: "maxAttempts must be a number, got 3" would hide why 3n was refused.
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined || value === null || typeof value === 'symbol') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return `an object (${Object.prototype.toString.call(value).slice(8, -1)})`;
}
