/**
 * Server hints: what a failure may say about the next retry. Two forms exist — "retry after N ms"
 * (HTTP `Retry-After`, RFC 9110 §10.2.3; gRPC pushback, gRFC A6) and "do not retry" (gRPC's
 * negative pushback; the SRE book's "overloaded; don't retry" answer). Both are read from the error
 * itself, so any layer (an HTTP adapter, an inner `retry()`, your own code) can set them.
 */

/**
 * The key of the "do not retry" mark. It is a `Symbol.for` key, so the mark set by one copy of
 * herdless is seen by every other copy in the process.
 *
 * @example
 * ```ts
 * (error as Record<symbol, unknown>)[DO_NOT_RETRY] === true; // what isDoNotRetry(error) checks
 * ```
 */
export const DO_NOT_RETRY: unique symbol = Symbol.for('herdless.doNotRetry') as never;

/**
 * Marks `error` as "do not retry": any `retry()` that sees it ends the call at once with reason
 * `'do-not-retry'`, whatever its classification or retry budget says. Use it for a failure that
 * says "overloaded; don't retry" (Google SRE book, "Handling Overload"): the layer that got the
 * overload answer retries, the layers above it do not, so attempts are not multiplied per layer.
 *
 * The mark is a non-enumerable property keyed by {@link DO_NOT_RETRY}; it does not change the
 * error's message, class or JSON form. Every `RetryError` carries it already.
 *
 * @param error an object (normally an `Error`); it is returned, marked.
 * @throws TypeError when `error` is not an object, or is frozen.
 * @example
 * ```ts
 * if (response.status === 503 && response.headers.get('x-overloaded')) {
 *   throw markDoNotRetry(new Error('backend overloaded'));
 * }
 * ```
 */
export function markDoNotRetry<E extends object>(error: E): E {
  if ((typeof error !== 'object' && typeof error !== 'function') || error === null) {
    throw new TypeError(`markDoNotRetry: error must be an object, got ${String(error)}`);
  }
  Object.defineProperty(error, DO_NOT_RETRY, { value: true, configurable: true });
  return error;
}

/**
 * True when `error` carries the "do not retry" mark ({@link markDoNotRetry}, or a `RetryError` from
 * any copy of herdless).
 *
 * @example
 * ```ts
 * isDoNotRetry(markDoNotRetry(new Error('overloaded'))); // true
 * ```
 */
export function isDoNotRetry(error: unknown): boolean {
  return (
    ((typeof error === 'object' && error !== null) || typeof error === 'function') &&
    (error as { [DO_NOT_RETRY]?: unknown })[DO_NOT_RETRY] === true
  );
}

/**
 * True when `value` says "a herdless layer already retried this and gave up": the one test every
 * herdless layer (`retry()`, `withRetry()`, the server module, the client adapters) applies before
 * retrying, so that layers never multiply attempts. It is true for:
 * - a failure carrying the "do not retry" mark ({@link isDoNotRetry}): every `RetryError`, a
 *   `CircuitOpenError`, anything passed to {@link markDoNotRetry};
 * - a `Response` (or any response object an adapter marks with {@link markDoNotRetry}) that
 *   `withRetry()` returned after giving up — a 503 after its last attempt, a 429 whose
 *   `Retry-After` was too long, a response carrying `X-Herdless-Retry: no` — see
 *   `retryInfo(response).reason`;
 * - an error whose `response` or `cause` is one of those (one level deep): what
 *   `throwIfNotOk(response)` throws, `new Error('…', { cause: retryError })`, an error built by
 *   hand around such a response.
 *
 * @param value a response, an error or anything else (then false).
 * @returns whether retrying `value` again would multiply attempts already made.
 * @example
 * ```ts
 * const res = await api(url); // withRetry(fetch, { maxAttempts: 3 })
 * if (isGivenUp(res)) return res; // already retried 3 times (or told not to): do not retry again
 * ```
 */
export function isGivenUp(value: unknown): boolean {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return false;
  if ((value as { [DO_NOT_RETRY]?: unknown })[DO_NOT_RETRY] === true) return true;
  const { response, cause } = value as { response?: unknown; cause?: unknown };
  return isDoNotRetry(response) || isDoNotRetry(cause);
}

/**
 * What a failure says about the next retry:
 * - `undefined`: nothing; the backoff decides the wait;
 * - a number: "retry after this many ms" (≥ 0, finite);
 * - `'do-not-retry'`: end the call now.
 *
 * @example
 * ```ts
 * const hint: ServerHint = serverHint(error); // 2000, 'do-not-retry' or undefined
 * ```
 */
export type ServerHint = number | 'do-not-retry' | undefined;

/**
 * Reads the server hint an error carries:
 * - the "do not retry" mark ({@link isDoNotRetry}) gives `'do-not-retry'`;
 * - a `retryAfterMs` property that is a finite number ≥ 0 gives that number (ms);
 * - a `retryAfterMs` that is present but not such a number (negative, NaN, Infinity, a string…)
 *   gives `'do-not-retry'`: gRFC A6 treats a negative or malformed pushback as "do not retry", so
 *   a garbled hint never turns into an early retry;
 * - anything else gives `undefined`.
 *
 * Parsing an HTTP `Retry-After` header (seconds or an HTTP-date, RFC 9110 §10.2.3) into
 * `retryAfterMs` is the HTTP adapter's job, not this function's.
 *
 * @example
 * ```ts
 * serverHint(Object.assign(new Error('busy'), { status: 503, retryAfterMs: 2000 })); // 2000
 * ```
 */
export function serverHint(error: unknown): ServerHint {
  if ((typeof error !== 'object' || error === null) && typeof error !== 'function') return undefined;
  if ((error as { [DO_NOT_RETRY]?: unknown })[DO_NOT_RETRY] === true) return 'do-not-retry';
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  if (ms === undefined) return undefined;
  return typeof ms === 'number' && ms >= 0 && ms < Infinity ? ms : 'do-not-retry';
}
