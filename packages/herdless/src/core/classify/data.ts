/**
 * Classification as data: the failures `retry()` retries by default. Each list says which failures
 * are *transient* — likely to succeed if the same request is sent again a little later. Everything
 * not listed is fatal by default. Extend or replace the decision with the `retryable` option.
 */

/**
 * Error `code`s of transient network failures (Node.js system errors and undici errors). Retried by
 * default, on the error itself, on the `cause` of a `TypeError` (`fetch()` rejects with
 * `TypeError('fetch failed')` whose `cause` holds the socket error), and on the members of an
 * `AggregateError` (Node reports one per address tried when a connection fails).
 *
 * | code | meaning |
 * |---|---|
 * | `ECONNRESET` | the peer closed the connection mid-request (a restart, an idle-timeout race) |
 * | `ECONNREFUSED` | nothing listens yet (a restarting server) |
 * | `ECONNABORTED` | the connection was aborted locally by the network stack |
 * | `ETIMEDOUT` | connect or socket timeout in the OS or Node |
 * | `EPIPE` | wrote to a connection the peer had closed |
 * | `EAI_AGAIN` | temporary DNS failure ("try again") |
 * | `ENETUNREACH`, `EHOSTUNREACH`, `ENETDOWN`, `EHOSTDOWN` | a route or host is down for now |
 * | `UND_ERR_SOCKET` | undici: the socket failed or closed unexpectedly |
 * | `UND_ERR_CONNECT_TIMEOUT` | undici: connecting took too long |
 *
 * Not listed on purpose: `ENOTFOUND` (the name does not exist — usually a configuration error, not
 * a blip; `EAI_AGAIN` is the transient DNS case) and undici's headers/body timeouts (the server may
 * be processing the request; retry those explicitly when the call is idempotent).
 *
 * @example
 * ```ts
 * RETRYABLE_ERROR_CODES.includes('ECONNRESET'); // true
 * ```
 */
export const RETRYABLE_ERROR_CODES: readonly string[] = /* @__PURE__ */ Object.freeze([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * HTTP status codes retried by default, read from an error's `status`, `statusCode`,
 * `response.status` or `response.statusCode`:
 *
 * | status | why it is transient |
 * |---|---|
 * | 408 Request Timeout | the server gave up waiting for the request; resending may work |
 * | 429 Too Many Requests | rate limited; usually comes with `Retry-After` |
 * | 500 Internal Server Error | a server fault that may not repeat |
 * | 502 Bad Gateway | an upstream failed or restarted |
 * | 503 Service Unavailable | overload or maintenance; usually comes with `Retry-After` |
 * | 504 Gateway Timeout | an upstream was too slow this time |
 *
 * Other 4xx statuses (400, 401, 403, 404, 409, 422…) say the request itself is wrong; resending it
 * unchanged cannot succeed (Amazon Builders' Library, "Timeouts, retries, and backoff with jitter").
 * Source for the semantics: RFC 9110 §15.
 *
 * @example
 * ```ts
 * // retry 409 Conflict too, on top of these:
 * retry(op, { retryable: (e, { transient }) => transient || (e as { status?: number }).status === 409 });
 * ```
 */
export const RETRYABLE_HTTP_STATUSES: readonly number[] = /* @__PURE__ */ Object.freeze([408, 429, 500, 502, 503, 504]);

/**
 * gRPC status codes retried by default: only `UNAVAILABLE` (14), the status the gRPC docs call
 * transient and the one gRFC A6's example `retryableStatusCodes` lists. It is recognised as the
 * string `'UNAVAILABLE'` in `code`, or as the number 14 in `code` on an error that looks like a gRPC
 * error (it has `details` or `metadata`, as `@grpc/grpc-js` errors do, or is named `ConnectError`) —
 * other libraries use a numeric `code` 14 for unrelated things.
 *
 * @example
 * ```ts
 * isTransientError(Object.assign(new Error('14 UNAVAILABLE'), { code: 14, details: '', metadata: {} })); // true
 * ```
 */
export const RETRYABLE_GRPC_CODES: readonly string[] = /* @__PURE__ */ Object.freeze(['UNAVAILABLE']);

/** @internal gRPC's numeric code for UNAVAILABLE. */
export const GRPC_UNAVAILABLE = 14;

/** @internal gRPC's numeric status code RESOURCE_EXHAUSTED (a throttling answer). */
export const GRPC_RESOURCE_EXHAUSTED = 8;
