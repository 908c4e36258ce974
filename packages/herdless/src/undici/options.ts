import type { HttpRequestRetryOptions, HttpRetryOptions } from '../http/options.js';

/**
 * A response head as the undici interceptor sees it: what `onRetry`'s `error.response` and
 * `onGiveUp`'s `response` carry.
 * @example
 * ```ts
 * const head: UndiciResponseHead = { status: 503, statusText: 'Service Unavailable', headers: { 'retry-after': '1' } };
 * ```
 */
export interface UndiciResponseHead {
  readonly status: number;
  readonly statusText: string;
  /** Lower-cased names, as undici reports them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Options of {@link retryInterceptor}: exactly those of `withRetry()` (`maxAttempts`, `backoff`,
 * `budget`, `retryMethods`, `retryStatuses`, `idempotencyKey`, `attemptTimeoutMs`, `deadlineMs`,
 * `telemetry`…), with the hooks' `response` being the {@link UndiciResponseHead}.
 * @example
 * ```ts
 * const options: UndiciRetryOptions = { maxAttempts: 4, idempotencyKey: true };
 * ```
 */
export type UndiciRetryOptions = HttpRetryOptions<UndiciResponseHead>;

/**
 * One request's options over the interceptor's, given as `retryOptions` in the dispatch options
 * (the key undici's own retry interceptor reads): `maxAttempts`, `backoff`, `maxRetryAfterMs`,
 * `deadlineMs`, `attemptTimeoutMs`, `ignoreHints`, `idempotencyKey`, `beforeAttempt`. Checked per
 * request; an invalid value fails that request with an `InvalidOptionError` naming the field.
 * @example
 * ```ts
 * await request(url, { dispatcher, retryOptions: { maxAttempts: 1 } } as Parameters<typeof request>[1]);
 * ```
 */
export type UndiciRequestRetryOptions = HttpRequestRetryOptions;
