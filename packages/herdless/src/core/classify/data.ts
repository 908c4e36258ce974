/**
 * Classification as data: the failures `retry()` retries by default. Each list says which failures
 * are *transient* — likely to succeed if the same request is sent again a little later. Everything
 * not listed is fatal by default. Extend or replace the decision with the `retryable` option.
 */

/**
 * Error `code`s of transient network failures (Node.js system errors and undici errors; Bun uses the
 * same names). Retried by default, on the error itself (Bun's `fetch()` rejects with a `TypeError`
 * that carries the code), on the `cause` of a `TypeError` (Node's `fetch()` rejects with
 * `TypeError('fetch failed')` whose `cause` holds the socket error), and on the members of an
 * `AggregateError` (Node reports one per address tried when a connection fails). Runtimes that give
 * no code are recognised by message instead: {@link NETWORK_ERROR_MESSAGES}.
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
 * Messages of the `TypeError` a `fetch()` rejects with when the connection failed, in runtimes that
 * give no error `code` — browsers, Deno, Cloudflare Workers. The Fetch standard makes every such
 * failure one opaque "network error" (a `TypeError`) and hides its reason from scripts, so the
 * message is all there is to recognise. A `TypeError` whose message, or whose `cause`'s message (up
 * to three levels), is one of these (or starts with one of {@link NETWORK_ERROR_MESSAGE_PREFIXES}) is
 * retried by default — unless the error or a `cause` carries a `code`: then the code decides
 * ({@link RETRYABLE_ERROR_CODES}), as in Node.js (`TypeError('fetch failed')` with the socket error
 * as `cause`) and Bun (the code on the `TypeError` itself).
 *
 * | message | runtime | source |
 * |---|---|---|
 * | `Failed to fetch` | Chrome, Edge, Opera | Blink `fetch_manager.cc` |
 * | `network error` | Chrome: the body failed after the headers | Blink `body_stream_buffer.cc` |
 * | `NetworkError when attempting to fetch resource.` | Firefox | Gecko `dom/fetch`, `NS_ERROR_DOM_NETWORK_ERR` |
 * | `Load failed` | Safari 17+ | WebKit `FetchResponse` |
 * | `The Internet connection appears to be offline.` | Safari 16 and older | Apple `NSURLErrorNotConnectedToInternet` |
 * | `The network connection was lost.` | Safari 16 and older | Apple `NSURLErrorNetworkConnectionLost` |
 * | `Network connection lost.`, `Network connection lost` | Cloudflare Workers | workerd |
 * | `Network request failed` | React Native, `whatwg-fetch`, `cross-fetch` | the `whatwg-fetch` polyfill |
 *
 * The wordings follow the list `is-network-error` keeps (the one p-retry uses), checked against
 * the runtimes CI runs (chromium, Deno, Bun, Node).
 *
 * A failed CORS check is the same `TypeError` with the same message — browsers hide on purpose which
 * of the two happened — so it is retried too: a CORS mistake shows on the first load in development,
 * while a dropped connection, a DNS blip or a lost Wi-Fi is the common failure in production, and the
 * attempt cap bounds what a mistake costs. The same holds for a request the page's
 * Content-Security-Policy or mixed-content rules block. Without a code, a name that does not resolve is retried
 * too (Node's `ENOTFOUND` is not). To stop retrying connection failures, pass
 * `retryable: (e, { transient }) => transient && !(e instanceof TypeError)`.
 *
 * @example
 * ```ts
 * NETWORK_ERROR_MESSAGES.includes('Failed to fetch'); // true
 * isTransientError(new TypeError('Failed to fetch')); // true
 * ```
 */
export const NETWORK_ERROR_MESSAGES: readonly string[] = /* @__PURE__ */ Object.freeze([
  'Failed to fetch',
  'network error',
  'NetworkError when attempting to fetch resource.',
  'Load failed',
  'The Internet connection appears to be offline.',
  'The network connection was lost.',
  'Network connection lost.',
  'Network connection lost',
  'Network request failed',
]);

/**
 * Starts of failed-connection messages whose rest names the URL or the host; see
 * {@link NETWORK_ERROR_MESSAGES} for the rule.
 *
 * | prefix | runtime | source |
 * |---|---|---|
 * | `Failed to fetch (` | Chrome, with the host | Blink `fetch_manager.cc` |
 * | `Load failed (` | Safari 17+, with the host | WebKit `FetchResponse` |
 * | `error sending request ` | Deno: `error sending request for url (…)` for a failed connect, `error sending request from <local address> for <url>` for a dropped one; on the `TypeError` (older Deno) or its `cause` (Deno 2.9) | Deno `ext/fetch` (hyper client errors) |
 *
 * `is-network-error` matches Deno's `error sending request for url` only, which misses the dropped
 * connection's wording.
 *
 * @example
 * ```ts
 * isTransientError(new TypeError('Load failed (api.example.com)')); // true
 * ```
 */
export const NETWORK_ERROR_MESSAGE_PREFIXES: readonly string[] = /* @__PURE__ */ Object.freeze(['Failed to fetch (', 'Load failed (', 'error sending request ']);

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
