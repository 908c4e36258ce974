import { InvalidOptionError } from '../core/errors.js';
import { absentHeader, checkNowMs, parseHttpDate, trimOws } from './http-date.js';
import { RETRY_AFTER_MS_HEADER } from './data.js';

const DIGITS = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(?:\.[0-9]+)?$/;

/** Waits are capped here so that an absurd value stays a finite number (it then exceeds any maxRetryAfterMs). */
const MAX_HINT_MS = Number.MAX_SAFE_INTEGER;

/**
 * Parses a `Retry-After` header value (RFC 9110 §10.2.3) into a wait in milliseconds, or
 * `undefined` when the value is not valid — the caller then falls back to its backoff.
 *
 * - **delay-seconds**: digits only (`0`, `5`, `120`), × 1000. A sign, a decimal point, an
 *   exponent or an empty value is not delay-seconds (`-1`, `+3`, `1.5`, `1e3`, `''` → `undefined`).
 *   A huge value (`9999999999`) stays a huge wait, never a date and never a crash; values beyond
 *   2^53 − 1 ms are held there.
 * - **HTTP-date** (IMF-fixdate or one of the two obsolete forms, see {@link parseHttpDate}): the
 *   time from `nowMs` to that date, in whole ms rounded up (a `nowMs` with fractions, such as
 *   `performance.timeOrigin + performance.now()`, never makes a wait that ends before the date).
 *   A date at or before `nowMs` is no hint (`undefined`): the
 *   backoff applies, with its jitter — every client retrying at once is the herd to avoid.
 * - anything else (`soon`, an ISO date, two values `5, 5`) → `undefined`.
 *
 * Surrounding spaces and tabs are ignored. The value is never given to a generic date parser, so
 * `120` is 120 seconds, never the year 120.
 *
 * @param value the header value (`null` when the header is absent, as `Headers.get` returns).
 * @param nowMs the time in ms since the epoch that an HTTP-date is measured from: the response's own
 *   `Date` when it has one (see {@link retryAfterFromHeaders}), else the local wall clock.
 * @returns the wait in ms (≥ 0, finite), or `undefined`.
 * @throws InvalidOptionError when `value` is neither a string nor null/undefined (a number such as
 *   `120` is refused: a header's value is text), or when `value` is a string and `nowMs` is not a
 *   finite number.
 * @example
 * ```ts
 * parseRetryAfter('120', now); // 120000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.UTC(2015, 9, 21, 7, 28, 0)); // 10000
 * parseRetryAfter('1.5', now); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (typeof value !== 'string') return absentHeader('parseRetryAfter', value);
  checkNowMs('parseRetryAfter', nowMs);
  const text = trimOws(value);
  if (DIGITS.test(text)) return Math.min(Number(text) * 1000, MAX_HINT_MS);
  const at = parseHttpDate(text, nowMs);
  // Stryker disable next-line ConditionalExpression: `undefined > nowMs` is false, so the next line returns undefined as well.
  if (at === undefined) return undefined;
  return at > nowMs ? Math.min(Math.ceil(at - nowMs), MAX_HINT_MS) : undefined;
}

/**
 * Parses a `retry-after-ms` header value: a non-negative number of milliseconds written as digits
 * with an optional fractional part (`1500`, `250.5`); anything else gives `undefined`.
 *
 * @throws InvalidOptionError when `value` is neither a string nor null/undefined.
 * @example
 * ```ts
 * parseRetryAfterMs('1500'); // 1500
 * parseRetryAfterMs('-1'); // undefined
 * ```
 */
export function parseRetryAfterMs(value: string | null | undefined): number | undefined {
  if (typeof value !== 'string') return absentHeader('parseRetryAfterMs', value);
  const text = trimOws(value);
  return DECIMAL.test(text) ? Math.min(Number(text), MAX_HINT_MS) : undefined;
}

/**
 * The wait a response's headers ask for, in ms: a valid `retry-after-ms`, else a valid
 * `Retry-After`, else `undefined`. Which statuses it applies to is the caller's business (the fetch
 * adapter reads it on every status it retries).
 *
 * An HTTP-date `Retry-After` is measured from the response's own `Date` header when that is a valid
 * HTTP-date (the server wrote both with one clock, so a client clock that is off does not matter:
 * RFC 9110 §10.2.3 defines the wait relative to the response's generation), else from `nowMs`.
 *
 * @param headers the response's headers: a `Headers`, or anything with its `get(name)`.
 * @param nowMs the local wall-clock time in ms since the epoch, for an HTTP-date when the response has no valid `Date`.
 * @throws InvalidOptionError when `headers` has no `get` method (a plain object of header values
 *   is refused, not read as empty).
 * @example
 * ```ts
 * retryAfterFromHeaders(new Headers({ 'retry-after': '2' }), Date.now()); // 2000
 * ```
 */
export function retryAfterFromHeaders(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  if (typeof (headers as { get?: unknown } | null | undefined)?.get !== 'function') {
    throw new InvalidOptionError('retryAfterFromHeaders', 'headers', headers, 'must be a Headers, or any object with its get(name) method (a plain object of values: new Headers(object))');
  }
  const ms = parseRetryAfterMs(headers.get(RETRY_AFTER_MS_HEADER));
  if (ms !== undefined) return ms;
  const value = headers.get('retry-after');
  // Stryker disable next-line ConditionalExpression: parseRetryAfter(null, …) returns undefined as well (before it reads the time); this only skips reading Date.
  if (value === null) return undefined;
  const date = headers.get('date');
  // Stryker disable next-line ConditionalExpression: parseHttpDate(null) is undefined as well (it refuses anything but a string).
  const generated = date === null ? undefined : parseHttpDate(date, nowMs);
  return parseRetryAfter(value, generated ?? nowMs);
}
