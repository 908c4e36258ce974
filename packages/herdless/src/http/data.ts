/**
 * Classification as data for HTTP: which requests may be sent again, which responses call for it,
 * and the header names the fetch adapter reads and writes. Extend or replace the lists with the
 * `retryMethods` and `retryStatuses` options of `withRetry()`.
 */

import { RETRYABLE_HTTP_STATUSES } from '../core/classify/data.js';

/**
 * Methods retried by default: the idempotent methods of RFC 9110 §9.2.2 — sending the request
 * twice has the same effect on the server as sending it once.
 *
 * | method | why it is safe to repeat |
 * |---|---|
 * | `GET`, `HEAD`, `OPTIONS`, `TRACE` | safe methods: read-only by definition (RFC 9110 §9.2.1) |
 * | `PUT` | replaces the target's state with the body: the second PUT writes the same state |
 * | `DELETE` | the target is gone after one or after two |
 *
 * `POST` and `PATCH` are not idempotent: a retry may apply the side effect twice. They (and any
 * method not listed) are retried only when the request carries an `Idempotency-Key` header, or when
 * `idempotencyKey: true` adds one (IETF httpapi draft "The Idempotency-Key HTTP Header Field").
 *
 * @example
 * ```ts
 * withRetry(fetch, { retryMethods: [...RETRYABLE_HTTP_METHODS, 'QUERY'] });
 * ```
 */
export const RETRYABLE_HTTP_METHODS: readonly string[] = /* @__PURE__ */ Object.freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/**
 * Response statuses retried by default: 408, 429, 500, 502, 503, 504 — the same list `retry()`
 * reads from an error's `status` (see `RETRYABLE_HTTP_STATUSES`), as a response.
 *
 * @example
 * ```ts
 * withRetry(fetch, { retryStatuses: DEFAULT_RETRY_STATUSES.filter((s) => s !== 500) });
 * ```
 */
export const DEFAULT_RETRY_STATUSES: readonly number[] = RETRYABLE_HTTP_STATUSES;

/**
 * The two statuses where RFC 9110 and RFC 6585 define `Retry-After` as "try again after this long":
 * 429 Too Many Requests (RFC 6585 §4) and 503 Service Unavailable (RFC 9110 §15.6.4).
 *
 * @deprecated `withRetry()` now honours `Retry-After` (and `retry-after-ms`) on every status it
 *   retries (RFC 9110 §10.2.3 lets any response carry it), so this list no longer decides anything;
 *   it stays exported for code that reads it.
 * @example
 * ```ts
 * RETRY_AFTER_STATUSES.includes(503); // true
 * ```
 */
export const RETRY_AFTER_STATUSES: readonly number[] = /* @__PURE__ */ Object.freeze([429, 503]);

/**
 * `Idempotency-Key` (lower-cased, as `Headers` reports names): a request carrying it may be retried
 * whatever its method, because the server promises to apply it once per key (IETF httpapi draft
 * "The Idempotency-Key HTTP Header Field").
 *
 * @example
 * ```ts
 * await fetchWithRetry(url, { method: 'POST', body, headers: { [IDEMPOTENCY_KEY_HEADER]: orderId } });
 * ```
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

// The headers the client and the server side speak to each other are core/wire.ts: herdless/server
// reads and writes them too, and shares no code with this adapter.
export { RETRY_AFTER_MS_HEADER, DO_NOT_RETRY_HEADER, ATTEMPT_HEADER } from '../core/wire.js';
