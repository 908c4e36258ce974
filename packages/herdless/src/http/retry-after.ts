import { parseHttpDate, trimOws } from './http-date.js';
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
 *   time from `nowMs` to that date; a date in the past means 0 (retry now).
 * - anything else (`soon`, an ISO date, two values `5, 5`) → `undefined`.
 *
 * Surrounding spaces and tabs are ignored. The value is never given to a generic date parser, so
 * `120` is 120 seconds, never the year 120.
 *
 * @param value the header value (`null` when the header is absent, as `Headers.get` returns).
 * @param nowMs the wall-clock time in ms since the epoch (`Date.now()`), for HTTP-dates.
 * @returns the wait in ms (≥ 0, finite), or `undefined`.
 * @example
 * ```ts
 * parseRetryAfter('120', now); // 120000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.UTC(2015, 9, 21, 7, 28, 0)); // 10000
 * parseRetryAfter('1.5', now); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = trimOws(value);
  if (DIGITS.test(text)) return Math.min(Number(text) * 1000, MAX_HINT_MS);
  const at = parseHttpDate(text, nowMs);
  if (at === undefined || !Number.isFinite(nowMs)) return undefined;
  return at > nowMs ? Math.min(at - nowMs, MAX_HINT_MS) : 0;
}

/**
 * Parses a `retry-after-ms` header value: a non-negative number of milliseconds written as digits
 * with an optional fractional part (`1500`, `250.5`); anything else gives `undefined`.
 *
 * @example
 * ```ts
 * parseRetryAfterMs('1500'); // 1500
 * parseRetryAfterMs('-1'); // undefined
 * ```
 */
export function parseRetryAfterMs(value: string | null | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = trimOws(value);
  return DECIMAL.test(text) ? Math.min(Number(text), MAX_HINT_MS) : undefined;
}

/**
 * The wait a response's headers ask for, in ms: a valid `retry-after-ms`, else a valid
 * `Retry-After`, else `undefined`. Which statuses it applies to is the caller's business (the fetch
 * adapter reads it on 429 and 503 only).
 *
 * @param headers the response's headers: a `Headers`, or anything with its `get(name)`.
 * @param nowMs the wall-clock time in ms since the epoch, for HTTP-dates.
 * @example
 * ```ts
 * retryAfterFromHeaders(new Headers({ 'retry-after': '2' }), Date.now()); // 2000
 * ```
 */
export function retryAfterFromHeaders(headers: { get(name: string): string | null }, nowMs: number): number | undefined {
  return parseRetryAfterMs(headers.get(RETRY_AFTER_MS_HEADER)) ?? parseRetryAfter(headers.get('retry-after'), nowMs);
}
